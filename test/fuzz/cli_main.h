/* cli_main.h - forced into tools/clops_cli.c when fuzz_cli_args compiles it
 * with -Dmain=clops_cli_main, so that the renamed main has a prototype. */
int clops_cli_main(int argc, char **argv);
