#!/usr/bin/env bash
# test/python/run.sh [BUILD_DIR] - the Python suite, as `bash tools/run.sh test` runs it after ctest:
# a fresh virtual environment in BUILD_DIR/venv (default build/venv), `pip install .` into it (the
# wheel builds libclops with the project's CMake, in a temporary directory: nothing is reused), pytest
# and pyopencl from PyPI (pyopencl is optional: its tests skip without it, except under
# CLOPS_REQUIRE_DEVICE=1 (CI), where a failed install fails the run; PyTorch is not installed here,
# too big, so its comparisons skip), then pytest over test/python. PYTHON names the interpreter
# (default python3). Prints how long each step took. Exit status: pytest's, and 1 if it collected nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
venv=$build/venv
python=${PYTHON:-python3}

# The wheel's CMake build on every core (scikit-build-core builds serially otherwise).
export CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-$(nproc)}
t=$SECONDS
"$python" -m venv --clear "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check . pytest
echo "python: venv and pip install . (library build included) took $((SECONDS - t)) s"
t=$SECONDS
if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check pyopencl; then
  if [ "${CLOPS_REQUIRE_DEVICE:-}" = 1 ]; then  # CI: the pyopencl path must run, not skip
    echo "python: pip install pyopencl failed and CLOPS_REQUIRE_DEVICE=1: the pyopencl tests cannot run" >&2
    exit 1
  fi
  echo "python: pyopencl did not install; the pyopencl tests skip"
fi
echo "python: pip install pyopencl took $((SECONDS - t)) s"

# The suites' program cache (warm after ctest), no bytecode or pytest cache in the source tree.
export CLOPS_CACHE_DIR="$(cd "$build" && pwd)/test-cache" PYTHONDONTWRITEBYTECODE=1
t=$SECONDS
rc=0
"$venv/bin/python" -m pytest -p no:cacheprovider -rs test/python || rc=$?
echo "python: pytest took $((SECONDS - t)) s"
if [ "$rc" -eq 5 ]; then
  echo "python: pytest collected no tests (test/python missing or not importable)" >&2
  exit 1
fi
exit "$rc"
