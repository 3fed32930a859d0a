/* cli_fixture.h - what the CLI suites (test_cli, test_cli_commands) share: the
 * `clops` binary named by CLOPS_CLI run with posix_spawn, stdout and stderr
 * captured; the fixtures in CLOPS_TEST_DATA ("%D/x") and a temporary directory
 * ("%T/x"); file and output assertions. */
#ifndef CLOPS_TEST_CLI_FIXTURE_H
#define CLOPS_TEST_CLI_FIXTURE_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"
#include "suite.h"

extern const char *cli_path;
extern const char *data_dir;
extern char tmp_dir[256];
extern int have_device; /* `clops devices` lists at least one device */

#define MAX_ARGS 16
#define CAPTURE_SIZE (1 << 18)

typedef struct cli_result {
    int exit_code; /* -1 if it did not exit normally */
    char out[CAPTURE_SIZE];
    char err[CAPTURE_SIZE];
} cli_result;
extern cli_result res; /* the last run's */

/* Runs clops with `args` (NULL-terminated; %D/ and %T/ expanded) into `res`. */
void run_argv(const char *const *args);
/* run_argv, but the CLI is killed if it has not ended within `seconds`
 * (exit_code -1): for the cases where the bug is a hang. No %D/ or %T/ expansion. */
void run_argv_bounded(unsigned seconds, const char *const *args);
/* run_argv with the arguments given, ending with NULL. */
void run(const char *first, ...);
/* "<tmp_dir>/<name>" */
void tmp_path(char *buf, size_t size, const char *name);
int file_exists(const char *path);
/* A whole file, malloc'ed. */
unsigned char *slurp(const char *path, size_t *len);
void write_bytes(const char *path, const void *bytes, size_t len);
/* No temporary file of the atomic writer is left in tmp_dir. */
void assert_no_temp_files(void);
/* Writes an array as tmp_dir/<name> with the CLI's .npy writer. */
void make_array(const char *name, clops_data_type type, unsigned ndim, const uint64_t *shape, const void *data, size_t nbytes);
void assert_same_npy(const char *got_path, const char *want_path, const char *label);
/* stderr is exactly one "clops: error: ..." line. */
void assert_error_line(const char *label);
/* The suites' unchecked fixture: broken inputs in tmp_dir, and have_device. */
void setup_once(void);
/* The suites' test case: setup_once as its unchecked fixture, a 600 s timeout. */
TCase *cli_case(Suite *s);
/* Runs suite `s` in a fresh temporary directory, removed afterwards. */
int cli_suite_main(Suite *s);

#endif
