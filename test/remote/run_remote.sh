#!/usr/bin/env bash
# run_remote.sh - clops on PoCL-Remote: two `pocld` on loopback, one device each.
#
#   bash test/remote/run_remote.sh CLOPS_CLI REMOTE_CASES     (ctest's test_remote)
#
# Needs CLOPS_POCL_REMOTE: a PoCL-R install made by `tools/scripts/pocl_remote.sh build`
# (bin/pocld and the remote client). Without it the suite says SKIPPED and exits 77.
# Checks, each bounded by `timeout`:
#   1. the 180 operator cases of remote_cases on the local PoCL CPU device, then
#      on both remote devices at once (two processes), each checked against the
#      host kernels and the three output sets compared byte for byte;
#   2. the specification's examples through the CLI on each remote device;
#   3. one program cache shared by the local and remote runs: the remote runs
#      store their binaries under keys naming the remote device, as many as the
#      local run stored, and leave the local entries alone; a second remote run
#      stores and rewrites none; a CLI run on each side loads its binary from disk;
#   4. `clops conformance --quick` on each remote device, one process each, when the CLI
#      has it, compared with the local run;
#   5. two remote devices in one process: three runs of remote_stress, each 200
#      executions alternating the device and MaxUnpooling/DepthToSpace, every
#      output compared with the host kernels'; no abort, no hang;
#   6. a pocld killed with SIGKILL during a `clops run --timeout` on its device:
#      exit 1 within the deadline, naming the device, no output file.
# The client must be one pocl_remote.sh built: PoCL 6.0's own client corrupts its
# caller's stack (a race on synchronous commands, docs/scaling-out.md), which the
# script patches; it records the patch in PREFIX/share/clops-pocl-remote.txt.
# Without that record the suite says SKIPPED. Any crash is a failure.
# Environment: CLOPS_REMOTE_PORT (default 17710; the servers use 6 ports from it),
# CLOPS_SOURCE_DIR (default: two directories up).
set -uo pipefail

CLI=${1:?usage: run_remote.sh CLOPS_CLI REMOTE_CASES}
CASES=${2:?usage: run_remote.sh CLOPS_CLI REMOTE_CASES}
SRC=${CLOPS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
POCLR=${CLOPS_POCL_REMOTE:-}

if [ -z "$POCLR" ] || [ ! -x "$POCLR/bin/pocld" ] || [ ! -f "$POCLR/etc/OpenCL/vendors/pocl.icd" ]; then
    echo "************************************************************************"
    echo "* SKIPPED: the PoCL-Remote suite needs CLOPS_POCL_REMOTE=/path/to/install"
    echo "*   (got '${POCLR}'). Build one with:"
    echo "*   tools/scripts/pocl_remote.sh build /path/to/pocl-6.0-source /path/to/install"
    echo "************************************************************************"
    exit 77
fi

if ! grep -q '^patched: pocl-6.0-remote-sync-command.patch' "$POCLR/share/clops-pocl-remote.txt" 2>/dev/null; then
    echo "************************************************************************"
    echo "* SKIPPED: $POCLR has no record of the PoCL 6.0 client patch"
    echo "*   ($POCLR/share/clops-pocl-remote.txt): rebuild it with"
    echo "*   tools/scripts/pocl_remote.sh build /path/to/pocl-6.0-source $POCLR"
    echo "************************************************************************"
    exit 77
fi

PORT=${CLOPS_REMOTE_PORT:-17710}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/clops-remote.XXXXXX")
export RUN_DIR="$WORK/run" CLOPS_CACHE_DIR="$WORK/cache"
failures=0

cleanup() {
    bash "$SRC/tools/scripts/pocl_remote.sh" stop "$POCLR" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pass() { echo "PASS: $*"; }
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# ---- the servers, and the environments of the local and the remote runs -------------
bash "$SRC/tools/scripts/pocl_remote.sh" start "$POCLR" "$PORT" $((PORT + 3)) >"$WORK/remote.env" ||
    { echo "FAIL: could not start two pocld on ports $PORT and $((PORT + 3))"; exit 1; }
# The local device: the same PoCL CPU driver the servers use (their vendors dir).
local_env=(env -u POCL_DEVICES OCL_ICD_VENDORS="$RUN_DIR/vendors")
remote_env=(env)
while read -r _ assignment; do
    remote_env+=("$(echo "$assignment" | tr -d '"')")
done <"$WORK/remote.env"

echo "== clops devices on the remote client"
devices=$(timeout 60 "${remote_env[@]}" "$CLI" devices 2>&1)
echo "$devices" | grep -E '^  device|OpenCL version'
if [ "$(echo "$devices" | grep -c '^  device ')" -eq 2 ]; then
    pass "two remote devices listed"
else
    fail "expected two remote devices"
    exit 1
fi

# remote_run LOG EXE COMMAND...: runs COMMAND with its output in LOG; its status.
# (EXE, the program that runs, is named for the reader of the calls.)
remote_run() {
    local log=$1
    shift 2
    "$@" >"$log" 2>&1
}

# ---- 1. operator cases: local, then both remote devices at once -----------------------
# cache_entries: one "FILE INODE local|remote" line per cache entry, by the key's
# device version (PoCL-R's names the server's device after "pocl-remote:").
cache_entries() {
    "$CLI" cache list --json | awk '
        /"file":/ { gsub(/[",]/, "", $2); f = $2 }
        /"key":/ { print f, (index($0, "HSTR: pocl-remote:") ? "remote" : "local") }' | sort |
        while read -r file kind; do
            echo "$file $(find "$CLOPS_CACHE_DIR" -name "$file" -printf '%i') $kind"
        done
}

echo "== operator cases"
mkdir -p "$WORK/local" "$WORK/remote0" "$WORK/remote1"
if timeout 120 "${local_env[@]}" "$CASES" 0 "$WORK/local" >"$WORK/local.log" 2>&1; then
    pass "local: $(tail -n 1 "$WORK/local.log")"
else
    fail "local device: $(grep -m 3 FAIL "$WORK/local.log")"
fi
cache_entries >"$WORK/cache-local.txt"
# cases_report D OUTDIR STATUS: PASS/FAIL lines for the cases on remote device D.
cases_report() {
    local d=$1 out=$2 status=$3 log="$WORK/$(basename "$2").log"
    if [ "$status" -eq 0 ]; then
        pass "remote device $d: $(tail -n 1 "$log")"
    else
        fail "remote device $d (exit $status): $(grep -m 3 FAIL "$log")"
    fi
    if diff -r "$WORK/local" "$out" >"$out.diff" 2>&1; then
        pass "remote device $d: $(ls "$out" | wc -l) outputs identical to the local device's"
    else
        fail "remote device $d: outputs differ from the local device's: $(head -n 3 "$out.diff")"
    fi
}
# Both devices at once (two processes, each connected to both servers).
for d in 0 1; do
    remote_run "$WORK/remote$d.log" "$CASES" timeout 120 "${remote_env[@]}" "$CASES" "$d" "$WORK/remote$d" &
    eval "pid$d=\$!"
done
for d in 0 1; do
    pid_var=pid$d
    wait "${!pid_var}"
    cases_report "$d" "$WORK/remote$d" $?
done
cache_entries >"$WORK/cache-remote.txt"

# ---- 2. the specification's examples through the CLI ---------------------------------
for d in 0 1; do
    if remote_run "$WORK/demo$d.log" "$CLI" timeout 120 "${remote_env[@]}" CLOPS_DEVICE=$d \
        sh "$SRC/tools/scripts/demo.sh" "$(dirname "$(dirname "$CLI")")"; then
        pass "CLI examples on remote device $d: $(tail -n 1 "$WORK/demo$d.log")"
    else
        fail "CLI examples on remote device $d: $(grep -m 3 -E 'FAILED|rror' "$WORK/demo$d.log")"
    fi
done

# ---- 3. one cache, different keys -----------------------------------------------------
# After the local cases every entry is the local device's. The remote runs (the same
# 180 cases, on the same driver behind the servers) add as many under the remote
# device's key (the two remote devices have one identity: one key for both) and
# leave the local entries as they were (same files, same inodes).
n_local=$(grep -c ' local$' "$WORK/cache-local.txt")
n_remote=$(grep -c ' remote$' "$WORK/cache-remote.txt")
if [ "$n_local" -gt 0 ] && [ "$(grep -c ' remote$' "$WORK/cache-local.txt")" -eq 0 ] &&
    [ "$n_remote" -eq "$n_local" ] && [ "$(grep ' local$' "$WORK/cache-remote.txt")" = "$(cat "$WORK/cache-local.txt")" ]; then
    pass "cache: $n_local local entries kept as they were, $n_remote more under the remote device's key"
else
    fail "cache: $n_local local entries first; then $(grep -c ' local$' "$WORK/cache-remote.txt") local" \
        "and $n_remote remote (want the same local entries and as many remote)"
fi
# A second remote run reuses the remote entries: nothing stored, nothing rewritten
# (compared with the cache as the CLI examples left it).
cache_entries >"$WORK/cache-before-again.txt"
mkdir -p "$WORK/remote0-again"
remote_run "$WORK/remote0-again.log" "$CASES" timeout 120 "${remote_env[@]}" "$CASES" 0 "$WORK/remote0-again"
cases_report 0 "$WORK/remote0-again" $?
cache_entries >"$WORK/cache-again.txt"
if cmp -s "$WORK/cache-before-again.txt" "$WORK/cache-again.txt"; then
    pass "cache: a second remote run stored and rewrote no entry (same $(wc -l <"$WORK/cache-again.txt") files, same inodes)"
else
    fail "cache: the second remote run changed the cache: $(diff "$WORK/cache-before-again.txt" "$WORK/cache-again.txt" | head -n 4 | tr '\n' ' ')"
fi
for who in local remote; do
    env_var=${who}_env[@]
    rm -f "$WORK/cache-$who.npy"
    remote_run "$WORK/cache-$who.log" "$CLI" timeout 60 "${!env_var}" "$CLI" run depth-to-space \
        "$SRC/test/data/dml_input_u32.npy" "$WORK/cache-$who.npy" --block-size 2 --device 0 --verbose
    if grep -q 'program: disk cache' "$WORK/cache-$who.log" &&
        cmp -s "$WORK/cache-$who.npy" "$SRC/test/data/dml_d2s_dcr_u32.npy"; then
        pass "cache: the $who device loads its binary from disk and gives the expected bytes"
    else
        fail "cache: $who run: $(grep -E 'program|rror' "$WORK/cache-$who.log")"
    fi
done

# ---- 4. clops conformance, once the CLI has it ----------------------------------------
# The remote run compiles every program the local one did, on the server: the first
# run on a machine (PoCL's own kernel cache cold) takes minutes.
if "$CLI" conformance --help >/dev/null 2>&1; then
    timeout 300 "${local_env[@]}" "$CLI" conformance --device 0 --quick >"$WORK/conf-local.log" 2>&1
    echo "conformance (local device 0): exit $?, $(tail -n 1 "$WORK/conf-local.log")"
    local_passed=$(sed -n 's/^\([0-9]*\) passed, 0 failed$/\1/p' "$WORK/conf-local.log" | tail -n 1)
    for d in 0 1; do
        remote_run "$WORK/conf-remote-$d.log" "$CLI" timeout 1200 "${remote_env[@]}" "$CLI" conformance --device "$d" --quick
        status=$?
        last=$(tail -n 1 "$WORK/conf-remote-$d.log")
        remote_passed=$(sed -n 's/^\([0-9]*\) passed, 0 failed$/\1/p' "$WORK/conf-remote-$d.log" | tail -n 1)
        if [ "$status" -eq 0 ] && [ -n "$local_passed" ] && [ "$remote_passed" = "$local_passed" ]; then
            pass "conformance on remote device $d: $remote_passed passed, none failed (local: $local_passed)"
        else
            fail "conformance on remote device $d: exit $status, '$last' (local: '$(tail -n 1 "$WORK/conf-local.log")')"
        fi
    done
else
    echo "conformance: not in this CLI yet, not run"
fi

# ---- 5. two remote devices in one process ---------------------------------------------
# remote_stress: a context on each remote device, 200 executions alternating the
# device every execution and MaxUnpooling/DepthToSpace every two, each created, run
# and freed as `clops run` does, each output compared with the host kernels'. Three
# runs; PoCL-R 6.0's unpatched client aborted or crashed in 5 of 10 such runs here.
STRESS=$(dirname "$CASES")/remote_stress
for run in 1 2 3; do
    timeout 120 "${remote_env[@]}" "$STRESS" 0 1 200 >"$WORK/stress$run.log" 2>&1
    status=$?
    if [ "$status" -eq 0 ] && grep -q '^200 executions on devices 0 and 1, 0 failed$' "$WORK/stress$run.log"; then
        pass "two remote devices in one process, run $run: $(tail -n 1 "$WORK/stress$run.log")"
    else
        fail "two remote devices in one process, run $run: exit $status (124: hung): $(tail -n 3 "$WORK/stress$run.log" | tr '\n' ' ')"
    fi
done

# ---- 6. a server killed during a run --------------------------------------------------
# A 64 MiB DepthToSpace on remote device 1 with `--timeout DEADLINE`; its pocld gets
# SIGKILL once the client is connected and its program built (the --verbose lines,
# printed after the operator was created, say so), not during the handshake. Asserts
# exit status 1 within the deadline (plus a margin for the process to start), one
# message naming the device, and no output file. HANG_LIMIT stops a run that hangs.
DEADLINE=10
HANG_LIMIT=$((DEADLINE + 20))
big="$WORK/big.npy"
{
    header="{'descr': '|u1', 'fortran_order': False, 'shape': (1, 256, 512, 512), }"
    pad=$((128 - 10 - ${#header} - 1))
    printf '\223NUMPY\001\000\166\000%s%*s\n' "$header" "$pad" ""
    head -c $((256 * 512 * 512)) /dev/zero
} >"$big"
out="$WORK/killed.npy"
server1=$(sed -n 2p "$RUN_DIR/servers" | cut -d' ' -f2)
start=$(date +%s.%N)
timeout -s KILL "$HANG_LIMIT" "${remote_env[@]}" "$CLI" run depth-to-space "$big" "$out" --block-size 2 \
    --device 1 --verbose --timeout "$DEADLINE" >"$WORK/kill.log" 2>&1 &
run_pid=$!
for _ in $(seq 600); do # up to 60 s for the client to connect and build
    grep -q '^clops: kernel:' "$WORK/kill.log" 2>/dev/null && break
    kill -0 "$run_pid" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$run_pid" 2>/dev/null && grep -q '^clops: kernel:' "$WORK/kill.log"; then
    kill -KILL "$server1"
    wait "$run_pid"
    status=$?
    took=$(echo "$(date +%s.%N) - $start" | bc)
    # clops's own error line (PoCL's client prints its socket errors around it).
    message=$(grep -m 1 '^clops: error' "$WORK/kill.log" | cut -c1-300)
    leftovers=$(ls "$WORK" | grep -c '^killed\.npy')
    echo "killed pocld $server1 once connected: clops exit $status after ${took}s: $message"
    if [ "$status" -eq 1 ] && [ "$leftovers" -eq 0 ] && echo "$message" | grep -q 'device "' &&
        [ "$(echo "$took <= $DEADLINE + 5" | bc)" -eq 1 ]; then
        pass "killed server: exit 1 within the ${DEADLINE} s deadline, the device named, no output"
    else
        fail "killed server: exit $status after ${took}s, $leftovers output files, message '$message' (want exit 1 within ${DEADLINE} s naming the device, no output)"
    fi
else
    wait "$run_pid"
    fail "the run ended (exit $?) before it connected and built, or never did: $(tr '\n' ' ' <"$WORK/kill.log" | cut -c1-300)"
fi

echo
if [ "$failures" -eq 0 ]; then
    echo "remote suite: all checks passed"
    exit 0
fi
echo "remote suite: $failures checks failed"
exit 1
