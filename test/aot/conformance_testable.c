/* conformance_testable.c - `clops conformance` built against clops_testable, whose
 * device profiles (CLOPS_TEST_DEVICE_PROFILE, lib/cl/profile.c) the installed
 * library and the `clops` CLI never read: test_aot_portable.sh runs the conformance
 * as an accelerator and as a loop-limited GPU through it.
 *
 *   conformance_testable ARGS...   (the arguments of `clops conformance`) */
#include "conformance.h"

int main(int argc, char **argv)
{
    return clops_conformance_main(argc, argv);
}
