/* op_table.c - the table of operators: one entry per operator type, each
 * defined in the operator's own file (depth_space.c, max_unpooling.c). The unit
 * below everything that reaches an operator through it (validate.c, ops.c,
 * fallback.c); it calls nothing. */
#include "ops/ops.h"

static const clops_op_entry *const table[] = {
    &clops_depth_to_space_op,
    &clops_space_to_depth_op,
    &clops_max_unpooling_op,
};

const clops_op_entry *clops_op_lookup(clops_operator_type type)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i]->type == type) return table[i];
    return NULL;
}
