/*
 * test_unpool_cli.c - `clops run max-unpooling --indices per-plane|flat` (issue 23)
 * on the PyTorch fixture in test/data (make_fixtures.py: torch's max_pool2d(3,
 * stride 2, padding 1, return_indices=True) of a (2, 3, 7, 6) float32 tensor,
 * whose indices count within each (n, c) plane, and torch's max_unpool2d of it;
 * checked against torch 1.13), on the host backend and on the default device; the
 * warning for flat indices that all fall in the first plane (issue 39), and a run
 * that compiles on a device printing nothing on stderr without --verbose.
 */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>

#include "cli_fixture.h"

#define UNPOOL_TORCH "run", "max-unpooling", "%D/torch_pool_values_f32.npy"

static const char *const device_args[2][2] = {{"--device", "host"}, {NULL, NULL}};

/* Per-plane indices with --indices per-plane, and the same made flat with the
 * default and with --indices flat, give max_unpool2d's output. */
START_TEST(test_cli_per_plane_fixture)
{
    const char *dev = device_args[_i][0], *devv = device_args[_i][1];
    const char *const layouts[3][2] = {{"--indices", "per-plane"}, {"--indices=flat", NULL}, {NULL, NULL}};
    const char *const indices[3] = {"%D/torch_pool_indices_i64.npy", "%D/torch_pool_indices_flat_i64.npy",
                                    "%D/torch_pool_indices_flat_i64.npy"};
    char out[512], want[512], label[160];
    tmp_path(out, sizeof out, "torch_out.npy");
    snprintf(want, sizeof want, "%s/torch_unpool_expected_f32.npy", data_dir);
    for (int l = 0; l < 3; l++) {
        const char *args[MAX_ARGS] = {UNPOOL_TORCH, indices[l], "%T/torch_out.npy", "--output-shape", "2,3,7,6"};
        int n = 7;
        for (int k = 0; k < 2 && layouts[l][k]; k++) args[n++] = layouts[l][k];
        if (dev) args[n++] = dev, args[n++] = devv;
        args[n] = NULL;
        snprintf(label, sizeof label, "%s indices%s%s [%s]", l ? "flat" : "per-plane",
                 layouts[l][0] ? " with " : ", no flag", layouts[l][0] ? layouts[l][0] : "",
                 dev ? "--device host" : "default device");
        unlink(out);
        run_argv(args);
        ck_assert_msg(res.exit_code == 0, "%s: exit %d, stderr: %s", label, res.exit_code, res.err);
        ck_assert_msg(strstr(res.err, "clops: warning") == NULL, "%s: a warning: %s", label, res.err);
        assert_same_npy(out, want, label);
    }
    /* PyTorch's indices read as flat are valid but land in the first planes: not the result. */
    const char *args[MAX_ARGS] = {UNPOOL_TORCH, "%D/torch_pool_indices_i64.npy", "%T/torch_out.npy",
                                  "--output-shape", "2,3,7,6", dev, devv, NULL};
    unlink(out);
    run_argv(args);
    ck_assert_msg(res.exit_code == 0, "flat reading of per-plane indices: exit %d, %s", res.exit_code, res.err);
    /* ... which the CLI says, as the Python package warns (issue 39): every index below 42 in 6 planes */
    ck_assert_msg(strstr(res.err, "clops: warning: max-unpooling: indices read as flat") &&
                      strstr(res.err, "every index is below 42, the size of one output plane, in an output of 6 planes") &&
                      strstr(res.err, "--indices per-plane"),
                  "flat reading of per-plane indices: no warning on stderr: %s", res.err);
    size_t got_len, want_len;
    unsigned char *got = slurp(out, &got_len), *w = slurp(want, &want_len);
    ck_assert_msg(got_len == want_len && memcmp(got, w, got_len) != 0,
                  "per-plane indices read as flat gave the per-plane result: the fixture proves nothing");
    free(got), free(w);
    unlink(out);
    assert_no_temp_files();
}
END_TEST

/* An index past its plane is out of range with --indices per-plane (it is a valid
 * flat index): exit 1, one error line, no output. A bad --indices is a usage error. */
START_TEST(test_cli_per_plane_errors)
{
    const uint64_t shape[4] = {1, 2, 1, 2};
    const int64_t idx[4] = {0, 3, 4, 1}; /* 4 is outside a 2x2 plane */
    const float vals[4] = {1, 2, 3, 4};
    make_array("pp_idx.npy", CLOPS_DATA_TYPE_INT64, 4, shape, idx, sizeof idx);
    make_array("pp_vals.npy", CLOPS_DATA_TYPE_FLOAT32, 4, shape, vals, sizeof vals);
    char out[512];
    tmp_path(out, sizeof out, "pp_out.npy");
    unlink(out);
    run("run", "max-unpooling", "%T/pp_vals.npy", "%T/pp_idx.npy", "%T/pp_out.npy", "--output-shape", "1,2,2,2",
        "--indices", "per-plane", "--device", "host", NULL);
    ck_assert_msg(res.exit_code == 1, "exit %d, stderr %s", res.exit_code, res.err);
    assert_error_line("per-plane index past its plane");
    ck_assert_msg(strstr(res.err, "CLOPS_ERROR_INDEX_OUT_OF_RANGE") && strstr(res.err, "per-plane"), "stderr: %s",
                  res.err);
    ck_assert_msg(!file_exists(out), "a failed run left %s", out);
    run("run", "max-unpooling", "%T/pp_vals.npy", "%T/pp_idx.npy", "%T/pp_out.npy", "--output-shape", "1,2,2,2",
        "--device", "host", NULL); /* flat: 4 is fine */
    ck_assert_msg(res.exit_code == 0, "flat: exit %d, stderr %s", res.exit_code, res.err);
    ck_assert_msg(res.err[0] == '\0', "flat indices past the first plane: stderr %s", res.err); /* no warning */
    unlink(out);
    /* Flat indices all in plane 0 of two: exit status 0, the output written, and the warning. */
    const int64_t first_plane[4] = {0, 3, 1, 2};
    make_array("pp_idx0.npy", CLOPS_DATA_TYPE_INT64, 4, shape, first_plane, sizeof first_plane);
    run("run", "max-unpooling", "%T/pp_vals.npy", "%T/pp_idx0.npy", "%T/pp_out.npy", "--output-shape", "1,2,2,2",
        "--device", "host", NULL);
    ck_assert_msg(res.exit_code == 0 && strstr(res.err, "clops: warning: max-unpooling:") &&
                      strstr(res.err, "every index is below 4, the size of one output plane, in an output of 2 planes"),
                  "flat indices in plane 0 of 2: exit %d, stderr %s", res.exit_code, res.err);
    ck_assert_msg(file_exists(out), "the warned run wrote no %s", out);
    unlink(out);
    /* ... but not with --indices per-plane, nor for an output of one plane (the same indices, W 4). */
    run("run", "max-unpooling", "%T/pp_vals.npy", "%T/pp_idx0.npy", "%T/pp_out.npy", "--output-shape", "1,2,2,2",
        "--indices", "per-plane", "--device", "host", NULL);
    ck_assert_msg(res.exit_code == 0 && res.err[0] == '\0', "per-plane: exit %d, stderr %s", res.exit_code, res.err);
    unlink(out);
    const uint64_t one_plane[4] = {1, 1, 1, 4};
    make_array("pp_idx1.npy", CLOPS_DATA_TYPE_INT64, 4, one_plane, first_plane, sizeof first_plane);
    make_array("pp_vals1.npy", CLOPS_DATA_TYPE_FLOAT32, 4, one_plane, vals, sizeof vals);
    run("run", "max-unpooling", "%T/pp_vals1.npy", "%T/pp_idx1.npy", "%T/pp_out.npy", "--output-shape", "1,1,2,4",
        "--device", "host", NULL);
    ck_assert_msg(res.exit_code == 0 && res.err[0] == '\0', "one plane: exit %d, stderr %s", res.exit_code, res.err);
    unlink(out);
    run("run", "max-unpooling", "%T/pp_vals.npy", "%T/pp_idx.npy", "%T/pp_out.npy", "--output-shape", "1,2,2,2",
        "--indices", "plane", NULL);
    ck_assert_msg(res.exit_code == 2 && strstr(res.err, "--indices must be flat or per-plane, not 'plane'"),
                  "exit %d, stderr %s", res.exit_code, res.err);
    ck_assert_msg(!file_exists(out), "a usage error left %s", out);
    run("run", "max-unpooling", "--help", NULL);
    ck_assert_msg(res.exit_code == 0 && strstr(res.out, "--indices flat|per-plane"), "help: %s", res.out);
    assert_no_temp_files();
}
END_TEST

/* A run that compiles its program on a device (an empty program cache, PoCL's own cache off) prints
 * nothing on stderr without --verbose: no line of the driver's compiler ("11 warnings generated.",
 * issue 39); --verbose prints its report. */
START_TEST(test_cli_compile_quiet)
{
    if (!have_device) {
        fprintf(stderr, "SKIP: no OpenCL device: the compile's stderr not tested\n");
        return;
    }
    char cache[512];
    tmp_path(cache, sizeof cache, "quiet-cache");
    const char *suite_cache = getenv("CLOPS_CACHE_DIR");
    char *saved = suite_cache ? strdup(suite_cache) : NULL;
    setenv("CLOPS_CACHE_DIR", cache, 1);
    setenv("POCL_KERNEL_CACHE", "0", 1);
    /* DepthToSpace's program: MaxUnpooling's takes minutes to compile on a busy 2-core machine */
    run("run", "depth-to-space", "%D/dml_input_u32.npy", "%T/quiet.npy", "--block-size", "2", "--device", "0", NULL);
    ck_assert_msg(res.exit_code == 0 && res.err[0] == '\0', "depth-to-space on device 0, compiled: exit %d, stderr: %s",
                  res.exit_code, res.err);
    unsetenv("POCL_KERNEL_CACHE");
    run("run", "depth-to-space", "%D/dml_input_u32.npy", "%T/quiet.npy", "--block-size", "2", "--order", "crd",
        "--device", "0", "--verbose", NULL);
    ck_assert_msg(res.exit_code == 0 && strstr(res.err, "clops: program cache: "), "--verbose: exit %d, stderr: %s",
                  res.exit_code, res.err);
    if (saved) setenv("CLOPS_CACHE_DIR", saved, 1);
    else unsetenv("CLOPS_CACHE_DIR");
    free(saved);
    char out[512];
    tmp_path(out, sizeof out, "quiet.npy");
    unlink(out);
}
END_TEST

static Suite *unpool_cli_suite(void)
{
    Suite *s = suite_create("unpool_cli");
    TCase *tc = cli_case(s);
    tcase_add_loop_test(tc, test_cli_per_plane_fixture, 0, 2);
    tcase_add_test(tc, test_cli_per_plane_errors);
    tcase_add_test(tc, test_cli_compile_quiet);
    return s;
}

int main(void)
{
    return cli_suite_main(unpool_cli_suite());
}
