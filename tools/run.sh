#!/usr/bin/env bash
# tools/run.sh - set up, build, and run clops on a Debian machine.
#
#   bash tools/run.sh demo       install what is missing, build the CLI, run the specification's
#                                examples through it where `clops run` runs by default (it says where)
#   bash tools/run.sh test       install what is missing, build, run the test suite's first tier
#                                (every ctest entry but those labelled tier2, then the Python
#                                package's pytest suite): about 15 minutes on a busy 2-core machine
#   bash tools/run.sh test-full  the same with the second tier too (ctest's tier2 entries: the
#                                conformance-kernel matrix, AOT, the large suites): every test
#
# Both test modes print a line when ctest has printed none for a minute, naming what still runs.
# Environment: BUILD_DIR (default: build), JOBS (default: nproc).
set -euo pipefail

cd "$(dirname "$0")/.."
mode=${1:-demo}
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}

case "$mode" in
  demo|test|test-full) ;;
  *)
    echo "usage: bash tools/run.sh demo|test|test-full" >&2
    exit 2
    ;;
esac

# Debian packages: compiler and CMake, the OpenCL ICD loader and headers, PoCL's
# CPU device, Check, pkg-config to find Check, and cJSON for the conformance report.
# shellcheck source=tools/scripts/packages.sh
. tools/scripts/packages.sh
need_packages build-essential cmake pkg-config ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo check libcjson-dev

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release

# ctest_with_progress ARGS...: ctest ARGS, and a line on stderr whenever a minute passes without one
# from ctest (an entry can take minutes on a busy machine), naming the suites still running.
ctest_with_progress() {
  local stamp status=0 ticker tree
  stamp=$(mktemp)
  tree=$(cd "$build" && pwd)/
  (
    while sleep 60; do
      if [ $(($(date +%s) - $(stat -c %Y "$stamp"))) -ge 60 ]; then
        running=$(pgrep -a -f "$tree" | grep -v " ctest " |
          awk '{n = $2 ~ /(^|\/)(bash|sh|cmake)$/ ? $3 : $2; sub(".*/", "", n); print n}' | sort | uniq -c |
          awk '{printf "%s%s%s", sep, $2, ($1 > 1 ? " x" $1 : ""); sep=", "}')
        echo "tools/run.sh: $(date +%T): ctest still running: ${running:-(between entries)}" >&2
      fi
    done
  ) &
  ticker=$!
  ctest --test-dir "$build" "$@" | while IFS= read -r line; do
    printf '%s\n' "$line"
    touch "$stamp"
  done || status=$? # pipefail: ctest's status
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  rm -f "$stamp"
  return "$status"
}

case "$mode" in
  demo)
    # The CLI and the library only: the demo runs nothing else.
    cmake --build "$build" -j "$jobs" --target clops_cli
    bash tools/scripts/demo.sh "$build"
    ;;
  test|test-full)
    cmake --build "$build" -j "$jobs"
    # Fail rather than skip when no OpenCL device exists: PoCL was installed above.
    # Then the Python package's suite (test/python/run.sh: a venv in $build/venv, pip install .,
    # pytest), after ctest and outside it (see docs/python.md); both run, either failing fails.
    need_packages python3-venv
    tier=(-LE tier2)
    [ "$mode" = test ] || tier=()
    status=0
    CLOPS_REQUIRE_DEVICE=1 ctest_with_progress --output-on-failure -j "$jobs" "${tier[@]}" || status=$?
    CLOPS_REQUIRE_DEVICE=1 bash test/python/run.sh "$build" || status=$?
    exit "$status"
    ;;
esac
