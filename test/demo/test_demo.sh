#!/bin/sh
# test_demo.sh - tools/scripts/demo.sh (what `bash tools/run.sh demo` runs) passes, and its banner
# names where the examples ran (issue 39: it said "the default device" while it ran on the host):
# CLOPS_DEVICE=host gives the host backend's banner; CLOPS_DEVICE=N (each OpenCL device
# `clops devices` lists) gives that device's name as `clops devices` lists it (the line
# "  device N: NAME", less " (default)"): not from `clops run --verbose`, which is where the
# banner itself comes from (tools/scripts/demo.sh), so a wrong name there is caught.
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

# Every OpenCL device by index, its name from `clops devices` (the lines "  device N: NAME", the
# default one with " (default)" after the name).
DEVICES=$(mktemp "${TMPDIR:-/tmp}/clops-test-demo-devices.XXXXXX")
trap 'rm -f "$LOG" "$LOG.npy" "$DEVICES"' EXIT
if ! "$CLOPS" devices >"$DEVICES" 2>&1; then
    cp "$DEVICES" "$LOG"
    fail "clops devices exited non-zero"
fi
ndev=0
while IFS= read -r line; do
    [ -n "$line" ] || continue
    i=${line#  device }
    i=${i%%:*}
    name=${line#  device *: }
    name=${name% (default)}
    ndev=$((ndev + 1))
    demo_on "$i" "the DirectML and ONNX examples on OpenCL device '$name'"
done <<EOF
$(grep -E '^  device [0-9]+: ' "$DEVICES" || true)
EOF
[ "$ndev" -gt 0 ] || [ "${CLOPS_REQUIRE_DEVICE:-0}" = 0 ] || fail "no OpenCL device, and CLOPS_REQUIRE_DEVICE=1"

[ "$failed" -eq 0 ] || exit 1
echo "test_demo: passed (host and $ndev OpenCL device(s))"
