# cmake/packaging.cmake - Debian packages with CPack: `cpack -G DEB` in the build directory.
#
# Three packages, one per install() component of CMakeLists.txt:
#   runtime     -> libclops0     the shared library (libclops.so.0 and the file it names)
#   development -> libclops-dev  headers, the CMake package (with the CLI's target file, read only
#                                where bin/clops is installed), clops.pc, the libclops.so link
#   cli         -> clops         bin/clops and its man page (no CMake files)
#
# The man page hook: install the page into the cli component, uncompressed, as
#   install(FILES clops.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT cli)
# and it is in the clops package, gzipped as Debian wants it (the pre-build step at the
# end of this file). An install() rule without a COMPONENT is in no package:
# tools/scripts/check_deb.sh fails if a file that `cmake --install` installs is missing from the
# packages or is in two of them.
#
# Dependencies: on the OpenCL ICD loader by its Debian names, once (ocl-icd-libopencl1, or any
# package that provides libopencl-1.2-1), on libclops0 of the same version for the other two,
# and on libc, libcjson and the loader as dpkg-shlibdeps finds them in the binaries.
# The paths are those of the build's CMAKE_INSTALL_* settings under /usr: configure with
# -DCMAKE_INSTALL_PREFIX=/usr for Debian's multiarch library directory (lib/<triplet>).

# ---- run by cpack, after the components are staged (CPACK_PRE_BUILD_SCRIPTS) ----------
# Man pages are compressed in a Debian package (gzip -9n: no name or time stamp in it).
if(CPACK_TEMPORARY_INSTALL_DIRECTORY)
  file(GLOB_RECURSE clops_staged LIST_DIRECTORIES false "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*")
  foreach(page IN LISTS clops_staged)
    if(page MATCHES "/share/man/man[1-9]/[^/]+$" AND NOT page MATCHES "\\.gz$")
      execute_process(COMMAND gzip -9nf "${page}" RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "packaging: gzip ${page} failed (${rc})")
      endif()
    endif()
  endforeach()
  return()
endif()

# ---- included by CMakeLists.txt -----------------------------------------------------------
set(CPACK_PACKAGE_CONTACT "clops maintainers <clops-maintainers@example.org>" CACHE STRING
  "Maintainer of the Debian packages (name <address>)")
set(CPACK_PACKAGE_NAME clops)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_STRIP_FILES ON)
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_CURRENT_LIST_FILE})
set(CPACK_POST_BUILD_SCRIPTS ${CMAKE_CURRENT_LIST_DIR}/deb_depends.cmake) # one clause on the ICD loader
if(CMAKE_VERSION VERSION_LESS 3.19)
  message(WARNING "CMake ${CMAKE_VERSION} runs no CPACK_POST_BUILD_SCRIPTS (3.19 and later do): the .deb "
                  "packages will name the OpenCL ICD loader once per OpenCL version (cmake/deb_depends.cmake)")
endif()

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime development)
if(TARGET clops_cli)                              # a build without the CLI makes two packages
  list(APPEND CPACK_COMPONENTS_ALL cli)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)          # name_version_arch.deb
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# Dependencies found in the binaries by dpkg-shlibdeps (libc, libcjson, the ICD loader with
# the alternatives its symbols file names), else the same stated by hand. dpkg-shlibdeps names the
# loader once per OpenCL version whose calls the binaries make; cmake/deb_depends.cmake (run after
# cpack builds the packages) keeps the one clause that implies the others,
# ocl-icd-libopencl1 (>= 1.0) | libopencl-1.2-1 (the OpenCL 1.2 calls).
set(clops_runtime_package libclops${PROJECT_VERSION_MAJOR})   # named after the SONAME
set(clops_same_version "${clops_runtime_package} (= ${PROJECT_VERSION})")
find_program(CLOPS_DPKG_SHLIBDEPS dpkg-shlibdeps)
mark_as_advanced(CLOPS_DPKG_SHLIBDEPS)
if(CLOPS_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  # It must find libclops.so.0 for bin/clops; the dependency on libclops0 is stated below.
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_CURRENT_BINARY_DIR})
  set(clops_system_depends "")
  set(clops_cli_system_depends "")
else()
  set(clops_system_depends "libc6, ocl-icd-libopencl1 | libopencl-1.2-1")
  set(clops_cli_system_depends ", ${clops_system_depends}, libcjson1")
endif()

# Descriptions: the synopsis, then plain lines (CPack indents them and makes "" a " .").
set(clops_about "clops runs DirectML's DepthToSpace, SpaceToDepth and MaxUnpooling operators
on any OpenCL 1.2 device, and on the host when there is none.
")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${clops_runtime_package})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "${clops_system_depends}")
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "tensor operators on OpenCL - shared library
${clops_about}
This package contains the shared library.")
# The shlibs control file: exact version, no ABI promise before 1.0. The ldconfig trigger.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY "=")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/deb/runtime/triggers "activate-noawait ldconfig\n")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_BINARY_DIR}/deb/runtime/triggers)

set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME libclops-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS "${clops_same_version}, ocl-icd-opencl-dev | opencl-dev")
set(CPACK_DEBIAN_DEVELOPMENT_DESCRIPTION "tensor operators on OpenCL - development files
${clops_about}
This package contains the headers, the CMake package (find_package(clops))
and the pkg-config file (clops.pc).")

set(CPACK_DEBIAN_CLI_PACKAGE_NAME clops)
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION science)
set(CPACK_DEBIAN_CLI_PACKAGE_DEPENDS "${clops_same_version}${clops_cli_system_depends}")
set(CPACK_DEBIAN_CLI_DESCRIPTION "tensor operators on OpenCL - command-line tool
${clops_about}
This package contains the clops command: it runs an operator on .npy files,
lists the devices, keeps the program cache, tunes, and checks conformance.")

include(CPack)
