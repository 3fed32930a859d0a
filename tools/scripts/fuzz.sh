#!/usr/bin/env bash
# tools/scripts/fuzz.sh - builds the libFuzzer targets of test/fuzz (clang, -fsanitize=fuzzer,address,undefined)
# and runs each for a bounded time.
#
#   bash tools/scripts/fuzz.sh                 every target, FUZZ_SECONDS (default 60) each
#   bash tools/scripts/fuzz.sh fuzz_npy ...    only those targets
#
# Environment: FUZZ_SECONDS (default 60), FUZZ_BUILD_DIR (default build-fuzz), JOBS (default nproc).
#
# Each target starts from its committed seeds (test/fuzz/corpus/<target>) plus the corpus earlier
# runs grew in $FUZZ_BUILD_DIR/fuzz-corpus/<target> (the source tree is never written, except:)
# a crash is copied to test/fuzz/regressions/<target>/ so that the <target>_replay ctest test
# replays it from then on; commit it with the fix. Prints executions per target
# (libFuzzer's stat::number_of_executed_units). Exit status: 0 when no target crashed, 1 otherwise.
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$(pwd)
build=${FUZZ_BUILD_DIR:-build-fuzz}
seconds=${FUZZ_SECONDS:-60}
jobs=${JOBS:-$(nproc)}
all_targets=(fuzz_npy fuzz_validate fuzz_cache_entry fuzz_cli_args)
if [ $# -gt 0 ]; then targets=("$@"); else targets=("${all_targets[@]}"); fi

# shellcheck source=tools/scripts/packages.sh
. tools/scripts/packages.sh
need_packages clang libclang-rt-14-dev cmake pkg-config ocl-icd-opencl-dev opencl-headers pocl-opencl-icd check libcjson-dev

CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCLOPS_FUZZ=ON >/dev/null
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
build=$(cd "$build" && pwd)

export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$ROOT/test/lsan.supp:print_suppressions=0"

status=0
summary=()
for t in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$t"
  artifacts="$build/fuzz-artifacts/$t"
  log="$build/fuzz-$t.log"
  rm -rf "$artifacts"
  mkdir -p "$corpus" "$artifacts"
  args=(-max_total_time="$seconds" -print_final_stats=1 -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=1024
        -artifact_prefix="$artifacts/")
  [ -f "test/fuzz/$t.dict" ] && args+=(-dict="$ROOT/test/fuzz/$t.dict")
  [ "$t" = fuzz_cli_args ] && args+=(-close_fd_mask=3) # the CLI's own output, not libFuzzer's
  echo "== $t for $seconds s"
  rc=0
  # From a scratch directory: whatever a target writes by a relative name stays in the build tree.
  work="$build/fuzz-work/$t"
  mkdir -p "$work"
  (cd "$work" && "$build/fuzz/$t" "${args[@]}" "$corpus" "$ROOT/test/fuzz/corpus/$t") >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 | sed 's/cov: //')
  files=$(find "$corpus" -type f | wc -l)
  if [ "$rc" -ne 0 ]; then
    status=1
    mkdir -p "test/fuzz/regressions/$t"
    for a in "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-*; do
      [ -f "$a" ] || continue
      cp "$a" "test/fuzz/regressions/$t/"
      echo "   crash input kept as test/fuzz/regressions/$t/$(basename "$a")"
    done
    echo "   FAILED (exit $rc); the report:"
    grep -E "ERROR|SUMMARY|runtime error|==[0-9]+==|#[0-9]+ 0x" "$log" | head -40 | sed 's/^/   /'
    summary+=("$(printf '%-18s CRASHED  %12s execs  %8s exec/s  cov %6s  corpus %5s  (log %s)' "$t" "${execs:-?}" "${secs:-?}" "${cov:-?}" "$files" "$log")")
  else
    summary+=("$(printf '%-18s ok       %12s execs  %8s exec/s  cov %6s  corpus %5s' "$t" "${execs:-?}" "${secs:-?}" "${cov:-?}" "$files")")
  fi
done

echo
echo "== fuzz summary ($seconds s per target)"
printf '%s\n' "${summary[@]}"
exit $status
