#!/usr/bin/env bash
# test_aot.sh CLOPS AOT_COMPILE - the ahead-of-time flow end to end, as an FPGA
# integrator runs it with one program per plan: list the MaxUnpooling programs device 0
# needs and the portable program (which DepthToSpace/SpaceToDepth then run: their
# specialised programs are 784 on PoCL, more than this test builds), write their sources out, build each with a separate program (aot_compile.c, OpenCL
# only, standing in for a vendor's offline compiler), add the binaries to a
# pack in one `pack-add --list` call, import the pack into an empty cache, and
# run a whole `clops conformance --quick` with the compiler disabled: every
# case must pass and every operator must run on the device (no host fallback).
# A control run on an empty cache must fall back, so the assertion is not
# vacuous. Exit 77: no OpenCL device.
set -euo pipefail
clops=$1 aotc=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$clops" devices | grep -q '^  device 0:' || { echo "no OpenCL device: skipped"; exit 77; }

# 1. The programs device 0 needs: MaxUnpooling's specialised ones and the portable program.
"$clops" kernels list --device 0 --ops unpool >"$work/list.txt"
"$clops" kernels list --device 0 --portable | grep -v '^#' >>"$work/list.txt"
n=$(grep -vc '^#' "$work/list.txt")
[ "$n" -gt 1 ] || fail "kernels list named no programs"
grep -q '^portable.cl ' "$work/list.txt" || fail "no portable program listed"
grep -q 'max_unpooling.cl' "$work/list.txt" || fail "no MaxUnpooling program listed"
# What this run builds offline: the portable program, and of MaxUnpooling's (every plan of
# every shape: 2524 on PoCL's CPU device, ~25 min to build) those conformance --quick's cases
# choose: the serial plans (no GATED, no BUCKET), and of the others (its plan-coverage cases,
# tools/conformance/conformance_cover.c: 2x2 windows, 3x3/2/1 pools, the general path) those with
# cells of 2x2 or none; were another needed, step 5 fails (--fallback never). test_cli_kernels
# checks the whole list against built programs.
grep -v '^#' "$work/list.txt" | grep -v -E '^max_unpooling.cl .*-DGATED=1|^max_unpooling.cl .*-DBUCKET=1' \
  >"$work/build-list.txt"
grep '^max_unpooling.cl' "$work/list.txt" | grep -E -- '-DGATED=1|-DBUCKET=1' |
  grep -v -E -- '-D(KH|KW|SH|SW)=([013-9]|[0-9][0-9])' >>"$work/build-list.txt"
n=$(grep -c . "$work/build-list.txt")
grep -q '^max_unpooling.cl .*-DSERIAL_FILLS=1' "$work/build-list.txt" || fail "no serial MaxUnpooling program listed"

# 2. Each source as clops compiles it; its hash must be the listed one.
for src in portable.cl max_unpooling.cl; do
  "$clops" kernels source "$src" >"$work/$src"
done
"$clops" kernels list --device 0 --portable --json >"$work/list.json"
grep -q '"fnv1a64"' "$work/list.json" || fail "--json has no source hashes"

# 3. The offline build: a separate program, from the written sources and listed options;
#    the list of the binaries it writes, for pack-add (SOURCE<TAB>OPTIONS<TAB>BINARY).
i=0
: >"$work/build.txt"
echo "# the binaries of device 0's programs" >"$work/pack.txt"
while read -r src hash opts; do
  [ "$src" = "#" ] && continue
  printf '%s\t%s\t%s\n' "$work/$src" "$work/bin$i" "$opts" >>"$work/build.txt"
  printf '%s\t%s\t%s\n' "$src" "$opts" "$work/bin$i" >>"$work/pack.txt"
  last=("$src" "$opts" "$work/bin$i")
  i=$((i + 1))
done <"$work/build-list.txt"
"$aotc" 0 "$work/build.txt"

# 4. Every binary into one pack in one call, then into an empty cache.
"$clops" kernels pack-add "$work/aot.pak" --device 0 --list "$work/pack.txt" | grep -qx "$work/aot.pak: $n entries" ||
  fail "pack-add --list did not add $n entries"
export CLOPS_CACHE_DIR="$work/cache"
"$clops" cache import "$work/aot.pak" | grep -qx "imported $n of $n entries from $work/aot.pak" || fail "import did not install $n entries"
# Adding a binary again replaces its entry.
"$clops" kernels pack-add "$work/aot.pak" --device 0 --source "${last[0]}" --options "${last[1]}" --binary "${last[2]}" |
  grep -qx "$work/aot.pak: $n entries" || fail "pack-add of the same program again did not replace it"

# 5. The whole conformance pass from the pack alone, without a compiler, with the
#    fallback policy never (an operator that cannot run on the device fails).
export CLOPS_DISABLE=compiler
"$clops" conformance --device 0 --quick --fallback never --json "$work/report.json" >"$work/conformance.txt" 2>&1 ||
  { tail -30 "$work/conformance.txt" >&2; fail "conformance from the pack failed"; }
grep -q '"host_fallback_count":[[:space:]]*0[,}]*$' "$work/report.json" ||
  { grep -A3 '"host_fallbacks"' "$work/report.json" >&2; fail "an operator ran on the host"; }
grep -q '"failed":[[:space:]]*0,*$' "$work/report.json" || fail "conformance report shows failures"
"$clops" cache list | tail -1 | grep -qx "$n entries" || fail "the cache changed: something was compiled"

# 6. Control: the same pass on an empty cache does fall back.
export CLOPS_CACHE_DIR="$work/empty"
"$clops" conformance --device 0 --quick --json "$work/control.json" >/dev/null 2>&1 || fail "control run failed"
grep -q '"host_fallback_count":[[:space:]]*0[,}]*$' "$work/control.json" && fail "control run did not fall back"
"$clops" conformance --device 0 --quick --fallback never >/dev/null 2>&1 &&
  fail "--fallback never passed on an empty cache without a compiler"
echo "test_aot: $n programs built offline; conformance --quick passed with the compiler disabled, no host fallback"
