/* heaptape -- continuous profiling while recording: the record parent
** follows the growing tape and writes a pprof snapshot every N seconds.
**
** The recorder's writer thread flushes the tape at least every 100 ms. One
** followed reader (ht_reader_open_follow) and one model are kept between
** snapshots: each snapshot reads only the packets written since the last
** one, so its cost follows the recording's rate, never its length (it
** re-read the whole tape each time before: quadratic in the run's length).
** The program never pauses: all of this happens in the parent process.
** The tape has no symbols yet (they are appended at exit), so native
** addresses are symbolised here with libdw, one symboliser kept across
** snapshots. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "cmds.h"
#include "record_pprof.h"
#include "../src/analyze/follow.h"
#include "../src/analyze/symbolize.h"
#include "../src/output/pprof.h"

/* State kept across snapshots. */
typedef struct RecPprof {
  const char *tape;          /* tape being recorded */
  pid_t pid;                 /* its process: a file of another is not read */
  HtSymbolizer *sym;         /* live symboliser, or NULL */
  HtMap declared;            /* module bases declared to sym */
  uint64_t since;            /* tape time the previous snapshot covered */
  unsigned seq;              /* snapshots written */
  HtReader *r;               /* the followed tape, NULL until it is there */
  HtModel m;                 /* sites by (stack, thread, domain) so far */
  HtSymOut out[16];          /* last lookup */
  HtSealFollow *sf;          /* the sealer followed instead, or NULL */
  HtSymbolizer *lsym;        /* symboliser of the snapshot being written */
} RecPprof;

/* Monotonic time in ns. */
static uint64_t recpprof_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* HtPprofSymFn: symbolise an address the tape does not name yet. */
static size_t recpprof_sym(void *arg, const HtTallyMod *mod, uint64_t ip,
                           HtSymbol *out, size_t max)
{
  RecPprof *rp = arg;
  (void)mod;
  if (!rp->lsym) return 0;
  size_t n = ht_symbolizer_lookup(rp->lsym, ip, rp->out, max < 16 ? max : 16);
  for (size_t i = 0; i < n; i++) {
    out[i].func = rp->out[i].func;
    out[i].file = rp->out[i].file;
    out[i].line = rp->out[i].line;
  }
  return n;
}

/* HtResFn: feed the model; declare modules to the symboliser as they come. */
static void recpprof_event(void *arg, const HtRes *res)
{
  RecPprof *rp = arg;
  const HtEvent *ev = res->ev;
  ht_model_res(&rp->m, res);
  if (ev->type == HT_EV_MODULE && rp->sym && !ht_map_get(&rp->declared, ev->addr)) {
    ht_symbolizer_event(rp->sym, ev, NULL);
    ht_map_put(&rp->declared, ev->addr, 1);
  }
}

/* Open the tape once this run's is there; 0 when it is (and the model). */
static int recpprof_open(RecPprof *rp)
{
  char err[512];
  if (ht_reader_open_follow(&rp->r, rp->tape, err, sizeof(err))) { rp->r = NULL; return -1; }
  HtModelOpts mo = {.at_ns = UINT64_MAX, .split = 1};
  if (ht_reader_header(rp->r)->pid != (uint32_t)rp->pid ||  /* an older tape */
      ht_model_init(&rp->m, rp->r, &mo)) {
    ht_reader_close(rp->r);
    rp->r = NULL;
    return -1;
  }
  return 0;
}

/* One snapshot: read what the tape gained (or take the sealer's model, as
** far as it sealed), write TAPE.NNNN.pb.gz. */
static void recpprof_snapshot(RecPprof *rp)
{
  char err[512];
  HtModel *m = rp->sf ? ht_sealfollow_model(rp->sf) : NULL;
  HtReader *r = m ? rp->sf->r : NULL;
  rp->lsym = m ? rp->sf->sy : rp->sym;
  if (!m) {
    if (!rp->r ? recpprof_open(rp) : ht_reader_poll(rp->r) < 0) return;  /* not written yet */
    m = &rp->m;
    r = rp->r;
    /* One thread: its packets come in order, everything flushed is taken.
    ** Several: a gap in the numbers may be another thread's packet to come,
    ** so the snapshot shows the heap up to where the order is sure (up to
    ** HT_FOLLOW_GAP_NS before the tape's end). */
    ht_reader_hold(r, m->nth <= 1 ? UINT64_MAX
                                  : ht_follow_hold_until(m, ht_reader_stats(r), 0));
    if (ht_resolve_run(&m->rs, r, recpprof_event, NULL, rp)) m->oom = 1;
  }
  HtTally t = {0};
  const HtHeader *h = ht_reader_header(r);
  HtPprof *p = ht_tally_from_model(&t, m, HT_INUSE_END) ? NULL : ht_pprof_new();
  HtPprofSrc src = {.r = r, .t = &t, .sym = recpprof_sym, .sym_arg = rp,
                    .time_ns = h->start_ns + t.last_ts,
                    .duration_ns = t.last_ts - (rp->since < t.last_ts ? rp->since : t.last_ts)};
  char name[4096], note[256];
  snprintf(name, sizeof(name), "%s.%04u.pb.gz", rp->tape, rp->seq + 1);
  snprintf(note, sizeof(note), "heaptape snapshot %u of %s at %.3f s: inuse now, "
           "alloc since %.3f s", rp->seq + 1, rp->tape, (double)t.last_ts / 1e9,
           (double)rp->since / 1e9);
  if (p && !ht_pprof_add(p, &src) && !ht_pprof_comment(p, note)) {
    if (ht_pprof_write(p, name, err, sizeof(err))) ht_cli_error("%s", err);
    else rp->seq++;
  }
  rp->since = t.last_ts;
  for (uint32_t i = 0; i < m->nsite; i++)  /* the next one counts calls anew */
    m->site[i].recent = m->site[i].recent_bytes = 0;
  ht_pprof_destroy(p);
  ht_tally_free(&t);
}

/* Wait for pid, writing snapshots every every_ns. */
pid_t ht_record_pprof_wait(pid_t pid, int *status, const char *tape, uint64_t every_ns,
                           HtSealFollow *sf)
{
  RecPprof rp;
  memset(&rp, 0, sizeof(rp));
  rp.tape = tape;
  rp.pid = pid;
  rp.sf = sf;
  if (tape && !ht_map_init(&rp.declared, 64)) rp.sym = ht_symbolizer_new(HT_SYM_QUIET);
  uint64_t next = recpprof_now() + every_ns;
  pid_t w;
  for (;;) {
    w = waitpid(pid, status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) break;
    if (sf && ht_sealfollow_poll(sf, 0) && recpprof_now() < next) continue;
    uint64_t now = recpprof_now();
    if (tape && now >= next) {
      recpprof_snapshot(&rp);
      next += every_ns;
      now = recpprof_now();
      if (next <= now) next = now + every_ns;  /* a slow snapshot skips a beat */
    }
    uint64_t nap = next > now ? next - now : 0;
    if (nap > 10000000) nap = 10000000;  /* notice the exit within 10 ms */
    struct timespec ts = {0, (long)nap};
    nanosleep(&ts, NULL);
  }
  if (rp.seq)
    ht_cli_error("%u pprof snapshot%s: %s.0001.pb.gz ... %s.%04u.pb.gz", rp.seq,
                 rp.seq == 1 ? "" : "s", tape, tape, rp.seq);
  if (rp.sym) ht_symbolizer_destroy(rp.sym);
  ht_map_free(&rp.declared);
  if (rp.r) {
    ht_model_free(&rp.m);
    ht_reader_close(rp.r);
  }
  return w;
}
