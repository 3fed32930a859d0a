/*
 * fuzz_cli_args.c - the `clops` command line (clops_cli_main of tools/cli/,
 * linked in as the clops_cli_commands library) on arbitrary argument vectors.
 *
 * The input is split at newlines into at most 24 arguments after "clops".
 * Placeholders stand for files: "@0".."@7" for copies of test/data fixtures,
 * "@8" for a file that is not .npy at all, "@o" for an output path and "@p"
 * for a kernel-pack path, all in a temporary directory (fixtures a run
 * overwrote are restored). The CLI runs with that directory as its working
 * directory, any argument holding a '/' skips the input (so nothing is ever
 * written outside it), and every other file a run left there is removed.
 * The environment pins the host backend with no
 * OpenCL platform (OCL_ICD_VENDORS is an empty directory) and a private
 * program cache. Vectors naming `bench`, `bench-startup`, `tune` or
 * `conformance`, or an --output-shape of more than 2^22 elements, are skipped:
 * they are slow (or allocate near the device's limit) by design, not wrong.
 * Whatever the vector, the CLI must return 0, 1 or 2 without crashing.
 */
#define _XOPEN_SOURCE 700
#include "fuzz_common.h"

#include <sys/stat.h>

int clops_cli_main(int argc, char **argv);

#ifndef CLOPS_FUZZ_DATA
#error "CLOPS_FUZZ_DATA must name test/data"
#endif

#define NUM_FIXTURES 9
static const char *const fixture_names[NUM_FIXTURES] = {
    "dml_input_u32.npy",    "dml_input_u32_fortran.npy", "onnx_input_f32.npy",        "unpool_input_f32.npy",
    "unpool_indices_i64.npy", "unpool_indices_u32.npy",  "unpool_indices_bad_i64.npy", "dml_d2s_dcr_u32.npy",
    NULL /* @8: not a .npy file */};

typedef struct fixture {
    char path[600];
    unsigned char *bytes;
    size_t size;
    struct stat st;
} fixture;

static fixture fixtures[NUM_FIXTURES];
static char out_path[600], pack_path[600];

static void put_fixture(fixture *f)
{
    fz_write_file(f->path, f->bytes, f->size);
    if (stat(f->path, &f->st) != 0)
        abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *dir = fz_tmpdir();
    char path[600];
    for (int i = 0; i < NUM_FIXTURES; i++) {
        fixture *f = &fixtures[i];
        if (fixture_names[i]) {
            snprintf(path, sizeof path, "%s/%s", CLOPS_FUZZ_DATA, fixture_names[i]);
            FILE *in = fopen(path, "rb");
            if (!in) {
                perror(path);
                abort();
            }
            f->bytes = malloc(1 << 16);
            f->size = fread(f->bytes, 1, 1 << 16, in);
            fclose(in);
        } else {
            static const char text[] = "not a .npy file\n";
            f->bytes = malloc(sizeof text);
            memcpy(f->bytes, text, sizeof text - 1);
            f->size = sizeof text - 1;
        }
        snprintf(f->path, sizeof f->path, "%s/fixture%d.npy", dir, i);
        put_fixture(f);
    }
    snprintf(out_path, sizeof out_path, "%s/out.npy", dir);
    snprintf(pack_path, sizeof pack_path, "%s/kernels.pack", dir);
    snprintf(path, sizeof path, "%s/no-icd", dir);
    mkdir(path, 0700);
    setenv("OCL_ICD_VENDORS", path, 1);
    snprintf(path, sizeof path, "%s/cache", dir);
    setenv("CLOPS_CACHE_DIR", path, 1);
    setenv("CLOPS_DEVICE", "host", 1);
    setenv("CLOPS_TUNE", "off", 1);
    /* Relative output names land here, never in the caller's directory. */
    if (chdir(dir) != 0) {
        perror(dir);
        abort();
    }
    return 0;
}

/* Removes every file of the temporary directory that is not a fixture. */
static void remove_leftovers(void)
{
    DIR *d = opendir(fz_tmpdir());
    if (!d)
        abort();
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int keep = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || strcmp(e->d_name, "cache") == 0 ||
                   strcmp(e->d_name, "no-icd") == 0;
        for (int i = 0; i < NUM_FIXTURES && !keep; i++)
            keep = strcmp(strrchr(fixtures[i].path, '/') + 1, e->d_name) == 0;
        if (!keep) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", fz_tmpdir(), e->d_name);
            tc_rm_rf(path);
        }
    }
    closedir(d);
}

/* The product of the numbers in `s` (as in "1,2,70000,70000"), saturated. */
static uint64_t number_product(const char *s)
{
    uint64_t prod = 1, v = 0;
    int in_number = 0;
    for (;; s++) {
        if (*s >= '0' && *s <= '9') {
            v = v > (UINT64_C(1) << 40) ? v : v * 10 + (uint64_t)(*s - '0');
            in_number = 1;
        } else {
            if (in_number)
                prod = v && prod > UINT64_MAX / v ? UINT64_MAX : prod * v;
            v = 0;
            in_number = 0;
            if (!*s)
                return prod;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAX_ARGS = 24, MAX_ARG = 256 };
    static char storage[MAX_ARGS][MAX_ARG + 1];
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "clops";
    size_t pos = 0;
    while (pos < size && argc <= MAX_ARGS) {
        size_t len = 0;
        while (pos + len < size && data[pos + len] != '\n')
            len++;
        char *a = storage[argc - 1];
        size_t n = len < MAX_ARG ? len : MAX_ARG;
        memcpy(a, data + pos, n);
        a[n] = '\0';
        pos += len + 1;
        if (a[0] == '@' && a[1] >= '0' && a[1] < '0' + NUM_FIXTURES && !a[2])
            argv[argc++] = fixtures[a[1] - '0'].path;
        else if (strcmp(a, "@o") == 0)
            argv[argc++] = out_path;
        else if (strcmp(a, "@p") == 0)
            argv[argc++] = pack_path;
        else {
            if (strncmp(a, "bench", 5) == 0 || strcmp(a, "tune") == 0 || strcmp(a, "conformance") == 0 ||
                number_product(a) > (UINT64_C(1) << 22) || strchr(a, '/'))
                return 0;
            argv[argc++] = a;
        }
    }
    argv[argc] = NULL;

    const int rc = clops_cli_main(argc, argv);
    if (rc < 0 || rc > 2) {
        fprintf(stderr, "clops exited with %d\n", rc);
        abort();
    }
    fflush(stdout);
    remove_leftovers();
    for (int i = 0; i < NUM_FIXTURES; i++) { /* a run may have written over a fixture */
        struct stat st;
        fixture *f = &fixtures[i];
        if (stat(f->path, &st) != 0 || st.st_ino != f->st.st_ino || st.st_size != f->st.st_size ||
            st.st_mtim.tv_sec != f->st.st_mtim.tv_sec || st.st_mtim.tv_nsec != f->st.st_mtim.tv_nsec)
            put_fixture(f);
    }
    return 0;
}
