/* fixture.c - shared fixtures of the suites (fixture.h). */
#include "fixture.h"

#include "reference.h"

uint64_t tc_seed_of(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
    return h;
}

/* MaxUnpooling indices: random targets over the whole output (duplicates come
 * naturally); with `bad`, index 1 is one past the end and one more is out of
 * range in the index type's own way. */
static void fill_indices(void *idx, clops_data_type itype, size_t n, uint64_t out_n, uint64_t seed, int bad)
{
    const size_t is = clops_data_type_size(itype);
    uint64_t s = seed ^ 0x5bd1e995u;
    for (size_t k = 0; k < n; k++) {
        uint64_t v = tc_rng_next(&s) % out_n;
        if (bad && k == 1)
            v = out_n; /* one past the end */
        if (bad && k == 4 && itype == CLOPS_DATA_TYPE_INT64)
            v = (uint64_t)-1; /* negative */
        if (bad && k == 7 && itype == CLOPS_DATA_TYPE_UINT64)
            v = (1ull << 63) + 5; /* negative if read as int64 */
        if (bad && k == 9 && itype == CLOPS_DATA_TYPE_UINT32)
            v = UINT32_MAX;
        if (is == 4) {
            const uint32_t v32 = (uint32_t)v;
            memcpy((char *)idx + 4 * k, &v32, 4);
        } else {
            memcpy((char *)idx + 8 * k, &v, 8);
        }
    }
}

long tc_prepare_bad(tc_prepared *p, const tc_case *d, uint64_t seed, int bad)
{
    memset(p, 0, sizeof *p);
    p->def = d;
    const size_t es = clops_data_type_size(d->dtype);
    const uint32_t b = d->block;
    uint32_t out[4];
    if (d->type == CLOPS_OPERATOR_DEPTH_TO_SPACE) {
        const uint32_t o[4] = {d->in[0], d->in[1] / (b * b), d->in[2] * b, d->in[3] * b};
        memcpy(out, o, sizeof out);
    } else if (d->type == CLOPS_OPERATOR_SPACE_TO_DEPTH) {
        const uint32_t o[4] = {d->in[0], d->in[1] * b * b, d->in[2] / b, d->in[3] / b};
        memcpy(out, o, sizeof out);
    } else {
        memcpy(out, d->out, sizeof out);
    }
    p->esize = es;
    p->x.data_type = p->y.data_type = d->dtype;
    memcpy(p->x.sizes, d->in, sizeof p->x.sizes);
    memcpy(p->y.sizes, out, sizeof p->y.sizes);
    const size_t in_n = (size_t)ref_element_count(d->in), out_n = (size_t)ref_element_count(out);
    p->in = malloc(in_n * es + 1);
    p->sentinel = malloc(out_n * es + 1);
    p->want = malloc(out_n * es + 1);
    if (!p->in || !p->sentinel || !p->want)
        return -1;
    tc_fill_random(p->in, in_n * es, seed);
    tc_fill_sentinel(p->sentinel, out_n * es);
    memcpy(p->want, p->sentinel, out_n * es);
    p->bufs = (tc_bufs){p->in, in_n * es, NULL, 0, p->sentinel, out_n * es};
    ref_tensor rx, ry;
    ref_tensor_init(&rx, p->in, es, d->in, NULL);
    ref_tensor_init(&ry, p->want, es, out, NULL);
    switch (d->type) {
    case CLOPS_OPERATOR_DEPTH_TO_SPACE:
        p->d2s = (clops_depth_to_space_desc){&p->x, &p->y, b, d->order};
        p->desc = (clops_operator_desc){d->type, &p->d2s};
        return ref_depth_to_space(&rx, &ry, b, (ref_order)d->order);
    case CLOPS_OPERATOR_SPACE_TO_DEPTH:
        p->s2d = (clops_space_to_depth_desc){&p->x, &p->y, b, d->order};
        p->desc = (clops_operator_desc){d->type, &p->s2d};
        return ref_space_to_depth(&rx, &ry, b, (ref_order)d->order);
    default:
        break;
    }
    const size_t is = clops_data_type_size(d->itype);
    p->idx = malloc(in_n * is + 1);
    if (!p->idx)
        return -1;
    fill_indices(p->idx, d->itype, in_n, out_n, seed, bad);
    p->bufs.idx = p->idx;
    p->bufs.idx_bytes = in_n * is;
    p->i.data_type = d->itype;
    memcpy(p->i.sizes, d->in, sizeof p->i.sizes);
    p->mu = (clops_max_unpooling_desc){&p->x, &p->i, &p->y, CLOPS_INDICES_FLAT};
    p->desc = (clops_operator_desc){d->type, &p->mu};
    ref_tensor ri;
    ref_tensor_init(&ri, p->idx, is, d->in, NULL);
    const ref_index_kind kind = d->itype == CLOPS_DATA_TYPE_UINT32   ? REF_INDEX_UINT32
                                : d->itype == CLOPS_DATA_TYPE_UINT64 ? REF_INDEX_UINT64
                                                                     : REF_INDEX_INT64;
    return ref_max_unpooling(&rx, &ri, kind, &ry);
}

int tc_prepare(tc_prepared *p, const tc_case *d, uint64_t seed)
{
    return tc_prepare_bad(p, d, seed, 0) == 0 ? 0 : -1;
}

void tc_release(tc_prepared *p)
{
    free(p->in);
    free(p->idx);
    free(p->sentinel);
    free(p->want);
}

int tc_need_devices(size_t need, const char *why)
{
    size_t count = 0;
    const clops_status st = clops_device_list(NULL, 0, &count);
    if (st == CLOPS_SUCCESS && count >= need)
        return -1;
    const char *req = getenv("CLOPS_REQUIRE_DEVICE");
    const int required = req && strcmp(req, "1") == 0;
    fprintf(stderr, "%s: %zu OpenCL device%s (%s): %s\n", required ? "FAIL" : "SKIP", count, count == 1 ? "" : "s",
            clops_status_name(st), why);
    return required ? EXIT_FAILURE : 77;
}

TCase *tc_fixture_case(Suite *s, const char *name, void (*setup)(void), void (*teardown)(void))
{
    TCase *tc = tc_suite_case(s, name, -1);
    tcase_add_checked_fixture(tc, setup, teardown);
    return tc;
}

int tc_run_nofork(Suite *s)
{
    return tc_run_failures(s, 1) ? EXIT_FAILURE : EXIT_SUCCESS;
}

clops_buffers tc_cl_buffers(cl_context cl, const tc_prepared *p)
{
    cl_int err;
    clops_buffers b = {NULL, NULL, NULL};
    b.input = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, p->bufs.in_bytes, p->in, &err);
    if (p->bufs.idx_bytes)
        b.indices = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, p->bufs.idx_bytes, p->idx, &err);
    b.output = clCreateBuffer(cl, CL_MEM_READ_WRITE, p->bufs.out_bytes, NULL, &err);
    return b;
}
