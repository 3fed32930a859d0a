/* run_settings.c - --fallback and --timeout of `clops run` and `clops conformance`. */
#define _POSIX_C_SOURCE 200809L
#include "run_settings.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int run_settings_fallback(run_settings *s, const char *value, char *err, size_t err_size)
{
    if (strcmp(value, "allow") == 0 || strcmp(value, "never") == 0) {
        s->fallback_set = 1;
        s->fallback = value[0] == 'a' ? CLOPS_FALLBACK_ALLOW : CLOPS_FALLBACK_NEVER;
        return 0;
    }
    snprintf(err, err_size, "--fallback needs allow or never, not '%s'", value);
    return -1;
}

int run_settings_timeout(run_settings *s, const char *value, char *err, size_t err_size)
{
    char *end;
    errno = 0;
    const double v = strtod(value, &end);
    if ((value[0] >= '0' && value[0] <= '9') && !strpbrk(value, "xX") && !errno && !*end && isfinite(v) && v > 0 &&
        v <= 1e6) {
        s->timeout = v;
        return 0;
    }
    snprintf(err, err_size, "--timeout needs seconds above 0 (for example 2.5), at most 1000000, not '%s'", value);
    return -1;
}

clops_status run_settings_options(const run_settings *s, int device, clops_context_options *o)
{
    clops_status st = clops_context_options_init(o, sizeof *o);
    if (st == CLOPS_SUCCESS) st = clops_context_options_from_env(o);
    if (st != CLOPS_SUCCESS) return st;
    if (device != CLOPS_DEVICE_DEFAULT) o->device = device;
    if (s->fallback_set) o->fallback = s->fallback;
    if (s->timeout > 0) o->timeout_seconds = s->timeout;
    return CLOPS_SUCCESS;
}

/* ---- the watchdog ---- */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int armed;
    double timeout;
    struct timespec deadline;
    char device[256];
    char remove[4200]; /* run_watchdog_remove */
    const char *source; /* "--timeout" or "CLOPS_TIMEOUT" */
} dog = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, {0, 0}, "", "", "--timeout"};

static void *watch(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&dog.lock);
    while (dog.armed)
        if (pthread_cond_timedwait(&dog.wake, &dog.lock, &dog.deadline) == ETIMEDOUT && dog.armed) {
            /* Under the lock: once run_watchdog_stop returned, this never runs. */
            if (dog.device[0])
                fprintf(stderr, "clops: error: device \"%s\" did not finish within %g s (%s)\n",
                        dog.device, dog.timeout, dog.source);
            else
                fprintf(stderr, "clops: error: no device was ready within %g s (%s)\n", dog.timeout,
                        dog.source);
            fflush(stderr);
            if (dog.remove[0]) unlink(dog.remove);
            _exit(1);
        }
    pthread_mutex_unlock(&dog.lock);
    return NULL;
}

/* The deadline the command runs under: --timeout, else CLOPS_TIMEOUT (as the
 * library reads it: clops_context_options_from_env), else none (0). */
static double effective_timeout(const run_settings *s)
{
    if (s->timeout > 0) return s->timeout;
    clops_context_options o;
    if (clops_context_options_init(&o, sizeof o) != CLOPS_SUCCESS || clops_context_options_from_env(&o) != CLOPS_SUCCESS)
        return 0; /* a bad variable fails the context creation with its own message */
    return o.timeout_seconds > 0 && o.timeout_seconds <= 1e6 ? o.timeout_seconds : 0;
}

void run_watchdog_start(const run_settings *s)
{
    const double timeout = effective_timeout(s);
    if (timeout <= 0) return;
    clock_gettime(CLOCK_REALTIME, &dog.deadline);
    const double whole = floor(timeout);
    dog.deadline.tv_sec += (time_t)whole;
    dog.deadline.tv_nsec += (long)((timeout - whole) * 1e9);
    if (dog.deadline.tv_nsec >= 1000000000L) dog.deadline.tv_sec++, dog.deadline.tv_nsec -= 1000000000L;
    dog.timeout = timeout;
    dog.source = s->timeout > 0 ? "--timeout" : "CLOPS_TIMEOUT";
    dog.armed = 1;
    pthread_t t;
    if (pthread_create(&t, NULL, watch, NULL) == 0) pthread_detach(t);
    else dog.armed = 0; /* the library's own deadline still applies */
}

void run_watchdog_device(const char *name)
{
    pthread_mutex_lock(&dog.lock);
    snprintf(dog.device, sizeof dog.device, "%s", name);
    pthread_mutex_unlock(&dog.lock);
}

void run_watchdog_stop(void)
{
    pthread_mutex_lock(&dog.lock);
    dog.armed = 0;
    pthread_cond_signal(&dog.wake);
    pthread_mutex_unlock(&dog.lock);
}

void run_watchdog_remove(const char *path)
{
    pthread_mutex_lock(&dog.lock);
    snprintf(dog.remove, sizeof dog.remove, "%s", path ? path : "");
    pthread_mutex_unlock(&dog.lock);
}
