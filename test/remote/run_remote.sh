#!/usr/bin/env bash
# run_remote.sh - clops on PoCL-Remote: two `pocld` on loopback, one device each.
#
#   bash test/remote/run_remote.sh CLOPS_CLI REMOTE_CASES     (ctest's test_remote)
#
# Needs CLOPS_POCL_REMOTE: a PoCL-R install made by `tools/pocl_remote.sh build`
# (bin/pocld and the remote client). Without it the suite says SKIPPED and exits 77.
# Checks, each bounded by `timeout`:
#   1. the 180 operator cases of remote_cases on the local PoCL CPU device, then
#      on both remote devices at once (two processes), each checked against the
#      host kernels and the three output sets compared byte for byte;
#   2. the specification's examples through the CLI on each remote device;
#   3. `clops conformance` on both remote devices, when the CLI has it;
#   4. one program cache shared by the local and remote runs: the remote device's
#      binaries under keys of their own, and each run loads its own from disk;
#   5. a pocld killed with SIGKILL during a `clops run --timeout` on its device:
#      exit 1 within the deadline, naming the device, no output file.
# Environment: CLOPS_REMOTE_PORT (default 17710; the servers use 9 ports from it),
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
    echo "*   tools/pocl_remote.sh build /path/to/pocl-6.0-source /path/to/install"
    echo "************************************************************************"
    exit 77
fi

PORT=${CLOPS_REMOTE_PORT:-17710}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/clops-remote.XXXXXX")
export RUN_DIR="$WORK/run" CLOPS_CACHE_DIR="$WORK/cache"
failures=0

cleanup() {
    bash "$SRC/tools/pocl_remote.sh" stop "$POCLR" 2>/dev/null
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
bash "$SRC/tools/pocl_remote.sh" start "$POCLR" "$PORT" $((PORT + 3)) >"$WORK/remote.env" ||
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

# ---- 1. operator cases: local, then both remote devices at once -----------------------
echo "== operator cases"
mkdir -p "$WORK/local" "$WORK/remote0" "$WORK/remote1"
if timeout 120 "${local_env[@]}" "$CASES" 0 "$WORK/local" >"$WORK/local.log" 2>&1; then
    pass "local: $(tail -n 1 "$WORK/local.log")"
else
    fail "local device: $(grep -m 3 FAIL "$WORK/local.log")"
fi
local_entries=$("${local_env[@]}" "$CLI" cache list | wc -l)
timeout 120 "${remote_env[@]}" "$CASES" 0 "$WORK/remote0" >"$WORK/remote0.log" 2>&1 &
pid0=$!
timeout 120 "${remote_env[@]}" "$CASES" 1 "$WORK/remote1" >"$WORK/remote1.log" 2>&1 &
pid1=$!
for d in 0 1; do
    pid_var=pid$d
    if wait "${!pid_var}"; then
        pass "remote device $d: $(tail -n 1 "$WORK/remote$d.log")"
    else
        fail "remote device $d (exit $?): $(grep -m 3 FAIL "$WORK/remote$d.log")"
    fi
    if diff -r "$WORK/local" "$WORK/remote$d" >"$WORK/diff$d.txt" 2>&1; then
        pass "remote device $d: $(ls "$WORK/remote$d" | wc -l) outputs identical to the local device's"
    else
        fail "remote device $d: outputs differ from the local device's: $(head -n 3 "$WORK/diff$d.txt")"
    fi
done

# ---- 2. the specification's examples through the CLI ---------------------------------
for d in 0 1; do
    if timeout 120 "${remote_env[@]}" CLOPS_DEVICE=$d sh "$SRC/tools/demo.sh" "$(dirname "$(dirname "$CLI")")" \
        >"$WORK/demo$d.log" 2>&1; then
        pass "CLI examples on remote device $d: $(tail -n 1 "$WORK/demo$d.log")"
    else
        fail "CLI examples on remote device $d: $(grep -m 3 -E 'FAILED|rror' "$WORK/demo$d.log")"
    fi
done

# ---- 3. clops conformance, once the CLI has it ----------------------------------------
if "$CLI" conformance --help >/dev/null 2>&1; then
    for where in local remote; do
        env_var=${where}_env[@]
        timeout 300 "${!env_var}" "$CLI" conformance --device all --quick >"$WORK/conf-$where.log" 2>&1
        echo "conformance ($where): exit $?, $(tail -n 1 "$WORK/conf-$where.log")"
    done
    local_line=$(tail -n 1 "$WORK/conf-local.log" | sed 's/^.*: //')
    remote_passed=$(sed -n 's/^\([0-9]*\) passed, 0 failed$/\1/p' "$WORK/conf-remote.log" | tail -n 1)
    local_passed=$(sed -n 's/^\([0-9]*\) passed, 0 failed$/\1/p' "$WORK/conf-local.log" | tail -n 1)
    # --device all on the remote client: the two remote devices and the host.
    if [ -n "$remote_passed" ] && [ -n "$local_passed" ] && [ "$remote_passed" -gt "$local_passed" ]; then
        pass "conformance: local $local_passed passed, remote $remote_passed passed, none failed"
    else
        fail "conformance: local '$local_line', remote '$(tail -n 1 "$WORK/conf-remote.log")'"
    fi
else
    echo "conformance: not in this CLI yet, not run"
fi

# ---- 4. one cache, different keys -----------------------------------------------------
all_entries=$("${remote_env[@]}" "$CLI" cache list | wc -l)
# The two remote devices have one identity (same server driver): one key for both.
if [ "$local_entries" -gt 0 ] && [ "$all_entries" -eq $((2 * local_entries)) ]; then
    pass "cache: $local_entries entries from the local device, as many more under the remote device's key"
else
    fail "cache: $local_entries entries after the local run, $all_entries after the remote runs (want twice)"
fi
for who in local remote; do
    env_var=${who}_env[@]
    rm -f "$WORK/cache-$who.npy"
    timeout 60 "${!env_var}" "$CLI" run depth-to-space "$SRC/test/data/dml_input_u32.npy" "$WORK/cache-$who.npy" \
        --block-size 2 --device 0 --verbose >"$WORK/cache-$who.log" 2>&1
    if grep -q 'program: disk cache' "$WORK/cache-$who.log" &&
        cmp -s "$WORK/cache-$who.npy" "$SRC/test/data/dml_d2s_dcr_u32.npy"; then
        pass "cache: the $who device loads its binary from disk and gives the expected bytes"
    else
        fail "cache: $who run: $(grep -E 'program|rror' "$WORK/cache-$who.log")"
    fi
done

# ---- 5. a server killed during a run --------------------------------------------------
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
    message=$(grep -v '^clops: [a-z ]*:' "$WORK/kill.log"; grep '^clops: error' "$WORK/kill.log")
    message=$(echo "$message" | tr '\n' ' ' | cut -c1-300)
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
