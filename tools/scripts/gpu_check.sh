#!/bin/bash
# tools/scripts/gpu_check.sh - the prepared GPU run of issue 37 (notes/gpu_plans.md, "What remains to
# measure on a GPU"): speed first on a quiet GPU, then correctness, every log under OUT.
#
#   bash .gpu/run.sh bash tools/scripts/gpu_check.sh OUT [BUDGET_S]
#
# On a machine with an NVIDIA GPU, after ../shared/gpu/pack.sh here (the recipe: ../shared/gpu/README.md).
# BUDGET_S (default 480) bounds the whole run: each step gets what is left, a step cut short says so
# in its log, and later steps are skipped with a line in OUT/summary.txt. In order:
#   1. clinfo -l, nvidia-smi                                     -> devices.txt
#   2. clops bench --device 0 --sizes 64M --reps 7 (every row)    -> bench.txt
#   3. peers.py: clops through the C library (--cl ctypes) against PyTorch CUDA on the same tensors
#                                                                -> peers.txt
#   4. the operator suites on the GPU (CLOPS_TEST_DEVICE=NVIDIA)  -> ctest.txt
#   5. clops conformance --device 0 --quick                       -> conformance.txt
# Then compare the model with: python3 ../shared/gpumodel/gpumodel.py table --bench OUT/bench.txt
set -uo pipefail
out=${1:?usage: gpu_check.sh OUT [BUDGET_S]}
budget=${2:-480}
mkdir -p "$out"
start=$(date +%s)
summary="$out/summary.txt"
: >"$summary"

# step NAME LOG COMMAND...: runs COMMAND with what is left of the budget, its output in LOG.
step() {
    local name=$1 log=$2 left rc
    shift 2
    left=$((budget - ($(date +%s) - start)))
    if [ "$left" -lt 20 ]; then
        echo "$name: skipped (budget of ${budget} s spent)" | tee -a "$summary"
        return
    fi
    local t0
    t0=$(date +%s)
    timeout "$left" "$@" >"$log" 2>&1
    rc=$?
    [ "$rc" -eq 124 ] && echo "gpu_check.sh: cut short after ${left} s (budget)" >>"$log"
    echo "$name: exit $rc, $(($(date +%s) - t0)) s ($log)" | tee -a "$summary"
}

step devices "$out/devices.txt" bash -c 'clinfo -l; nvidia-smi || true; build/bin/clops devices'
step bench "$out/bench.txt" build/bin/clops bench --device 0 --sizes 64M --reps 7
step peers "$out/peers.txt" env PYTHONPATH=python CLOPS_LIBRARY=build/libclops.so \
    python3 tools/scripts/peers.py --device 0 --torch-device cuda --cl ctypes --sizes 64M
# Correctness: every operator suite on the GPU (tier 2 included), and the quick conformance run.
step ctest "$out/ctest.txt" env CLOPS_TEST_DEVICE=NVIDIA CLOPS_REQUIRE_DEVICE=1 \
    ctest --test-dir build -R '^test_(ops|unpool|depth_space|limits|device_lost|conformance_kernels)' \
    -E tcase-list -j 8 --output-on-failure
step conformance "$out/conformance.txt" build/bin/clops conformance --device 0 --quick
echo "total: $(($(date +%s) - start)) s" | tee -a "$summary"
