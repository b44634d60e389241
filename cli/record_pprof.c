/* heaptape -- continuous profiling while recording: the record parent
** re-reads the growing tape every N seconds and writes a pprof snapshot.
**
** The recorder's writer thread flushes the tape at least every 100 ms, and
** the reader recovers a tape cut after its last whole packet, so re-opening
** the file per snapshot sees everything flushed so far. Each snapshot costs
** one pass over the whole tape: fine for sampled tapes (--sample), which are
** small; an unsampled tape of a long run makes snapshots slower and slower.
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
  HtSymOut out[16];          /* last lookup */
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
  if (!rp->sym) return 0;
  size_t n = ht_symbolizer_lookup(rp->sym, ip, rp->out, max < 16 ? max : 16);
  for (size_t i = 0; i < n; i++) {
    out[i].func = rp->out[i].func;
    out[i].file = rp->out[i].file;
    out[i].line = rp->out[i].line;
  }
  return n;
}

/* One snapshot: re-read the tape, write TAPE.NNNN.pb.gz. */
static void recpprof_snapshot(RecPprof *rp)
{
  HtReader *r;
  char err[512];
  if (ht_reader_open(&r, rp->tape, err, sizeof(err))) return;  /* not written yet */
  if (ht_reader_header(r)->pid != (uint32_t)rp->pid) {  /* an older tape */
    ht_reader_close(r);
    return;
  }
  HtModelOpts mo = {.at_ns = UINT64_MAX, .split = 1, .since_ns = rp->since};
  HtModel m;
  HtTally t = {0};
  if (ht_model_init(&m, r, &mo)) { ht_reader_close(r); return; }
  HtEvent ev;
  while (ht_reader_next(r, &ev) > 0) {
    ht_model_event(&m, &ev);
    if (ev.type == HT_EV_MODULE && rp->sym && !ht_map_get(&rp->declared, ev.addr)) {
      char path[4096];
      size_t n = ev.len < sizeof(path) - 1 ? ev.len : sizeof(path) - 1;
      memcpy(path, ev.str, n);
      path[n] = 0;
      ht_symbolizer_module(rp->sym, path, ev.addr, ev.build_id, ev.build_id_len,
                           ev.segs, ev.nseg);
      ht_map_put(&rp->declared, ev.addr, 1);
    }
  }
  ht_model_finish(&m);
  const HtHeader *h = ht_reader_header(r);
  HtPprof *p = ht_tally_from_model(&t, &m, HT_INUSE_END) ? NULL : ht_pprof_new();
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
  ht_pprof_destroy(p);
  ht_tally_free(&t);
  ht_model_free(&m);
  ht_reader_close(r);
}

/* Wait for pid, writing snapshots every every_ns. */
pid_t ht_record_pprof_wait(pid_t pid, int *status, const char *tape, uint64_t every_ns)
{
  RecPprof rp;
  memset(&rp, 0, sizeof(rp));
  rp.tape = tape;
  rp.pid = pid;
  if (tape && !ht_map_init(&rp.declared, 64)) rp.sym = ht_symbolizer_new(HT_SYM_QUIET);
  uint64_t next = recpprof_now() + every_ns;
  pid_t w;
  for (;;) {
    w = waitpid(pid, status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) break;
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
  return w;
}
