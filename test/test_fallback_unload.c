/*
 * test_fallback_unload.c - unloading libclops (dlclose) while a host-fallback
 * execution is pending (findings 2026-12-07, R1).
 *
 * A child process dlopens the built libclops (CLOPS_LIB, never linked into this
 * program), creates a context whose operators fall back to the host
 * (options.disable = CLOPS_CAPABILITY_COMPILER, cache off: neither the
 * specialised nor the portable program can be had; the operator's
 * fallback_reason says so), a DepthToSpace uint32 1x16x2x2 block 2, executes it
 * on cl_mem buffers behind a user event that is not set, frees the operator and
 * the context, dlcloses the library, waits 1 s, then sets the event and waits
 * for the execution's event. The pool's threads and the callbacks on the
 * caller's events live in the library: with it unmapped, the child died with
 * SIGSEGV within half a second of dlclose. The child must exit 0, the output
 * written right (the work ran after the unload), and a second dlopen must give
 * a library that works again. The parent never touches OpenCL (drivers do not
 * survive fork).
 *
 * Exit 77: no OpenCL device (a failure under CLOPS_REQUIRE_DEVICE=1).
 * CLOPS_TEST_DEVICE: an index of `clops devices` chooses the device (default 0).
 */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clops/clops.h"

#ifndef CLOPS_LIB
#error "CLOPS_LIB: the path of the built libclops"
#endif

#define CHILD_LIMIT_S 120 /* the child is killed past this: a hang is a failure too */
#define SKIP 77

/* The library's entry points this test calls, from dlsym. */
typedef struct api {
    clops_status (*options_init)(clops_context_options *, size_t);
    clops_status (*context_create)(const clops_context_options *, clops_context **);
    clops_backend (*backend)(const clops_context *);
    cl_context (*cl_ctx)(const clops_context *);
    cl_command_queue (*queue)(const clops_context *);
    clops_status (*op_create)(clops_context *, const clops_operator_desc *, clops_operator **);
    clops_status (*get_info)(const clops_operator *, clops_operator_info *);
    clops_status (*execute)(clops_operator *, const clops_buffers *, cl_uint, const cl_event *, cl_event *);
    void (*op_free)(clops_operator *);
    void (*context_free)(clops_context *);
    const char *(*message)(void);
    const char *(*status_name)(clops_status);
} api;

static int fail(const char *what)
{
    fprintf(stderr, "child: FAIL: %s\n", what);
    return 1;
}

static int load(void **handle, api *a)
{
    *handle = dlopen(CLOPS_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!*handle) {
        fprintf(stderr, "child: dlopen(%s): %s\n", CLOPS_LIB, dlerror());
        return 1;
    }
    struct {
        void **slot;
        const char *name;
    } const syms[] = {
        {(void **)&a->options_init, "clops_context_options_init"},
        {(void **)&a->context_create, "clops_context_create_with_options"},
        {(void **)&a->backend, "clops_context_backend"},
        {(void **)&a->cl_ctx, "clops_context_cl_context"},
        {(void **)&a->queue, "clops_context_queue"},
        {(void **)&a->op_create, "clops_operator_create"},
        {(void **)&a->get_info, "clops_operator_get_info"},
        {(void **)&a->execute, "clops_operator_execute"},
        {(void **)&a->op_free, "clops_operator_free"},
        {(void **)&a->context_free, "clops_context_free"},
        {(void **)&a->message, "clops_last_error_message"},
        {(void **)&a->status_name, "clops_status_name"},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = dlsym(*handle, syms[i].name);
        if (!p) {
            fprintf(stderr, "child: dlsym(%s): %s\n", syms[i].name, dlerror());
            return 1;
        }
        memcpy(syms[i].slot, &p, sizeof p); /* a data pointer into a function pointer, as dlsym's callers do */
    }
    return 0;
}

static const clops_tensor_desc g_x = {CLOPS_DATA_TYPE_UINT32, {1, 16, 2, 2}, NULL};
static const clops_tensor_desc g_y = {CLOPS_DATA_TYPE_UINT32, {1, 4, 4, 4}, NULL};

/* DepthToSpace DCR, block 2, of x[c][h][w] = c*4 + h*2 + w: y[c][h][w] = x[((h%2)*2 + w%2)*4 + c][h/2][w/2]. */
static uint32_t expected(unsigned c, unsigned h, unsigned w)
{
    const unsigned xc = ((h % 2) * 2 + w % 2) * 4 + c;
    return xc * 4 + (h / 2) * 2 + w / 2;
}

static int child(void)
{
    void *handle;
    api a;
    if (load(&handle, &a) != 0) return fail("cannot load the library");
    clops_context_options o;
    if (a.options_init(&o, sizeof o) != CLOPS_SUCCESS) return fail("clops_context_options_init");
    const char *dev = getenv("CLOPS_TEST_DEVICE");
    o.device = dev && dev[0] && strspn(dev, "0123456789") == strlen(dev) ? atoi(dev) : 0;
    o.disable = CLOPS_CAPABILITY_COMPILER;
    o.cache = CLOPS_CACHE_POLICY_OFF;
    clops_context *ctx = NULL;
    clops_status st = a.context_create(&o, &ctx);
    if (st != CLOPS_SUCCESS || a.backend(ctx) != CLOPS_BACKEND_OPENCL) {
        fprintf(stderr, "child: no OpenCL device %d: %s (%s)\n", o.device, a.status_name(st), a.message());
        return SKIP;
    }
    const clops_depth_to_space_desc d = {&g_x, &g_y, 2, CLOPS_ORDER_DEPTH_COLUMN_ROW};
    const clops_operator_desc desc = {CLOPS_OPERATOR_DEPTH_TO_SPACE, &d};
    clops_operator *op = NULL;
    st = a.op_create(ctx, &desc, &op);
    if (st != CLOPS_SUCCESS) {
        fprintf(stderr, "child: create: %s (%s)\n", a.status_name(st), a.message());
        return fail("the operator");
    }
    clops_operator_info info;
    if (a.get_info(op, &info) != CLOPS_SUCCESS || info.backend != CLOPS_BACKEND_HOST || !info.fallback_reason ||
        !info.fallback_reason[0])
        return fail("the operator did not fall back to the host (no fallback_reason)");
    fprintf(stderr, "child: the operator falls back: %s\n", info.fallback_reason);

    cl_context cl = a.cl_ctx(ctx);
    cl_command_queue q = a.queue(ctx);
    clRetainCommandQueue(q); /* kept past the context, to read the output */
    uint32_t x[64], y[64];
    for (unsigned i = 0; i < 64; i++) x[i] = i, y[i] = 0xA5A5A5A5u;
    cl_int err = CL_SUCCESS, err2 = CL_SUCCESS, err3 = CL_SUCCESS;
    cl_mem in = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof x, x, &err);
    cl_mem out = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof y, y, &err2);
    cl_event gate = clCreateUserEvent(cl, &err3);
    if (err != CL_SUCCESS || err2 != CL_SUCCESS || err3 != CL_SUCCESS) return fail("buffers or the user event");
    const clops_buffers b = {in, NULL, out};
    cl_event ev = NULL;
    st = a.execute(op, &b, 1, &gate, &ev);
    if (st != CLOPS_SUCCESS || !ev) {
        fprintf(stderr, "child: execute: %s (%s)\n", a.status_name(st), a.message());
        return fail("execute");
    }
    a.op_free(op); /* allowed with work pending */
    a.context_free(ctx);
    if (dlclose(handle) != 0) {
        fprintf(stderr, "child: dlclose: %s\n", dlerror());
        return fail("dlclose");
    }
    fprintf(stderr, "child: unloaded with the execution pending; waiting 1 s\n");
    const struct timespec second = {1, 0};
    nanosleep(&second, NULL); /* the watcher's interval ends meanwhile */
    if (clSetUserEventStatus(gate, CL_COMPLETE) != CL_SUCCESS) return fail("clSetUserEventStatus");
    if (clWaitForEvents(1, &ev) != CL_SUCCESS) return fail("clWaitForEvents on the execution's event");
    if (clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL) != CL_SUCCESS)
        return fail("reading the output");
    for (unsigned c = 0; c < 4; c++)
        for (unsigned h = 0; h < 4; h++)
            for (unsigned w = 0; w < 4; w++)
                if (y[(c * 4 + h) * 4 + w] != expected(c, h, w)) {
                    fprintf(stderr, "child: y[%u][%u][%u] = %#x, want %#x\n", c, h, w, y[(c * 4 + h) * 4 + w],
                            expected(c, h, w));
                    return fail("the execution after the unload wrote a wrong output");
                }
    clReleaseEvent(ev);
    clReleaseEvent(gate);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseCommandQueue(q);

    /* Loaded again: a working library (the same one, or a fresh one). */
    if (load(&handle, &a) != 0) return fail("cannot load the library again");
    st = a.context_create(&o, &ctx);
    if (st != CLOPS_SUCCESS) return fail("a context after loading again");
    st = a.op_create(ctx, &desc, &op);
    if (st != CLOPS_SUCCESS) return fail("an operator after loading again");
    a.op_free(op);
    a.context_free(ctx);
    dlclose(handle);
    fprintf(stderr, "child: done\n");
    return 0;
}

int main(void)
{
    fflush(NULL);
    const pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        alarm(CHILD_LIMIT_S);
        _exit(child());
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) {
        perror("waitpid");
        return 1;
    }
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "FAIL: the child died of signal %d (%s) after unloading libclops with a fallback "
                "execution pending%s\n", WTERMSIG(status), strsignal(WTERMSIG(status)),
                WTERMSIG(status) == SIGALRM ? ": it hung" : "");
        return 1;
    }
    const int code = WEXITSTATUS(status);
    if (code == SKIP) {
        const char *req = getenv("CLOPS_REQUIRE_DEVICE");
        if (req && strcmp(req, "1") == 0) {
            fprintf(stderr, "FAIL: CLOPS_REQUIRE_DEVICE=1 but no OpenCL device was found\n");
            return 1;
        }
        fprintf(stderr, "SKIP: no OpenCL device; exiting 77\n");
        return SKIP;
    }
    if (code != 0) {
        fprintf(stderr, "FAIL: the child exited %d\n", code);
        return 1;
    }
    printf("100%%: the child unloaded libclops with a fallback execution pending and exited cleanly\n");
    return 0;
}
