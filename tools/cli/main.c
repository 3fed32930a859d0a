/* main.c - the `clops` executable (the command line is clops_cli_main, cli_main.c,
 * so that test/fuzz can call it in-process). */
#include "cli.h"

int main(int argc, char **argv)
{
    return clops_cli_main(argc, argv);
}
