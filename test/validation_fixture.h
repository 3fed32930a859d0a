/* validation_fixture.h - what the validation suites (test_validation,
 * test_validation_exec) share: descriptor builders, the message check and the
 * status assertion. Header only, like test_common.h. */
#ifndef CLOPS_TEST_VALIDATION_FIXTURE_H
#define CLOPS_TEST_VALIDATION_FIXTURE_H

#include <limits.h>

#include "test_common.h"

/* Whether `msg` contains one of the '|'-separated alternatives of `alts`. */
static inline int msg_has(const char *msg, const char *alts)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", alts);
    for (char *p = buf; p;) {
        char *bar = strchr(p, '|');
        if (bar)
            *bar = '\0';
        if (*p && strstr(msg, p))
            return 1;
        p = bar ? bar + 1 : NULL;
    }
    return 0;
}

/* clops_last_error_message() is set and contains one of `needle`'s alternatives (NULL: only non-empty). */
static inline void check_message(const char *what, const char *call, const char *needle)
{
    const char *m = clops_last_error_message();
    ck_assert_msg(m != NULL, "%s: %s: clops_last_error_message() is NULL", what, call);
    ck_assert_msg(m[0] != '\0', "%s: %s failed but clops_last_error_message() is empty", what, call);
    if (needle)
        ck_assert_msg(msg_has(m, needle), "%s: %s: message \"%s\" does not name the offending value (%s)", what, call,
                      m, needle);
}

#define ASSERT_STATUS(st, want, what, call)                                                          \
    ck_assert_msg((st) == (want), "%s: %s returned %s (%d), want %s (%d); last error message: \"%s\"", (what), \
                  (call), clops_status_name(st), (int)(st), clops_status_name(want), (int)(want),      \
                  clops_last_error_message())

/* Descriptor builders. */
typedef struct ds_desc {
    clops_tensor_desc in, out;
    clops_depth_to_space_desc d;
    clops_operator_desc op;
} ds_desc;
static inline void make_ds(ds_desc *x, clops_operator_type type, clops_data_type t, const uint32_t in[4],
                    const uint32_t out[4], uint32_t block, clops_depth_space_order order)
{
    memset(x, 0, sizeof *x);
    x->in.data_type = t;
    x->out.data_type = t;
    memcpy(x->in.sizes, in, sizeof x->in.sizes);
    memcpy(x->out.sizes, out, sizeof x->out.sizes);
    x->d.input = &x->in;
    x->d.output = &x->out;
    x->d.block_size = block;
    x->d.order = order;
    x->op.type = type;
    x->op.desc = &x->d; /* clops_space_to_depth_desc has the same members */
}

typedef struct up_desc {
    clops_tensor_desc in, idx, out;
    clops_max_unpooling_desc d;
    clops_operator_desc op;
} up_desc;
static inline void make_up(up_desc *x, clops_data_type t, clops_data_type it, const uint32_t in[4], const uint32_t out[4])
{
    memset(x, 0, sizeof *x);
    x->in.data_type = t;
    x->idx.data_type = it;
    x->out.data_type = t;
    memcpy(x->in.sizes, in, sizeof x->in.sizes);
    memcpy(x->idx.sizes, in, sizeof x->idx.sizes);
    memcpy(x->out.sizes, out, sizeof x->out.sizes);
    x->d.input = &x->in;
    x->d.indices = &x->idx;
    x->d.output = &x->out;
    x->op.type = CLOPS_OPERATOR_MAX_UNPOOLING;
    x->op.desc = &x->d;
}

#define D2S CLOPS_OPERATOR_DEPTH_TO_SPACE
#define S2D CLOPS_OPERATOR_SPACE_TO_DEPTH
#define DCR CLOPS_ORDER_DEPTH_COLUMN_ROW
#define CRD CLOPS_ORDER_COLUMN_ROW_DEPTH
#define F32 CLOPS_DATA_TYPE_FLOAT32

static const uint32_t up_in[4] = {1, 3, 2, 2}, up_out[4] = {1, 3, 4, 4};

#endif
