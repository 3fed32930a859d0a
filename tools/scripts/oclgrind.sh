#!/usr/bin/env bash
# tools/scripts/oclgrind.sh - every clops OpenCL kernel under Oclgrind, the OpenCL device simulator
# that checks each memory access: out-of-bounds reads and writes, data races between
# work-items and work-groups, reads of uninitialised memory, and misuse of the OpenCL API.
#
#   bash tools/scripts/oclgrind.sh
#
# Runs test/oclgrind_driver.c (D2S/S2D: widths 1, 2, 4, 8, 16 x DCR/CRD x blocks 1, 2, 3 x
# packed/NHWC/padded, and the explicit-vector loop and the local-memory tile forced for widths 1,
# 2, 4, 8 x blocks 2, 3, 4, 8, 5 x packed/padded; MaxUnpooling: three index types x packed/strided
# outputs x plain, duplicate and out-of-range indices on the serial plan, and the windows plan
# (indices in their windows, one outside, duplicates, out of range) and general plan on larger
# inputs), on small shapes, with the program cache off so every kernel is built by Oclgrind
# itself, as
#   oclgrind --check-api --data-races --uninitialized --max-errors 100000 oclgrind_driver
# (past Oclgrind's default of 1000 reports it stops reporting, which would hide later cases)
# Fails on any Oclgrind report ("Invalid ...", "... data race ...", "Uninitialized ...",
# an OpenCL runtime error) and on any wrong output.
# Runs it four times: half the cases as Oclgrind's own device (CLOPS_OCLGRIND_SHARE 0/2), the other
# half as a CPU with a loop limit (below); and the cases shared out
# (CLOPS_OCLGRIND_SHARE) between the device profiles of a discrete GPU
# (gpu,cu=132,wg=1024,local=256) and a small integrated one with a loop limit
# (gpu,cu=24,wg=256,local=64,loops=65535), each case under one of the two, the GPU kernels (the
# vector rows, windows' vector form, pool's tile) under both; and half of them as a CPU with a loop
# limit (cpu,loops=65535). Every profile runs the crowded-tile case. Under the GPU profiles the
# 16-byte MaxUnpooling cases run in a pass of their own without --uninitialized (below). Those three lower
# MaxUnpooling's serial-plan limit (serial=256), so that its plan cases run on 400 inputs, not 4,800.
# Before both (2026-11-27), each GPU-profile run took 10-12 minutes: Oclgrind simulates the GPU
# plans' rounded-up work-groups and local-memory tiles item by item (a plan case took ~30 s).
# Environment: OCLGRIND_BUILD_DIR (default build-oclgrind), JOBS, CLOPS_OCLGRIND_QUICK=1 (a
# smoke run: one layout per width and order).
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$(pwd)
build=${OCLGRIND_BUILD_DIR:-build-oclgrind}
jobs=${JOBS:-$(nproc)}

# shellcheck source=tools/scripts/packages.sh
. tools/scripts/packages.sh
need_packages build-essential cmake pkg-config ocl-icd-opencl-dev opencl-headers check oclgrind libcjson-dev

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$jobs" --target clops_testable
build_abs=$(cd "$build" && pwd)
# Linked with the static clops_testable, the driver also forces chunk lengths (CLOPS_DRIVER_FORCED).
cc -std=c11 -O1 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla \
  -DCL_TARGET_OPENCL_VERSION=120 -DCLOPS_TEST_HOOKS -DCLOPS_DRIVER_FORCED -I "$ROOT/include" -I "$ROOT/lib" \
  test/oclgrind_driver.c "$build_abs/libclops_testable.a" -lOpenCL -lpthread -o "$build_abs/oclgrind_driver"

# One run of the driver under Oclgrind as itself (profile "") or planning as another device
# (CLOPS_TEST_DEVICE_PROFILE, lib/cl/profile.c): the plans, local sizes and work-item counts a
# GPU takes, checked access by access.
# KEEP/SKIP (optional): only the cases whose label holds KEEP, without --uninitialized; or every
# case but those whose label holds SKIP (oclgrind_driver.c's CLOPS_OCLGRIND_KEEP/_SKIP).
run_profile() {
local profile=$1 name=$2 share=${3:-} keep=${4:-} skip=${5:-}
local log="$build_abs/oclgrind-$name.log" uninit=--uninitialized
[ -z "$keep" ] || uninit=
echo "== oclgrind --check-api --data-races $uninit oclgrind_driver, profile ${profile:-none}${share:+, share $share}${keep:+, only \"$keep\"}${skip:+, not \"$skip\"} (log: $log)"
local t0=$SECONDS rc=0 summary real
# -cl-opt-disable: Oclgrind 21.10's uninitialized-value checker aborts on LLVM's `freeze`
# instruction, which its optimiser emits ("Unsupported instruction: freeze").
env -u CLOPS_DEVICE CLOPS_TEST_DEVICE_PROFILE="$profile" CLOPS_OCLGRIND_SHARE="$share" CLOPS_OCLGRIND_KEEP="$keep" \
  CLOPS_OCLGRIND_SKIP="$skip" OCLGRIND_BUILD_OPTIONS=-cl-opt-disable CLOPS_OCLGRIND_VERBOSE=1 CLOPS_CACHE=off CLOPS_TUNE=off \
  oclgrind --check-api --data-races ${uninit:+"$uninit"} --max-errors 100000 "$build_abs/oclgrind_driver" >"$log" 2>&1 || rc=$?
# Each report is charged to the driver case running when it appeared ("case: ..." lines).
# Every report counts: no kernel races by design any more (MaxUnpooling's general path, bucket
# and tiles, writes each output tile from one work-item, where the claim and mark kernels it
# replaced wrote duplicate indices' elements from several).
summary=$(awk '
  /^case: / { c = substr($0, 7); next }
  /^Controlflow depends on uninitiali|^Uninitiali[sz]ed value/ { kind = "uninitialised"; pending = 1; next }
  /^Invalid (read|write)/ { kind = "invalid access"; pending = 1; next }
  /[Dd]ata race/ { kind = "data race"; pending = 1; next }
  /runtime error|error detected|FATAL/ {  # API misuse (--check-api) and Oclgrind failures: no Kernel: line
    real++
    if (!(c in seen)) { seen[c] = 1; print "REPORT: " $0 " (" c ")" }
    next
  }
  pending && /Kernel:/ {
    real++
    if (!(c in seen)) { seen[c] = 1; print "REPORT: " kind " in kernel " $2 " (" c ")" }
    pending = 0
  }
  END { printf "counts %d\n", real + 0 }' "$log")
real=$(echo "$summary" | sed -n 's/^counts //p')
echo "$summary" | grep '^REPORT' | head -20 || true
grep -E "^oclgrind_driver:|^FAIL" "$log" || true
echo "   Oclgrind reports: $real"
if [ "$rc" -ne 0 ] || [ "$real" -ne 0 ]; then
  echo "== Oclgrind: FAILED (driver exit $rc, $real reports, $((SECONDS - t0)) s); log: $log"
  return 1
fi
echo "== Oclgrind: clean, profile ${profile:-none} ($((SECONDS - t0)) s)"
}

# As itself (a CPU-type device), as a discrete GPU and as a small integrated GPU.
status=0
run_profile "" native 0/2 || status=1
# serial=256: MaxUnpooling's plan cases on 400 inputs instead of 4,800 (oclgrind_driver.c plan_rows).
# Under GPU profiles pool's tile kernel runs for wide elements too, and Oclgrind 21.10 crashes
# (segmentation fault in its uninitialised-value checker) in it with 8- and 16-byte elements: the
# 16-byte MaxUnpooling cases run in a second pass without --uninitialized (bounds, races and the
# API still checked; the driver has no 8-byte plan cases).
wide="MaxUnpooling 16-byte"
run_profile "gpu,cu=132,wg=1024,local=256,serial=256" gpu-discrete 0/2 "" "$wide" || status=1
run_profile "gpu,cu=132,wg=1024,local=256,serial=256" gpu-discrete-wide 0/2 "$wide" || status=1
run_profile "gpu,cu=24,wg=256,local=64,loops=65535,serial=256" gpu-integrated 1/2 "" "$wide" || status=1
run_profile "gpu,cu=24,wg=256,local=64,loops=65535,serial=256" gpu-integrated-wide 1/2 "$wide" || status=1
# A CPU with llvmpipe's loop limit: bucket and tiles with the crowded tile handed to mark and place.
run_profile "cpu,loops=65535,serial=256" cpu-loop-limit 1/2 || status=1
exit "$status"
