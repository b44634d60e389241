/* heaptape -- the text form of an operations stream with Lock/Unlock ops:
** `heaptape ops` lines plus "SEQ TID K HANDLE" and "SEQ TID U HANDLE". */
#include <inttypes.h>

#include "lockops.h"

/* The first line: the format, the model and its parameter. */
void ht_lockops_head(FILE *f, const HtLocks *l, int access)
{
  fprintf(f, "# heaptape ops 1: seq tid N handle size [C|A<align>|R<old>] | seq tid F handle [R]"
             "%s | seq tid K handle | seq tid U handle\n",
          access ? " | seq tid L|S|M handle address size" : "");
  if (l->model == HT_LOCKS_COARSE)
    fprintf(f, "# locks coarse: blocks living >= %u%% of the ops locked from New to Free\n",
            l->global_pct);
  else
    fprintf(f, "# locks fine: life +1 on a block's own op, -0.5 on others', locked while > 0\n");
}

/* One op as a line. */
void ht_lockops_print(FILE *f, const HtOp *op)
{
  if (op->op == HT_OP_LOCK || op->op == HT_OP_UNLOCK)
    fprintf(f, "%" PRIu64 " %" PRIu32 " %c %" PRIu64 "\n", op->seq, op->tid, op->op, op->handle);
  else if (op->op == HT_OP_NEW || op->op == HT_OP_FREE) ht_ops_print(f, op);
  else  /* an access, as `ops --access` prints it */
    fprintf(f, "%" PRIu64 " %" PRIu32 " %c %" PRIu64 " 0x%" PRIx64 " %" PRIu64 "\n", op->seq,
            op->tid, op->op, op->handle, op->addr, op->size);
}

/* The last line: counts of the ops stream and of the locks. */
void ht_lockops_tail(FILE *f, const HtOps *o, const HtLocks *l)
{
  fprintf(f, "# ops %" PRIu64 " handles %" PRIu64 " live %" PRIu64 " bytes %" PRIu64
          " peak %" PRIu64 " unknown-frees %" PRIu64 " locks %" PRIu64 " unlocks %" PRIu64
          " locked %" PRIu64, o->nops, o->next_handle - 1, o->live_n, o->live_bytes, o->peak,
          o->unknown_frees, l->locks, l->unlocks, l->locked);
  if (l->model == HT_LOCKS_COARSE) fprintf(f, " global %" PRIu64, l->globals);
  fputc('\n', f);
}
