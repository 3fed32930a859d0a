#!/usr/bin/env bash
# tools/scripts/sanitize.sh - the whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer,
# then Valgrind memcheck on the host path: the CLI (--device host) on the specification's
# examples and error cases, and the host-only Check suites.
#
#   bash tools/scripts/sanitize.sh            both parts
#   bash tools/scripts/sanitize.sh asan       only the ASan+UBSan ctest run
#   bash tools/scripts/sanitize.sh valgrind   only the Valgrind runs
#
# Environment: ASAN_BUILD_DIR (default build-asan), VALGRIND_BUILD_DIR (default
# build-valgrind), JOBS (default nproc), CTEST_ARGS (extra ctest arguments, e.g. "-R test_faults").
#
# LeakSanitizer runs with test/lsan.supp, which hides only allocations made inside PoCL, LLVM
# and the OpenCL ICD loader (PoCL keeps its compiler state until exit). A leaked cl_* object
# would be hidden too; test_faults counts every OpenCL object clops creates and releases.
# Exit status: 0 when everything is clean, 1 otherwise.
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$(pwd)
mode=${1:-all}
asan_build=${ASAN_BUILD_DIR:-build-asan}
vg_build=${VALGRIND_BUILD_DIR:-build-valgrind}
jobs=${JOBS:-$(nproc)}
status=0

# shellcheck source=tools/scripts/packages.sh
. tools/scripts/packages.sh

# Only PoCL's ICD: other installed implementations (Mesa's rusticl and Clover, which CI installs
# for its conformance step) would be loaded by the ICD loader and bring their own allocations,
# which test/lsan.supp does not cover. PoCL is what these runs check clops on.
pocl_only_vendors() {
  local dir="$ROOT/build-sanitize-icd"
  mkdir -p "$dir"
  rm -f "$dir"/*.icd
  ln -s /etc/OpenCL/vendors/pocl.icd "$dir/pocl.icd"
  export OCL_ICD_VENDORS="$dir"
}

run_asan() {
  need_packages build-essential cmake pkg-config ocl-icd-opencl-dev opencl-headers pocl-opencl-icd check libcjson-dev
  pocl_only_vendors
  cmake -S . -B "$asan_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCLOPS_SANITIZE=address,undefined >/dev/null
  cmake --build "$asan_build" -j "$jobs"
  echo "== ctest under ASan + UBSan ($asan_build)"
  local t0=$SECONDS
  # halt_on_error: the first UBSan report fails the test; detect_leaks: LSan at exit.
  local -a env_vars=(
    "ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1"
    "LSAN_OPTIONS=suppressions=$ROOT/test/lsan.supp:print_suppressions=0"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
    "CLOPS_REQUIRE_DEVICE=1")
  # shellcheck disable=SC2086 # CTEST_ARGS is split on purpose
  if env "${env_vars[@]}" ctest --test-dir "$asan_build" --output-on-failure -j "$jobs" --timeout 1800 ${CTEST_ARGS:-}; then
    echo "== ASan + UBSan: clean ($((SECONDS - t0)) s)"
  else
    echo "== ASan + UBSan: FAILED ($((SECONDS - t0)) s)"
    status=1
  fi
}

# vg NAME WANT CMD...: runs CMD under memcheck; any memcheck error or definite/possible leak,
# or an exit status not in WANT (comma-separated), fails it.
vg_failed=0
vg_runs=0
vg() {
  local name=$1 want=$2
  shift 2
  vg_runs=$((vg_runs + 1))
  local log="$VG_LOGS/$vg_runs.log"
  local rc=0
  valgrind --quiet --error-exitcode=101 --leak-check=full --show-leak-kinds=definite,possible \
    --errors-for-leak-kinds=definite,possible --track-origins=yes --log-file="$log" "$@" \
    >"$VG_LOGS/$vg_runs.out" 2>&1 || rc=$?
  if [ "$rc" -eq 101 ] || [ -s "$log" ]; then
    echo "FAIL (memcheck): $name"
    sed 's/^/    /' "$log" | head -60
    vg_failed=$((vg_failed + 1))
  elif [[ ",$want," != *",$rc,"* ]]; then
    echo "FAIL (exit $rc, want $want): $name"
    sed 's/^/    /' "$VG_LOGS/$vg_runs.out" | tail -20
    vg_failed=$((vg_failed + 1))
  else
    echo "ok   (memcheck clean, exit $rc): $name"
  fi
  return 0
}

run_valgrind() {
  need_packages build-essential cmake pkg-config check valgrind
  pocl_only_vendors
  cmake -S . -B "$vg_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$vg_build" -j "$jobs" --target clops_cli test_validation test_validation_exec test_npy
  VG_LOGS=$(mktemp -d "${TMPDIR:-/tmp}/clops-valgrind.XXXXXX")
  local out
  out=$(mktemp -d "${TMPDIR:-/tmp}/clops-vg-out.XXXXXX")
  # The host path only: no OpenCL platform is even loaded.
  local novendors
  novendors=$(mktemp -d "${TMPDIR:-/tmp}/clops-no-icd.XXXXXX")
  export OCL_ICD_VENDORS="$novendors" CLOPS_DEVICE=host CLOPS_CACHE=off CK_FORK=no
  local cli="$vg_build/bin/clops" data="$ROOT/test/data"
  local t0=$SECONDS
  echo "== Valgrind memcheck: the CLI on the host backend ($vg_build)"
  vg "d2s dcr" 0 "$cli" run depth-to-space "$data/dml_input_u32.npy" "$out/d2s_dcr.npy" --block-size 2 --device host --verbose
  vg "d2s crd" 0 "$cli" run depth-to-space "$data/dml_input_u32.npy" "$out/d2s_crd.npy" --block-size 2 --order crd --device host
  vg "s2d dcr" 0 "$cli" run space-to-depth "$out/d2s_dcr.npy" "$out/s2d_dcr.npy" --block-size 2 --device host
  vg "s2d crd" 0 "$cli" run space-to-depth "$out/d2s_crd.npy" "$out/s2d_crd.npy" --block-size 2 --order crd --device host
  vg "d2s fortran" 0 "$cli" run depth-to-space "$data/dml_input_u32_fortran.npy" "$out/d2s_fortran.npy" --block-size 2 --device host
  vg "onnx dcr" 0 "$cli" run depth-to-space "$data/onnx_input_f32.npy" "$out/onnx_dcr.npy" --block-size 2 --device host
  vg "onnx crd" 0 "$cli" run depth-to-space "$data/onnx_input_f32.npy" "$out/onnx_crd.npy" --block-size 2 --order crd --device host
  vg "unpool i64" 0 "$cli" run max-unpooling "$data/unpool_input_f32.npy" "$data/unpool_indices_i64.npy" "$out/unpool.npy" --output-shape 1,2,4,4 --device host
  vg "unpool u32" 0 "$cli" run max-unpooling "$data/unpool_input_f32.npy" "$data/unpool_indices_u32.npy" "$out/unpool_u32.npy" --output-shape 1,2,4,4 --device host
  vg "print" 0 "$cli" print "$data/onnx_input_f32.npy"
  vg "print a 4-byte file as bfloat16 (exit 1)" 1 "$cli" print "$data/dml_input_u32.npy" --type bfloat16
  vg "unpool bad index (exit 1)" 1 "$cli" run max-unpooling "$data/unpool_input_f32.npy" "$data/unpool_indices_bad_i64.npy" "$out/bad.npy" --output-shape 1,2,4,4 --device host
  vg "d2s bad block (exit 1)" 1 "$cli" run depth-to-space "$data/dml_input_u32.npy" "$out/bad2.npy" --block-size 3 --device host
  vg "missing file (exit 1)" 1 "$cli" run depth-to-space "$out/does-not-exist.npy" "$out/bad3.npy" --block-size 2 --device host
  vg "not a .npy (exit 1)" 1 "$cli" print "$ROOT/README.md"
  vg "usage error (exit 2)" 2 "$cli" run depth-to-space --block-size x
  vg "help" 0 "$cli" --help
  vg "run help" 0 "$cli" run depth-to-space --help
  vg "devices (no platform)" 0 "$cli" devices
  local mismatches=0
  for pair in d2s_dcr:dml_d2s_dcr_u32 d2s_crd:dml_d2s_crd_u32 s2d_dcr:dml_input_u32 s2d_crd:dml_input_u32 \
              d2s_fortran:dml_d2s_dcr_u32 onnx_dcr:onnx_d2s_dcr_f32 onnx_crd:onnx_d2s_crd_f32 unpool:unpool_expected_f32; do
    if ! cmp -s "$out/${pair%%:*}.npy" "$data/${pair##*:}.npy"; then
      echo "FAIL: $out/${pair%%:*}.npy differs from test/data/${pair##*:}.npy"
      mismatches=$((mismatches + 1))
    fi
  done
  for f in bad bad2 bad3; do
    if [ -e "$out/$f.npy" ]; then
      echo "FAIL: a failed run left $out/$f.npy behind"
      mismatches=$((mismatches + 1))
    fi
  done
  echo "== Valgrind memcheck: host-only Check suites (CLOPS_DEVICE=host, no OpenCL platform)"
  export CLOPS_TEST_DATA="$data"
  pushd "$vg_build/test" >/dev/null
  vg "test_validation" 0,77 "$PWD/test_validation"
  vg "test_validation_exec" 0,77 "$PWD/test_validation_exec"
  vg "test_npy" 0,77 "$PWD/test_npy"
  popd >/dev/null
  unset CLOPS_TEST_DATA
  unset OCL_ICD_VENDORS CLOPS_DEVICE CLOPS_CACHE CK_FORK
  rm -rf "$out" "$novendors"
  if [ "$vg_failed" -ne 0 ] || [ "$mismatches" -ne 0 ]; then
    echo "== Valgrind: FAILED: $vg_failed of $vg_runs runs with memcheck errors, $mismatches wrong outputs (logs: $VG_LOGS)"
    status=1
  else
    echo "== Valgrind: clean: $vg_runs runs, outputs identical to test/data ($((SECONDS - t0)) s)"
    rm -rf "$VG_LOGS"
  fi
}

case "$mode" in
  all) run_asan; run_valgrind ;;
  asan) run_asan ;;
  valgrind) run_valgrind ;;
  *) echo "usage: bash tools/scripts/sanitize.sh [all|asan|valgrind]" >&2; exit 2 ;;
esac
exit $status
