/* unpool_words.cl - MaxUnpooling's status words, shared by max_unpooling.cl (the
 * specialised programs) and portable.cl (the portable program): their names, and
 * how a kernel raises and reads them. Each execution has a generation number
 * `gen` (a kernel argument), larger than every earlier one, and a kernel records
 * an event by raising a word to gen, so a word equals gen exactly when this
 * execution raised it (max_unpooling.cl's header has the whole protocol; the
 * host's side is lib/ops/unpool.h). Needs `status` and `gen` in scope. */
/* The word of pair `w` that execution g raises. */
#define WORD_OF(w, g) ((w) + ((g) & 1u))
#define ST_GENERAL WORD_OF(0u, gen)
#define ST_POOL WORD_OF(2u, gen)
#define ST_OUT_OF_RANGE 4
#define ST_HEAVY 5
#define ST_BAD 6 /* and 7 */
/* Whether the operator's previous execution raised pair `w` (0: general, 2:
 * pool), read where this execution never writes. */
#define PREVIOUS(w) (status[WORD_OF(w, gen - 1u)] == gen - 1u)

/* The first bad index's row-major input position, for the message
 * (clops_operator_last_status): execution gen keeps the complement of the
 * smallest in status[ST_BAD + gen % 2] (atomic_max of ~position: 0 is none), and
 * every kernel's work-item 0 clears the other slot, which only the next
 * execution uses (executions of an operator run one after another). */
#define NEXT_BAD_CLEAR                                                                           \
    if (get_global_id(0) == 0) status[ST_BAD + ((gen + 1u) & 1u)] = 0u;
#define RAISE_BAD(first_bad)                                                                     \
    if ((first_bad) != UINT_MAX) {                                                               \
        atomic_max(&status[ST_OUT_OF_RANGE], gen);                                               \
        atomic_max(&status[ST_BAD + (gen & 1u)], ~(first_bad));                                  \
    }

/* Windows, pool and planes (only gated plans have them; the portable program's
 * windows and planes too) skip themselves when the general
 * path ran in the operator's previous execution, except every 16th execution
 * (the first included), which tries them again: scattered indices then cost the
 * general path alone. The rule reads only the previous execution's word, so
 * every work-item of every kernel of the execution decides alike, with one plain
 * load and no atomic (issue 37: the atomic read per work-item on one address
 * serialised a GPU); work-item 0 raises this execution's word for the general
 * path (and for the next execution) with a plain store, the launch's only write
 * to it. */
#define SKIP_RULE(w) ((gen & 15u) != 1u && PREVIOUS(w))
#define SKIP_RAISING(w)                                                                          \
    if (SKIP_RULE(w)) {                                                                          \
        if (get_global_id(0) == 0) status[WORD_OF(w, gen)] = gen;                                \
        return;                                                                                  \
    }

/* mark's words (max_unpooling_general.cl MARK): execution gen writes base + k + 1
 * for input position k, base = ((gen - 1) % period) * span; span and period are
 * set once by the host after the status words. */
#define ST_MARK_SPAN 12
#define ST_MARK_PERIOD 13
#define MARK_BASE (((gen - 1u) % status[ST_MARK_PERIOD]) * status[ST_MARK_SPAN])
