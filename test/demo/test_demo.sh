#!/bin/sh
# test_demo.sh - tools/scripts/demo.sh (what `bash tools/run.sh demo` runs) passes, and its banner
# names where the examples ran (issue 39: it said "the default device" while it ran on the host):
# CLOPS_DEVICE=host gives the host backend's banner; CLOPS_DEVICE=N (each OpenCL device
# `clops devices` lists) gives that device's name, as `clops run --verbose` reports it.
#
#   test_demo.sh BUILD_DIR
set -eu
BUILD=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CLOPS="$BUILD/bin/clops"
LOG=$(mktemp "${TMPDIR:-/tmp}/clops-test-demo.XXXXXX")
trap 'rm -f "$LOG" "$LOG.npy"' EXIT
failed=0

fail() {
    echo "FAIL: $*"
    sed 's/^/  | /' "$LOG"
    failed=$((failed + 1))
}

# demo_on DEVICE EXPECTED_BANNER: the demo with CLOPS_DEVICE=DEVICE exits 0, says all its examples
# match, and its banner line is EXPECTED_BANNER.
demo_on() {
    before=$failed
    if ! CLOPS_DEVICE=$1 sh "$ROOT/tools/scripts/demo.sh" "$BUILD" >"$LOG" 2>&1; then
        fail "demo.sh with CLOPS_DEVICE=$1 exited non-zero"
        return
    fi
    grep -q '^demo: all [0-9]* examples match the expected outputs$' "$LOG" ||
        fail "CLOPS_DEVICE=$1: no 'all examples match' line"
    banner=$(sed -n 's/^clops demo: //p' "$LOG")
    [ "$banner" = "$2" ] || fail "CLOPS_DEVICE=$1: banner '$banner', expected '$2'"
    [ "$failed" -ne "$before" ] || echo "ok: CLOPS_DEVICE=$1: $banner"
}

demo_on host "the DirectML and ONNX examples on the host backend (its C kernels)"

# Every OpenCL device by index, its name from `clops devices` (the lines "  [N] NAME ...").
ndev=0
for i in 0 1 2 3 4 5 6 7; do
    name=$("$CLOPS" run depth-to-space "$ROOT/test/data/dml_input_u32.npy" "$LOG.npy" --block-size 2 \
        --device "$i" --verbose 2>&1 >/dev/null | sed -n 's/^clops: device: //p') || true
    [ -n "$name" ] || break
    ndev=$((ndev + 1))
    demo_on "$i" "the DirectML and ONNX examples on OpenCL device '$name'"
done
[ "$ndev" -gt 0 ] || [ "${CLOPS_REQUIRE_DEVICE:-0}" = 0 ] || fail "no OpenCL device, and CLOPS_REQUIRE_DEVICE=1"

[ "$failed" -eq 0 ] || exit 1
echo "test_demo: passed (host and $ndev OpenCL device(s))"
