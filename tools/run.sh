#!/usr/bin/env bash
# tools/run.sh - set up, build, and run clops on a Debian machine.
#
#   bash tools/run.sh demo   install what is missing, build, run the specification's
#                            examples through the CLI on the default device
#   bash tools/run.sh test   install what is missing, build, run the whole test suite
#                            (ctest, then the Python package's pytest suite)
#
# Environment: BUILD_DIR (default: build), JOBS (default: nproc).
set -euo pipefail

cd "$(dirname "$0")/.."
mode=${1:-demo}
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}

# Debian packages: compiler and CMake, the OpenCL ICD loader and headers, PoCL's
# CPU device, Check, pkg-config to find Check, and cJSON for the conformance report.
# shellcheck source=tools/scripts/packages.sh
. tools/scripts/packages.sh
need_packages build-essential cmake pkg-config ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo check libcjson-dev

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$jobs"

case "$mode" in
  demo)
    bash tools/scripts/demo.sh "$build"
    ;;
  test)
    # Fail rather than skip when no OpenCL device exists: PoCL was installed above.
    # Then the Python package's suite (test/python/run.sh: a venv in $build/venv, pip install .,
    # pytest), after ctest and outside it (see docs/python.md); both run, either failing fails.
    need_packages python3-venv
    status=0
    CLOPS_REQUIRE_DEVICE=1 ctest --test-dir "$build" --output-on-failure -j "$jobs" || status=$?
    CLOPS_REQUIRE_DEVICE=1 bash test/python/run.sh "$build" || status=$?
    exit "$status"
    ;;
  *)
    echo "usage: bash tools/run.sh demo|test" >&2
    exit 2
    ;;
esac
