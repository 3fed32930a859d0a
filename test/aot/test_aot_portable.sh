#!/usr/bin/env bash
# test_aot_portable.sh CLOPS AOT_COMPILE CONFORMANCE [full] - one board image: the portable program
# (kernels/portable.cl) as an FPGA team builds it. List it (`clops kernels list --portable`:
# exactly one program), write its source out, build it offline as OpenCL C 1.2 with a separate
# program (aot_compile.c, standing in for aoc or v++), pack and import it into an empty cache,
# then run `clops conformance` with the compiler disabled and the fallback policy never: every
# case passes on the device from that one binary, nothing is compiled, nothing runs on the host.
# Natively, planned as an accelerator (the board's device type) and as a GPU that ends a work-item after
# 65535 loop iterations (as llvmpipe does): those runs go through CONFORMANCE (conformance_testable,
# `clops conformance` built against clops_testable, which reads CLOPS_TEST_DEVICE_PROFILE; the CLI
# does not), and the GPU one must plan differently from the native one. With `full`, the whole conformance run instead of --quick
# (its tensors past 2^32 elements on the host). Exit 77: no OpenCL device.
set -euo pipefail
clops=$1 aotc=$2 conformance=$3 mode=${4:-quick}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$clops" devices | grep -q '^  device 0:' || { echo "no OpenCL device: skipped"; exit 77; }

# 1. Exactly one program, whatever the operators, types and shapes.
"$clops" kernels list --device 0 --portable >"$work/list.txt"
[ "$(grep -vc '^#' "$work/list.txt")" = 1 ] || fail "kernels list --portable named $(grep -vc '^#' "$work/list.txt") programs"
read -r src hash opts < <(grep -v '^#' "$work/list.txt")
[ "$src" = portable.cl ] || fail "the portable program's source is $src"

# 2. Its source, built offline with the listed options (OpenCL C 1.2).
"$clops" kernels source "$src" >"$work/$src"
printf '%s\t%s\t%s\n' "$work/$src" "$work/portable.bin" "$opts" >"$work/build.txt"
"$aotc" 0 "$work/build.txt"

# 3. One binary into a pack, the pack into an empty cache.
printf '%s\t%s\t%s\n' "$src" "$opts" "$work/portable.bin" >"$work/pack.txt"
"$clops" kernels pack-add "$work/board.pak" --device 0 --list "$work/pack.txt" | grep -qx "$work/board.pak: 1 entry" ||
  fail "pack-add did not add the one binary"
export CLOPS_CACHE_DIR="$work/cache"
"$clops" cache import "$work/board.pak" | grep -qx "imported 1 of 1 entry from $work/board.pak" || fail "import failed"

# 4. Conformance from that binary alone: no compiler, no host fallback, nothing compiled.
# The whole run has tensors past 2^32 elements, which the portable program's 32-bit offsets do not
# take: they run on the host there (--fallback allow); --quick has none, and allows no fallback.
args=(--device 0 --fallback never --quick)
[ "$mode" = full ] && args=(--device 0 --fallback allow)
for profile in "" "accelerator,cu=4,wg=64,local=64" "gpu,cu=24,wg=256,local=64,loops=65535"; do
  CLOPS_DISABLE=compiler CLOPS_TEST_DEVICE_PROFILE=$profile \
    "$conformance" "${args[@]}" --json "$work/report.json" >"$work/conformance.txt" 2>&1 ||
    { tail -30 "$work/conformance.txt" >&2; fail "conformance on the portable program failed (profile '$profile')"; }
  [ "$mode" = full ] || grep -q '"host_fallback_count":[[:space:]]*0[,}]*$' "$work/report.json" ||
    { grep -A3 '"host_fallbacks"' "$work/report.json" >&2; fail "an operator ran on the host (profile '$profile')"; }
  grep -q '"failed":[[:space:]]*0,*$' "$work/report.json" || fail "conformance report shows failures"
  grep -q 'plan: clops_windows_4+clops_mark+clops_place_4' "$work/conformance.txt" ||
    fail "MaxUnpooling did not run the portable program's kernels (profile '$profile')"
  "$clops" cache list | tail -1 | grep -qx "1 entry" || fail "the cache changed: something was compiled"
  grep 'plan:' "$work/conformance.txt" | sort >"$work/plans-${profile%%,*}.txt"
done
# The loop limit leaves out the plans that loop past it (planes): the profile was applied.
! cmp -s "$work/plans-.txt" "$work/plans-gpu.txt" || fail "the GPU profile planned as the native device"
echo "test_aot_portable: one program built offline; conformance ($mode) passed from it with the compiler disabled, no host fallback"
