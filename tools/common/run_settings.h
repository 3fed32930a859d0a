/*
 * run_settings.h - the settings flags `clops run` and `clops conformance` share:
 * --fallback allow|never and --timeout SECONDS, made into context options over
 * the environment's, and the watchdog that enforces --timeout on the whole
 * command (a call blocked inside a driver included; clops.h, "Deadline").
 */
#ifndef CLOPS_TOOLS_RUN_SETTINGS_H
#define CLOPS_TOOLS_RUN_SETTINGS_H

#include <stddef.h>

#include <clops/clops.h>

typedef struct run_settings {
    int fallback_set;
    clops_fallback_policy fallback;
    double timeout; /* seconds; 0: none given */
} run_settings;

/* "allow" or "never"; 0, or -1 with a message in err. */
int run_settings_fallback(run_settings *s, const char *value, char *err, size_t err_size);
/* Positive seconds ("2.5"); 0, or -1 with a message in err. */
int run_settings_timeout(run_settings *s, const char *value, char *err, size_t err_size);

/* The environment's options (a bad value fails as clops_context_options_from_env),
 * `device` and the flags over them. */
clops_status run_settings_options(const run_settings *s, int device, clops_context_options *o);

/* With a timeout, starts a watchdog: at the deadline it prints "clops: error:
 * device "NAME" did not finish within T s (--timeout)" and ends the process
 * with exit status 1. run_watchdog_device names the device once known;
 * run_watchdog_stop (before any output file is written) disarms it for good. */
void run_watchdog_start(const run_settings *s);
void run_watchdog_device(const char *name);
void run_watchdog_stop(void);
/* A temporary file the watchdog removes before it ends the process (NULL: none). */
void run_watchdog_remove(const char *path);

#endif
