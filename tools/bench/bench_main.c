/* bench_main.c - a stand-alone `clops bench` for developing tools/bench/bench.c:
 *   gcc -std=c11 -O2 -Iinclude -Itools/bench tools/bench/*.c -Lbuild-bench -lclops -lOpenCL -lm -lpthread
 * The CLI's `clops bench` calls the same clops_bench_main(). */
#include "bench.h"

int main(int argc, char **argv)
{
    argv[0] = (char *)"bench";
    return clops_bench_main(argc, argv);
}
