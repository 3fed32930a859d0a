/* api.h - what the public API layer (lib/api/) gives the tuner above it. Not installed. */
#ifndef CLOPS_API_H
#define CLOPS_API_H

#include "ops/ops.h"

/* An operator whose kernel variant uses `force` instead of the tuned or default
 * parameters: how the tuner builds its candidates. */
clops_status clops_operator_create_forced(clops_context *ctx, const clops_operator_desc *desc,
                                          const clops_tuning *force, clops_operator **out);

#endif /* CLOPS_API_H */
