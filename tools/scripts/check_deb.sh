#!/usr/bin/env bash
# tools/scripts/check_deb.sh - the Debian packages of cmake/packaging.cmake. Runs `cpack -G DEB` in
# BUILD_DIR (already built) into a scratch directory and checks:
#   - three packages, libclops<major>, libclops-dev and clops, of the project's version;
#   - their dependencies (the ICD loader once, as ocl-icd-libopencl1 | libopencl-1.2-1, the same version
#     of the library, the -dev package on ocl-icd-opencl-dev | opencl-dev), and that apt can
#     resolve them (apt-get install --simulate: nothing is installed);
#   - their files, and that together they hold exactly what `cmake --install` installs, each
#     file once (man pages gzipped, in clops);
#   - unpacked with dpkg-deb -x into a scratch root (no dpkg -i): the consumers of
#     tools/scripts/check_install.sh build and run against it, and find_package(clops) works with
#     the library and -dev packages alone;
#   - lintian, failing on errors and warnings except the tags listed below.
#
#   bash tools/scripts/check_deb.sh [BUILD_DIR]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
work=$(mktemp -d "${TMPDIR:-/tmp}/clops-deb-XXXXXX")
trap 'rm -rf "$work"' EXIT

# shellcheck source=tools/scripts/packages.sh
. tools/scripts/packages.sh
# Say what is missing and why before apt-get installs it: lintian alone pulls in about 75 packages
# (Perl modules, binutils, ...); apt-get --simulate counts them.
deb_tools=(cmake dpkg-dev lintian)
declare -A why_tool=([cmake]="runs cpack" [dpkg-dev]="has dpkg-shlibdeps, which cpack runs for the dependencies"
  [lintian]="checks the packages against Debian's policy")
missing_tools=()
for p in "${deb_tools[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && continue
  missing_tools+=("$p")
  echo "check_deb: needs $p, not installed: it ${why_tool[$p]}."
done
if [ ${#missing_tools[@]} -gt 0 ]; then
  n=$(apt-get install --simulate -q --no-install-recommends "${missing_tools[@]}" 2>/dev/null | grep -c '^Inst ' || true)
  echo "check_deb: installing them with apt-get, which installs ${n:-?} packages in all (their dependencies):"
  apt-get install --simulate -q --no-install-recommends "${missing_tools[@]}" 2>/dev/null |
    sed -n 's/^Inst \([^ ]*\).*/\1/p' | paste -sd' ' - | fold -s -w 96 | sed 's/^/  /' || true
fi
need_packages "${deb_tools[@]}"

fail() { echo "check_deb: $*" >&2; exit 1; }

cache="$build/CMakeCache.txt"
[ -f "$cache" ] || fail "$build is not a configured build directory"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$cache")
major=${version%%.*}
arch=$(dpkg --print-architecture)
lib=libclops$major

if ! (cd "$build" && cpack -G DEB -B "$work/out") >"$work/cpack.log" 2>&1; then
  cat "$work/cpack.log" >&2
  fail "cpack -G DEB failed"
fi
debs=$(cd "$work/out" && printf '%s ' *.deb)
want="clops_${version}_$arch.deb libclops-dev_${version}_$arch.deb ${lib}_${version}_$arch.deb "
[ "$debs" = "$want" ] || fail "cpack made '$debs', not '$want'"
deb() { echo "$work/out/$1_${version}_$arch.deb"; }

# ---- metadata ---------------------------------------------------------------------
# need_depends PACKAGE REGEX: one clause of PACKAGE's Depends matches REGEX (whole clause).
need_depends() {
  dpkg-deb -f "$(deb "$1")" Depends | sed 's/, /\n/g' | grep -qxE "$2" ||
    fail "$1: no dependency '$2' in: $(dpkg-deb -f "$(deb "$1")" Depends)"
}
for p in "$lib" libclops-dev clops; do
  f=$(deb "$p")
  [ "$(dpkg-deb -f "$f" Package)" = "$p" ] || fail "$f: Package is not $p"
  [ "$(dpkg-deb -f "$f" Version)" = "$version" ] || fail "$f: Version is not $version"
  [ "$(dpkg-deb -f "$f" Architecture)" = "$arch" ] || fail "$f: Architecture is not $arch"
done
same="$lib \\(= ${version//./\\.}\\)"
need_depends "$lib" 'ocl-icd-libopencl1( \(.*\))? \| libopencl-1\.2-1'
# The ICD loader in one clause of each package's Depends, not one per OpenCL version
# (cmake/deb_depends.cmake).
for p in "$lib" libclops-dev clops; do
  n=$(dpkg-deb -f "$(deb "$p")" Depends | sed 's/, /\n/g' | grep -cE '(^|\| )(ocl-icd-libopencl1|libopencl)' || true)
  [ "$n" -le 1 ] || fail "$p: the OpenCL ICD loader in $n clauses of: $(dpkg-deb -f "$(deb "$p")" Depends)"
done
need_depends "$lib" 'libc6( \(.*\))?'
need_depends libclops-dev "$same"
need_depends libclops-dev 'ocl-icd-opencl-dev \| opencl-dev'
need_depends clops "$same"
need_depends clops 'libcjson1( \(.*\))?'
dpkg-deb -I "$(deb "$lib")" shlibs | grep -qxE "libclops $major $same" ||
  fail "$lib: shlibs is not 'libclops $major $lib (= $version)'"
dpkg-deb -I "$(deb "$lib")" triggers | grep -qx 'activate-noawait ldconfig' || fail "$lib: no ldconfig trigger"
# apt resolves every dependency from the archive or the installed packages (a wrong name fails).
apt-get install --simulate -q "$(deb "$lib")" "$(deb libclops-dev)" "$(deb clops)" >"$work/apt.log" 2>&1 ||
  { cat "$work/apt.log" >&2; fail "apt-get cannot resolve the packages' dependencies"; }

# ---- files --------------------------------------------------------------------------
# PACKAGE.files: its files and links (no directories), relative to /usr, one a line.
for p in "$lib" libclops-dev clops; do
  dpkg-deb --fsys-tarfile "$(deb "$p")" | tar -t | grep -v '/$' | sed 's|^\./||' | sort >"$work/$p.files"
  ! grep -v '^usr/' "$work/$p.files" || fail "$p has the files above outside /usr"
  sed -i 's|^usr/||' "$work/$p.files"
done
# only PACKAGE REGEX...: every file of PACKAGE matches a REGEX, and each REGEX matches a file
# unless it starts with '?'.
only() {
  local p=$1 re all=""; shift
  for re in "$@"; do
    all="$all|${re#\?}"
    [ "${re:0:1}" = "?" ] || grep -qxE "$re" "$work/$p.files" || fail "$p has no file matching $re"
  done
  ! grep -vxE "${all#|}" "$work/$p.files" || fail "$p has the files above, which belong elsewhere"
}
L='lib(/[a-z0-9_]+-linux-[a-z0-9_]+)?'   # lib, or Debian's multiarch lib/<triplet>
only "$lib" "$L/libclops\\.so\\.$major" "$L/libclops\\.so\\.${version//./\\.}"
# The -dev package: each public header of include/clops/ (no other), the link, the CMake and pkg-config files.
headers=()
for h in include/clops/*.h; do headers+=("${h//./\\.}"); done
only libclops-dev "${headers[@]}" "$L/libclops\\.so" \
  "$L/pkgconfig/clops\\.pc" "$L/cmake/clops/clopsConfig\\.cmake" "$L/cmake/clops/clopsConfigVersion\\.cmake" \
  "$L/cmake/clops/clopsTargets\\.cmake" "$L/cmake/clops/clopsTargets-[a-z]+\\.cmake" \
  "$L/cmake/clops/clopsCliTargets\\.cmake" "$L/cmake/clops/clopsCliTargets-[a-z]+\\.cmake"
# The CLI's package: the program and its man page, no CMake files (its target file is in -dev).
only clops 'bin/clops' 'share/man/man1/clops\.1\.gz'

# Together, exactly what `cmake --install` installs, each file in one package. Man pages are
# gzipped in the packages (cmake/packaging.cmake).
cmake --install "$build" --prefix "$work/installed" >/dev/null
(cd "$work/installed" && find . ! -type d | sed 's|^\./||' |
  sed -E '/^share\/man\/man[1-9]\//{/\.gz$/!s/$/.gz/}' | sort) >"$work/installed.files"
cat "$work/$lib.files" "$work/libclops-dev.files" "$work/clops.files" | sort >"$work/packaged.list"
dups=$(uniq -d "$work/packaged.list")
[ -z "$dups" ] || fail "in more than one package: $dups"
if ! diff -u "$work/installed.files" "$work/packaged.list" >"$work/diff"; then
  cat "$work/diff" >&2
  fail "the packages do not hold what cmake --install installs ('-': installed, in no package;" \
    "an install() rule without COMPONENT runtime, development or cli)"
fi
for m in $(grep '^share/man/' "$work/clops.files" || true); do
  dpkg-deb --fsys-tarfile "$(deb clops)" | tar -xO "./usr/$m" | gzip -t || fail "clops: $m is not gzip"
done

# ---- unpacked: the consumers build and run against the packages' files -------------------
for p in "$lib" libclops-dev clops; do dpkg-deb -x "$(deb "$p")" "$work/root"; done
bash tools/scripts/check_install.sh "$build" "$work/root/usr"
# find_package(clops) gives clops::clops_cli with the three packages, and works with the
# library and -dev only (the CLI's target file is in -dev, read only where bin/clops is there).
mkdir "$work/cli-target"
# shellcheck disable=SC2016 # CMake code, expanded by CMake
printf '%s\n' 'cmake_minimum_required(VERSION 3.16)' 'project(cli_target LANGUAGES C)' \
  'find_package(clops REQUIRED)' 'get_target_property(cfg clops::clops_cli IMPORTED_CONFIGURATIONS)' \
  'get_target_property(cli clops::clops_cli IMPORTED_LOCATION_${cfg})' \
  'if(NOT EXISTS "${cli}")' '  message(FATAL_ERROR "clops::clops_cli: ${cli}")' 'endif()' \
  >"$work/cli-target/CMakeLists.txt"
cmake -S "$work/cli-target" -B "$work/cli-target/build" -DCMAKE_PREFIX_PATH="$work/root/usr" >/dev/null
for p in "$lib" libclops-dev; do dpkg-deb -x "$(deb "$p")" "$work/devroot"; done
cp -r test/install "$work/dev-consumer"
cmake -S "$work/dev-consumer" -B "$work/dev-consumer/build" -DCMAKE_PREFIX_PATH="$work/devroot/usr" >/dev/null
cmake --build "$work/dev-consumer/build" >/dev/null
"$work/dev-consumer/build/consumer"

# ---- lintian ------------------------------------------------------------------------------
# Tags left, each for a reason:
#   no-copyright-file      the project states no licence yet: usr/share/doc/<package>/copyright
#                          can only be written once it does;
#   no-changelog           no release history yet (usr/share/doc/<package>/changelog.gz);
#   maintscript-calls-ldconfig  CPack writes postinst/postrm that run ldconfig for a library in
#                          /usr/lib; the package also has the ldconfig trigger Debian asks for;
#   pkg-config-unavailable-for-cross-compilation  clops.pc is in lib/pkgconfig unless the build
#                          was configured with -DCMAKE_INSTALL_PREFIX=/usr (lib/<triplet>).
suppressed=no-copyright-file,no-changelog,maintscript-calls-ldconfig
suppressed=$suppressed,pkg-config-unavailable-for-cross-compilation
if ! lintian --fail-on error,warning --suppress-tags "$suppressed" \
    "$(deb "$lib")" "$(deb libclops-dev)" "$(deb clops)" >"$work/lintian.log" 2>&1; then
  grep -v 'running with root privileges' "$work/lintian.log" >&2
  fail "lintian: the tags above"
fi
echo "check_deb: $lib, libclops-dev and clops $version: metadata, files, unpacked consumers and lintian all pass"
