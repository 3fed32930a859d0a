#!/usr/bin/env bash
# tools/scripts/pocl_remote.sh - PoCL-Remote for clops: build the client and server,
# start and stop `pocld` servers on loopback ports, print the environment that
# points clops at them.
#
#   tools/scripts/pocl_remote.sh build SOURCE PREFIX
#       SOURCE: an upstream PoCL source tree or tarball (.tar.gz/.tar.xz/.tar.bz2/.tgz);
#       nothing is downloaded. Copies it to PREFIX/src, builds the remote client
#       and `pocld` without LLVM (about a minute on 2 cores) and installs them in
#       PREFIX. PoCL 6.0 is the tested version, and its client gets the patch
#       pocl-6.0-remote-sync-command.patch (beside this script: without it the
#       client corrupts its caller's stack now and then); another version gets a
#       warning (7.1's client stalled at start-up here). PREFIX/share/
#       clops-pocl-remote.txt records the version and the patch.
#   tools/scripts/pocl_remote.sh start PREFIX PORT...
#       Starts one `pocld` per PORT on 127.0.0.1 (each uses PORT, PORT+1, PORT+2,
#       so space ports by 3 or more), waits until each listens, then prints the
#       environment (the `env` command's output). Each server sees only the CPU
#       device of the ICD in SERVER_ICD.
#   tools/scripts/pocl_remote.sh env PREFIX
#       Prints `export` lines for the running servers: OCL_ICD_VENDORS (the remote
#       client only), POCL_DEVICES ("remote" once per server) and
#       POCL_REMOTEi_PARAMETERS, in the order the servers were started.
#   tools/scripts/pocl_remote.sh stop PREFIX
#       Stops every server `start` started for PREFIX (SIGTERM, then SIGKILL after 5 s)
#       and waits until its port is free.
#
# Environment:
#   SERVER_ICD           the ICD file the servers load (default
#                        /etc/OpenCL/vendors/pocl.icd: Debian's PoCL CPU device)
#   SERVER_POCL_DEVICES  POCL_DEVICES for the servers (default: pthread)
#   RUN_DIR              pid files, logs and the servers' vendors dir
#                        (default: PREFIX/run)
#   JOBS                 parallel build jobs (default: 2)
#
# Why a vendors dir of its own: a `pocld` that also sees a platform without
# devices (Mesa's rusticl without RUSTICL_ENABLE, Clover) answered every buffer
# creation with CL_INVALID_CONTEXT. Exit status: 0 success, 1 failure, 2 usage.
set -euo pipefail

ADDRESS=127.0.0.1
HERE=$(cd "$(dirname "$0")" && pwd)

# usage [STATUS]: prints the header comment; exits 2 (a usage error) unless told.
usage() {
    sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2
    exit "${1:-2}"
}

die() {
    echo "pocl_remote.sh: $*" >&2
    exit 1
}

# listening PORT: true when a TCP socket listens on PORT (IPv4 or IPv6).
listening() {
    local hex
    hex=$(printf '%04X' "$1")
    cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
        awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { found = 1 } END { exit !found }'
}

# is_pocld PID: true when PID is alive and is a pocld.
is_pocld() {
    [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -q 'pocld'
}

cmd_build() {
    [ $# -eq 2 ] || usage
    local source=$1 prefix=$2 tree
    mkdir -p "$prefix"
    prefix=$(cd "$prefix" && pwd)
    # The build works on a copy under PREFIX/src (the patch below changes it).
    rm -rf "$prefix/src"
    mkdir -p "$prefix/src"
    if [ -d "$source" ]; then
        mkdir -p "$prefix/src/pocl"
        (cd "$source" && tar -cf - --exclude=./build --exclude=./.git .) | tar -xf - -C "$prefix/src/pocl"
    elif [ -f "$source" ]; then
        tar -xf "$source" -C "$prefix/src"
    else
        die "$source: no such directory or file"
    fi
    tree=$(find "$prefix/src" -mindepth 1 -maxdepth 2 -name CMakeLists.txt -printf '%h\n' | sort | head -n 1)
    [ -n "$tree" ] && [ -f "$tree/CMakeLists.txt" ] && [ -d "$tree/pocld" ] ||
        die "$source: not a PoCL source tree (no CMakeLists.txt and pocld/)"

    local major minor
    major=$(sed -n 's/^set(MAJOR_VERSION \([0-9]*\)).*/\1/p' "$tree/CMakeLists.txt" | head -n 1)
    minor=$(sed -n 's/^set(MINOR_VERSION \([0-9]*\)).*/\1/p' "$tree/CMakeLists.txt" | head -n 1)
    echo "PoCL ${major:-?}.${minor:-?} from $tree"
    if [ "${major:-}.${minor:-}" != "6.0" ]; then
        echo "warning: clops is tested with PoCL 6.0's remote client; 7.1's stalled at start-up" >&2
    else
        # PoCL 6.0's client writes into a finished synchronous command, which lives
        # on its caller's stack: stack corruption, SIGSEGV or a failed mutex
        # assertion (docs/scaling-out.md). The patch waits for that write.
        patch -d "$tree" -p1 --forward <"$HERE/pocl-6.0-remote-sync-command.patch" ||
            die "the PoCL 6.0 client patch did not apply"
    fi

    # The upstream examples/ tree is not needed (and incomplete in some snapshots).
    cmake -S "$tree" -B "$prefix/build" \
        -DCMAKE_BUILD_TYPE=Release \
        -DENABLE_LLVM=OFF -DENABLE_HOST_CPU_DEVICES=OFF \
        -DENABLE_REMOTE_CLIENT=ON -DENABLE_REMOTE_SERVER=ON \
        -DENABLE_EXAMPLES=OFF -DENABLE_TESTS=OFF -DENABLE_ICD=ON \
        -DCMAKE_INSTALL_PREFIX="$prefix"
    cmake --build "$prefix/build" -j "${JOBS:-2}"
    cmake --install "$prefix/build"
    [ -x "$prefix/bin/pocld" ] || die "the build installed no $prefix/bin/pocld"
    [ -f "$prefix/etc/OpenCL/vendors/pocl.icd" ] || die "the build installed no client ICD file"
    mkdir -p "$prefix/share"
    {
        echo "version: ${major:-?}.${minor:-?}"
        if [ "${major:-}.${minor:-}" = "6.0" ]; then echo "patched: pocl-6.0-remote-sync-command.patch"; fi
    } >"$prefix/share/clops-pocl-remote.txt"
    echo "installed: $prefix/bin/pocld and the remote client ($prefix/etc/OpenCL/vendors/pocl.icd)"
}

# The state of the servers started for PREFIX: RUN_DIR/servers holds one
# "PORT PID" line per server, in start order.
run_dir() {
    echo "${RUN_DIR:-$1/run}"
}

cmd_env() {
    [ $# -eq 1 ] || usage
    local prefix=$1 dir list devices="" i=0 port pid
    dir=$(run_dir "$prefix")
    list="$dir/servers"
    [ -s "$list" ] || die "no servers started for $prefix (no $list)"
    while read -r port pid; do
        devices="$devices${devices:+ }remote"
        echo "export POCL_REMOTE${i}_PARAMETERS=$ADDRESS:$port/0"
        i=$((i + 1))
    done <"$list"
    echo "export POCL_DEVICES=\"$devices\""
    echo "export OCL_ICD_VENDORS=$(cd "$prefix" && pwd)/etc/OpenCL/vendors"
}

cmd_start() {
    [ $# -ge 2 ] || usage
    local prefix=$1 dir icd port pid waited
    shift
    [ -x "$prefix/bin/pocld" ] || die "$prefix/bin/pocld not found; run: $0 build SOURCE $prefix"
    dir=$(run_dir "$prefix")
    icd=${SERVER_ICD:-/etc/OpenCL/vendors/pocl.icd}
    [ -f "$icd" ] || die "$icd: no such ICD file (set SERVER_ICD to PoCL's CPU ICD)"
    mkdir -p "$dir/vendors"
    rm -f "$dir"/vendors/*.icd
    cp "$icd" "$dir/vendors/"
    for port in "$@"; do
        case $port in '' | *[!0-9]*) die "$port: not a port number" ;; esac
        [ "$port" -ge 1024 ] && [ "$port" -le 65533 ] || die "$port: use a port from 1024 to 65533"
        for p in "$port" $((port + 1)) $((port + 2)); do
            listening "$p" && die "port $p is in use (a pocld uses PORT, PORT+1 and PORT+2)"
        done
    done
    for port in "$@"; do
        OCL_ICD_VENDORS="$dir/vendors" POCL_DEVICES="${SERVER_POCL_DEVICES:-pthread}" \
            setsid "$prefix/bin/pocld" -a "$ADDRESS" -p "$port" </dev/null >"$dir/pocld-$port.log" 2>&1 &
        pid=$!
        echo "$port $pid" >>"$dir/servers"
        waited=0
        until listening "$port" && listening $((port + 1)); do
            if ! kill -0 "$pid" 2>/dev/null; then
                cat "$dir/pocld-$port.log" >&2
                die "pocld on port $port exited at start-up (log above)"
            fi
            [ "$waited" -lt 100 ] || die "pocld on port $port did not listen within 10 s ($dir/pocld-$port.log)"
            sleep 0.1
            waited=$((waited + 1))
        done
        echo "pocld $pid serving on $ADDRESS:$port (log: $dir/pocld-$port.log)" >&2
    done
    cmd_env "$prefix"
}

cmd_stop() {
    [ $# -eq 1 ] || usage
    local dir list port pid waited
    dir=$(run_dir "$1")
    list="$dir/servers"
    [ -f "$list" ] || return 0
    while read -r port pid; do
        is_pocld "$pid" || continue
        kill -TERM "$pid" 2>/dev/null || true
        waited=0
        # An exiting pocld loses its cmdline before it closes its sockets.
        while { is_pocld "$pid" || listening "$port" || listening $((port + 1)) || listening $((port + 2)); } &&
            [ "$waited" -lt 50 ]; do
            sleep 0.1
            waited=$((waited + 1))
        done
        if is_pocld "$pid"; then
            kill -KILL "$pid" 2>/dev/null || true
        fi
        echo "stopped pocld $pid (port $port)" >&2
    done <"$list"
    rm -f "$list"
}

[ $# -ge 1 ] || usage
command=$1
shift
case $command in
    build) cmd_build "$@" ;;
    start) cmd_start "$@" ;;
    env) cmd_env "$@" ;;
    stop) cmd_stop "$@" ;;
    -h | --help | help) usage 0 ;;
    *) usage ;;
esac
