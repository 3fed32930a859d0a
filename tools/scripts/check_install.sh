#!/usr/bin/env bash
# tools/scripts/check_install.sh - installs clops to a scratch prefix (not /usr/local) and
# builds and runs two consumers outside the tree against it: one through
# find_package(clops), one through pkg-config, both setting
# CL_TARGET_OPENCL_VERSION=300 themselves, calling OpenCL directly and compiling
# with -Wall -Werror. Also checks that every public header of include/clops/ is installed
# and compiles alone (the first include of a file, -Wall -Wextra -Werror), and runs the
# installed CLI.
#
#   bash tools/scripts/check_install.sh [BUILD_DIR]     (default: build, already built)
#   bash tools/scripts/check_install.sh BUILD_DIR PREFIX  (PREFIX already holds an installed clops, e.g. the
#                                 usr/ of unpacked .debs: tools/scripts/check_deb.sh; copied, not installed)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
work=$(mktemp -d "${TMPDIR:-/tmp}/clops-install-XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix with space"

# shellcheck source=tools/scripts/packages.sh
. tools/scripts/packages.sh
need_packages cmake pkg-config ocl-icd-opencl-dev opencl-headers

if [ -n "${2:-}" ]; then cp -a "$2" "$prefix"; else
cmake --install "$build" --prefix "$prefix" >/dev/null
fi
echo "installed into $prefix"

# 0. The public headers: each of include/clops/ installed, and each self-contained (it compiles
# as the first and only include of a file, whichever of them a consumer includes first).
headers=$(cd include/clops && ls -- *.h)
installed=$(cd "$prefix/include/clops" && ls -- *.h)
[ "$headers" = "$installed" ] ||
  { printf 'check_install: installed headers differ from include/clops/:\n%s\n' \
      "$(diff <(echo "$headers") <(echo "$installed"))" >&2; exit 1; }
for h in $headers; do
  printf '#include <clops/%s>\nint main(void) { return 0; }\n' "$h" >"$work/alone.c"
  cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$prefix/include" "$work/alone.c" ||
    { echo "check_install: clops/$h does not compile alone" >&2; exit 1; }
done
echo "check_install: $(echo "$headers" | wc -w) public headers installed, each compiles alone"

# 1. CMake: find_package(clops) with only CMAKE_PREFIX_PATH pointing at the prefix.
cp -r test/install "$work/cmake-consumer"
cmake -S "$work/cmake-consumer" -B "$work/cmake-consumer/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake-consumer/build" >/dev/null ||
  { cmake --build "$work/cmake-consumer/build" 2>&1 | tail -20 >&2; exit 1; }
"$work/cmake-consumer/build/consumer"

# 2. pkg-config, the prefix moved after installation (the .pc file is relocatable).
mv "$prefix" "$work/moved"
prefix="$work/moved"
pcdir=$(dirname "$(find "$prefix" -name clops.pc | head -n 1)")
flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs clops)
case "$flags" in
  *"$prefix"*) ;;
  *) echo "check_install: pkg-config gives '$flags', which does not name $prefix" >&2; exit 1 ;;
esac
case "$flags" in
  *CL_TARGET_OPENCL_VERSION*) echo "check_install: pkg-config imposes an OpenCL version: '$flags'" >&2; exit 1 ;;
esac
# The consumer sets its own OpenCL version and calls OpenCL itself: --libs clops must bring it.
# shellcheck disable=SC2086
cc -std=c11 -Wall -Werror -DCL_TARGET_OPENCL_VERSION=300 -o "$work/pc-consumer" test/install/consumer.c $flags
LD_LIBRARY_PATH="$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=libdir clops)" "$work/pc-consumer"

# 3. The installed CLI finds its library by its run path, with no LD_LIBRARY_PATH.
env -u LD_LIBRARY_PATH "$prefix/bin/clops" --version
echo "check_install: find_package, pkg-config and the installed CLI all work"
