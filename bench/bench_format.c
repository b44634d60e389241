/* heaptape -- tape encode/decode throughput and bytes per event, and the
** stack encoding compared with OCaml memtrace's cache + prediction scheme.
**
** usage: bench_format [--runs N] [TAPE...]
** Without tapes it uses a synthetic stream shaped like a real program (Zipf
** popular stacks, small sizes, LIFO address reuse). With tapes, it re-encodes
** their events and stacks (recorded from real programs) on one thread. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/map.h"
#include "format/reader.h"
#include "format/writer.h"

typedef struct Ev {
  uint8_t type, kind;        /* HT_EV_ALLOC or HT_EV_FREE, kind */
  uint64_t addr, size;       /* block */
  uint32_t stack;            /* index into stacks */
} Ev;

typedef struct Work {
  Ev *ev; size_t nev;        /* events */
  uint64_t **stk;            /* stacks: frame values outermost first */
  int *depth; size_t nstk;   /* their depths, count */
} Work;

/* CPU time of this thread in seconds. */
static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* robust on a busy machine */
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rs = 88172645463325252ULL;
/* xorshift64. */
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }

/* A synthetic program: 2000 stacks (depth 8-40) sharing prefixes, Zipf use. */
static void synth(Work *w, size_t n)
{
  w->nstk = 2000;
  w->stk = calloc(w->nstk, sizeof(*w->stk));
  w->depth = calloc(w->nstk, sizeof(int));
  for (size_t i = 0; i < w->nstk; i++) {
    int d = 8 + (int)(rnd() % 33);
    w->stk[i] = malloc(sizeof(uint64_t) * (size_t)d);
    w->depth[i] = d;
    for (int j = 0; j < d; j++) /* outer frames shared, inner ones spread */
      w->stk[i][j] = (0x400000 + (j < 6 ? (uint64_t)j * 64 : (rnd() % (64u << (j / 4))) * 16)) << 1;
  }
  double *cdf = malloc(w->nstk * sizeof(double)), sum = 0;
  for (size_t i = 0; i < w->nstk; i++) cdf[i] = sum += 1.0 / (double)(i + 1);
  w->ev = malloc(n * sizeof(Ev));
  uint64_t *live = malloc(n * sizeof(uint64_t)), top = 0x555555560000ULL;
  size_t nlive = 0;
  w->nev = 0;
  while (w->nev < n) {
    Ev *e = &w->ev[w->nev++];
    if (nlive && rnd() % 100 < 48) { /* free, mostly recent blocks */
      size_t k = nlive - 1 - (rnd() % 100 < 80 ? 0 : rnd() % nlive);
      *e = (Ev){HT_EV_FREE, 0, live[k], 0, 0};
      live[k] = live[--nlive];
      continue;
    }
    double u = (double)(rnd() % 1000000) / 1e6 * sum;
    size_t lo = 0, hi = w->nstk - 1;
    while (lo < hi) { size_t m = (lo + hi) / 2; if (cdf[m] < u) lo = m + 1; else hi = m; }
    uint64_t size = rnd() % 100 < 90 ? 8 + rnd() % 256 : rnd() % 65536u;
    top += (size + 15) & ~15ULL;
    *e = (Ev){HT_EV_ALLOC, 0, top, size, (uint32_t)lo};
    live[nlive++] = top;
  }
  free(cdf);
  free(live);
}

/* Load the events and stacks of a recorded tape. */
static int load_tape(Work *w, const char *path)
{
  HtReader *r;
  char err[256];
  if (ht_reader_open(&r, path, err, sizeof(err))) {
    fprintf(stderr, "bench_format: %s: %s\n", path, err);
    return -1;
  }
  HtMap idx;
  ht_map_init(&idx, 1024);
  size_t cap = 1 << 16, scap = 1024;
  w->ev = malloc(cap * sizeof(Ev));
  w->stk = malloc(scap * sizeof(*w->stk));
  w->depth = malloc(scap * sizeof(int));
  w->nev = w->nstk = 0;
  HtEvent ev;
  while (ht_reader_next(r, &ev) > 0) {
    if (ev.type != HT_EV_ALLOC && ev.type != HT_EV_FREE) continue;
    if (w->nev == cap) w->ev = realloc(w->ev, (cap *= 2) * sizeof(Ev));
    uint32_t si = 0;
    if (ev.type == HT_EV_ALLOC) {
      uint64_t *k = ht_map_get(&idx, ev.stack);
      if (k) si = (uint32_t)*k;
      else {
        if (w->nstk == scap) {
          w->stk = realloc(w->stk, (scap *= 2) * sizeof(*w->stk));
          w->depth = realloc(w->depth, scap * sizeof(int));
        }
        uint64_t fr[256];
        size_t d = ht_reader_stack_frames(r, ev.stack, fr, 256);
        w->stk[w->nstk] = malloc(sizeof(uint64_t) * (d ? d : 1));
        for (size_t j = 0; j < d; j++) w->stk[w->nstk][j] = fr[d - 1 - j];
        w->depth[w->nstk] = (int)d;
        si = (uint32_t)w->nstk++;
        ht_map_put(&idx, ev.stack, si);
      }
    }
    w->ev[w->nev++] = (Ev){ev.type, ev.kind, ev.addr, ev.size, si};
  }
  ht_map_free(&idx);
  ht_reader_close(r);
  return 0;
}

typedef HtMemTape Mem;

/* Flush hook. */
static void flush(HtStream *s, void *ctx) { ht_writer_stream(ctx, s); }

/* Encode the work as a tape; stack tree ids are precomputed per stack (the
** recorder's capture and tree lookup are not part of this measurement), but
** each stack's nodes are defined in the stream when first used. */
static Mem encode(const Work *w, int zstd, double *secs)
{
  Mem m = {malloc(64 << 20), 0, 64 << 20};
  /* Precompute the tree: node id of each stack's leaf, and what to define. */
  HtMap nodes;
  ht_map_init(&nodes, 4096);
  uint64_t *leaf = calloc(w->nstk, sizeof(uint64_t)), *first = calloc(w->nstk, 8),
           *parent = calloc(w->nstk, 8), next = 1;
  int *from = calloc(w->nstk, sizeof(int));
  for (size_t i = 0; i < w->nstk; i++) {
    uint64_t p = 0;
    from[i] = w->depth[i];
    for (int j = 0; j < w->depth[i]; j++) {
      uint64_t key = ht_hash64(p * 0x9e3779b97f4a7c15ULL ^ w->stk[i][j]) | 1, *id;
      if ((id = ht_map_get(&nodes, key))) { p = *id; continue; }
      if (from[i] == w->depth[i]) { from[i] = j; parent[i] = p; first[i] = next; }
      ht_map_put(&nodes, key, next);
      p = next++;
    }
    leaf[i] = p;
  }
  ht_map_free(&nodes);
  uint8_t *defined = calloc(w->nstk, 1);
  double t0 = now();
  HtWriter *wr = ht_writer_new(ht_mem_sink, &m, zstd);
  HtTapeInfo info = {.pid = 1, .frontend = "bench"};
  ht_writer_header(wr, &info);
  static uint8_t buf[HT_PACKET_DEFAULT];
  HtStream s;
  ht_stream_init(&s, buf, sizeof(buf), 1, 1, flush, wr);
  for (size_t i = 0; i < w->nev; i++) {
    const Ev *e = &w->ev[i];
    if (e->type == HT_EV_FREE) { ht_stream_free(&s, i + 1, e->kind, e->addr, 0); continue; }
    if (!defined[e->stack]) {
      defined[e->stack] = 1;
      int f = from[e->stack];
      if (f < w->depth[e->stack])
        ht_stream_stack_define(&s, first[e->stack], parent[e->stack], w->stk[e->stack] + f,
                               (size_t)(w->depth[e->stack] - f));
    }
    ht_stream_alloc(&s, i + 1, e->kind, e->size, e->addr, leaf[e->stack], 0, 0);
  }
  ht_writer_stream(wr, &s);
  ht_writer_destroy(wr);
  *secs = now() - t0;
  free(leaf); free(first); free(parent); free(from); free(defined);
  return m;
}

/* Decode every event; returns seconds. */
static double decode(const Mem *m, size_t *n)
{
  double t0 = now();
  HtReader *r;
  char err[256];
  if (ht_reader_open_mem(&r, m->p, m->n, err, sizeof(err))) { fprintf(stderr, "%s\n", err); exit(1); }
  HtEvent ev;
  size_t k = 0;
  uint64_t sum = 0;
  while (ht_reader_next(r, &ev) > 0) { k++; sum += ev.stack; }
  ht_reader_close(r);
  *n = k + (sum & 0);
  return now() - t0;
}

/* Bytes the memtrace scheme would spend on the stacks of all allocations:
** common prefix with the previous stack (1 byte), then per frame a 2-byte
** cache index (+8 bytes on a miss) or a run of correct predictions
** (0, 1 or a count byte). A 2^14-entry two-way skewed-associative cache. */
static double memtrace_bytes(const Work *w)
{
  enum { CB = 14, NC = 1 << CB };
  uint64_t *key = calloc(NC, 8);
  uint32_t *pred = calloc(NC, 4), *age = calloc(NC, 4), clock = 0;
  const uint64_t *prev = NULL;
  int prevd = 0;
  double bytes = 0;
  size_t nalloc = 0;
  for (size_t i = 0; i < w->nev; i++) {
    if (w->ev[i].type != HT_EV_ALLOC) continue;
    nalloc++;
    const uint64_t *st = w->stk[w->ev[i].stack];
    int d = w->depth[w->ev[i].stack], c = 0;
    while (c < d && c < prevd && st[c] == prev[c]) c++;
    bytes += 1; /* common prefix length */
    uint32_t last = UINT32_MAX;
    for (int j = c; j < d;) {
      uint64_t f = st[j];
      uint32_t h1 = (uint32_t)(ht_hash64(f) & (NC - 1)),
               h2 = (uint32_t)(ht_hash64(f ^ 0x5bd1e995) & (NC - 1)), b;
      if (key[h1] == f) b = h1;
      else if (key[h2] == f) b = h2;
      else { b = age[h1] < age[h2] ? h1 : h2; key[b] = f; bytes += 8; }
      age[b] = ++clock;
      if (last != UINT32_MAX) pred[last] = b;
      bytes += 2;
      j++;
      int run = 0;
      uint32_t cur = b;
      while (j < d && run < 256) { /* follow correct predictions */
        uint32_t p = pred[cur];
        if (key[p] != st[j]) break;
        cur = p; j++; run++;
      }
      if (run > 1) bytes += 1;
      last = cur;
    }
    prev = st;
    prevd = d;
  }
  free(key); free(pred); free(age);
  return nalloc ? bytes / (double)nalloc : 0;
}

/* Median of n doubles (sorts them). */
static double median(double *v, int n)
{
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j] < v[j - 1]; j--) { double t = v[j]; v[j] = v[j - 1]; v[j - 1] = t; }
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Run the measurements on one workload and print a table row. */
static void measure(const char *name, const Work *w, int runs)
{
  double enc[2][32], dec[2][32];
  size_t bytes[2] = {0, 0}, nd = 0;
  for (int z = 0; z < 2; z++)
    for (int i = 0; i < runs; i++) {
      Mem m = encode(w, z, &enc[z][i]);
      bytes[z] = m.n;
      dec[z][i] = decode(&m, &nd);
      free(m.p);
    }
  size_t nalloc = 0;
  double depth = 0;
  for (size_t i = 0; i < w->nev; i++)
    if (w->ev[i].type == HT_EV_ALLOC) { nalloc++; depth += w->depth[w->ev[i].stack]; }
  /* Bytes spent on stacks by the tree: encode again without stacks. */
  Work flat = *w;
  int *zero = calloc(w->nstk, sizeof(int));
  flat.depth = zero;
  double t;
  Mem m0 = encode(&flat, 0, &t);
  double tree = nalloc ? (double)((long)bytes[0] - (long)m0.n) / (double)nalloc : 0;
  free(m0.p);
  free(zero);
  printf("| %s | %zu | %zu | %.1f | %.1f / %.1f | %.1f / %.1f | %.2f | %.2f | %.2f | %.2f |\n",
         name, w->nev, w->nstk, nalloc ? depth / (double)nalloc : 0,
         (double)w->nev / median(enc[0], runs) / 1e6, (double)w->nev / median(enc[1], runs) / 1e6,
         (double)w->nev / median(dec[0], runs) / 1e6, (double)w->nev / median(dec[1], runs) / 1e6,
         (double)bytes[0] / (double)w->nev, (double)bytes[1] / (double)w->nev, tree,
         memtrace_bytes(w));
  (void)nd;
}

int main(int argc, char **argv)
{
  int runs = 5, ntapes = 0;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
  if (runs < 1 || runs > 32) runs = 5;
  printf("| workload | events | stacks | mean depth | encode Mev/s | decode Mev/s |"
         " bytes/event raw | bytes/event zstd | tree bytes/stack | memtrace bytes/stack |\n");

  printf("|---|---|---|---|---|---|---|---|---|---|\n");
  fprintf(stderr, "encode/decode columns: raw packets / zstd level 1 packets, median of %d runs\n", runs);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--runs")) { i++; continue; }
    Work w;
    if (load_tape(&w, argv[i])) return 1;
    const char *base = strrchr(argv[i], '/');
    measure(base ? base + 1 : argv[i], &w, runs);
    ntapes++;
  }
  if (!ntapes) {
    Work w;
    synth(&w, 5000000);
    measure("synthetic", &w, runs);
  }
  return 0;
}
