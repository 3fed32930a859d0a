/*
 * bench.h - `clops bench`: throughput of every operator against a copy of the
 * same bytes on the same device, measured in the same run.
 *
 * For each operator x order (or index type) x element width x block size x
 * size, the operator's run is interleaved with two baselines that move the
 * same number of bytes (an OpenCL copy kernel and clEnqueueCopyBuffer; memcpy
 * on the host backend), and the medians of the repetitions are reported in
 * GB/s with the ratio to the faster baseline. Then small-tensor latency
 * against an empty kernel launch. A table on stdout, or one JSON document
 * with --json; a progress line on stderr when stderr is a terminal.
 * The method is described in notes/bench.md.
 */
#ifndef CLOPS_TOOLS_BENCH_H
#define CLOPS_TOOLS_BENCH_H

#ifdef __cplusplus
extern "C" {
#endif

/*! clops_bench_main() : runs the benchmark with command-line arguments
 *  (argv[0] is the command's name, "bench"; `--help` lists the options).
 *  Prints to stdout and stderr.
 *  @return 0 on success, 1 when a measurement failed or an operator gave a
 *  wrong result, 2 on a usage error. */
int clops_bench_main(int argc, char **argv);

/*! clops_bench_startup_main() : `clops bench-startup`: cold build, in-process
 *  reuse and on-disk load time of every program, then tuned against default
 *  throughput (bench_startup.c). @return 0, 1 on a failure, 2 on a usage error. */
int clops_bench_startup_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif /* CLOPS_TOOLS_BENCH_H */
