#!/usr/bin/env bash
# test/python/run.sh [BUILD_DIR] - the Python suite, as `bash tools/run.sh test` runs it after ctest:
# a fresh virtual environment in BUILD_DIR/venv (default build/venv) that sees the interpreter's system
# packages (--system-site-packages: Debian's python3-torch and python3-numpy where installed; pip keeps a
# present numpy that satisfies the package), `pip install .` into it (the wheel builds libclops with the
# project's CMake, in a temporary directory: nothing is reused), pytest, pyopencl, onnx and onnxruntime
# from PyPI (pyopencl is optional: its tests skip without it, except under CLOPS_REQUIRE_DEVICE=1 (CI), where
# a failed install fails the run; onnx/onnxruntime likewise, under CLOPS_REQUIRE_ONNX=1). PyTorch is never installed here (too big): its comparisons run where torch is
# importable (.ci/run installs python3-torch) and skip otherwise, except under CLOPS_REQUIRE_TORCH=1.
# Then pytest over test/python. PYTHON names the interpreter (default python3; when python3 is another
# interpreter, a pyenv one for example, that has no torch while Debian's /usr/bin/python3 has it, that
# one, so that the comparisons run). Prints how long each step took. Exit status: pytest's, and 1 if it
# collected nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
venv=$build/venv
python=${PYTHON:-python3}
if [ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ] &&
   ! python3 -c 'import torch' 2>/dev/null && /usr/bin/python3 -c 'import torch, ensurepip' 2>/dev/null; then
  python=/usr/bin/python3
  echo "python: $(command -v python3) has no torch, /usr/bin/python3 has: the venv uses /usr/bin/python3 (PYTHON= to choose)"
fi

# The wheel's CMake build on every core (scikit-build-core builds serially otherwise).
export CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-$(nproc)}
t=$SECONDS
"$python" -m venv --clear --system-site-packages "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check . pytest
echo "python: venv and pip install . (library build included) took $((SECONDS - t)) s"
# pyopencl's install must not replace the numpy that a system torch was built against: pin what is there.
numpy_pin=$build/venv-numpy-pin.txt
"$venv/bin/python" -c 'import numpy; print("numpy==" + numpy.__version__)' > "$numpy_pin"
t=$SECONDS
if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check -c "$numpy_pin" pyopencl; then
  if [ "${CLOPS_REQUIRE_DEVICE:-}" = 1 ]; then  # CI: the pyopencl path must run, not skip
    echo "python: pip install pyopencl failed and CLOPS_REQUIRE_DEVICE=1: the pyopencl tests cannot run" >&2
    exit 1
  fi
  echo "python: pyopencl did not install; the pyopencl tests skip"
fi
echo "python: pip install pyopencl took $((SECONDS - t)) s"
# ONNX and ONNX Runtime for clops.onnx's tests (the package's [onnx] extra, its lower bounds), pinned to the
# same numpy: optional like pyopencl; under CLOPS_REQUIRE_ONNX=1 (CI) a failed install fails the run. A system
# onnx that satisfies them (Debian 12's python3-onnx 1.12, seen through --system-site-packages) is kept.
t=$SECONDS
if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check -c "$numpy_pin" 'onnx>=1.12' 'onnxruntime>=1.15'; then
  if [ "${CLOPS_REQUIRE_ONNX:-}" = 1 ]; then
    echo "python: pip install onnx onnxruntime failed and CLOPS_REQUIRE_ONNX=1: the ONNX tests cannot run" >&2
    exit 1
  fi
  echo "python: onnx/onnxruntime did not install; the clops.onnx tests skip"
fi
echo "python: pip install onnx onnxruntime took $((SECONDS - t)) s"
"$venv/bin/python" -c 'import numpy, sys
try:
    import onnx, onnxruntime
    print(f"python: onnx {onnx.__version__}, onnxruntime {onnxruntime.__version__}")
except ImportError:
    pass
try:
    import torch
    print(f"python: numpy {numpy.__version__}, torch {torch.__version__}: the PyTorch comparisons run")
except ImportError:
    print(f"python: numpy {numpy.__version__}, no torch: the PyTorch comparisons skip")'


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
