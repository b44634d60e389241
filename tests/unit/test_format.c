/* heaptape -- tape writer/reader round trips, determinism, truncation at every
** offset and bit flips, on random multi-threaded event streams.
** With --held JOURNAL: read it as a follower that waits at every gap in the
** numbers no EXT VOID explains, and print how many of its heap events that
** reader gets (exit 0 when all; tests/integration/record_seal.sh). */
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "testhelper.h"
#include "base/map.h"
#include "format/reader.h"
#include "format/writer.h"
#include "heaptape.h"

/* -- A deterministic generator of tapes ------------------------------------ */

typedef struct Exp {
  uint8_t type, kind;        /* HT_EV_*, HT_K_* */
  uint32_t tid;              /* thread */
  uint64_t seq;              /* sequence number */
  uint64_t addr, size;       /* block, bytes (or RSS) */
  uint64_t align, weight;    /* alignment, explicit weight */
  int depth;                 /* frames, outermost first in frames[] */
  uint64_t frames[48];       /* frame values */
  char str[24];              /* THREAD / MARK text */
} Exp;

typedef HtMemTape Mem;

typedef struct GenThread {
  HtStream s;                /* encoder */
  uint8_t buf[2048];         /* packet body */
  HtMap nodes;               /* hash(parent, frame) -> local id */
  uint64_t next_id;          /* next local id */
  uint64_t ts;               /* thread clock */
} GenThread;

static uint64_t rng_state;

/* xorshift64* with a fixed seed per run. */
static uint64_t rnd(void)
{
  rng_state ^= rng_state >> 12; rng_state ^= rng_state << 25; rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ULL;
}

/* Flush hook: seal the packet through the writer. */
static void gen_flush(HtStream *s, void *ctx) { ht_writer_stream(ctx, s); }

/* Write the stack of e into t's stream (defining new nodes); return its id. */
static uint64_t gen_stack(GenThread *t, const Exp *e)
{
  uint64_t parent = 0;
  for (int i = 0; i < e->depth; i++) {
    uint64_t key = ht_hash64(parent * 0x9e3779b97f4a7c15ULL ^ e->frames[i]) | 1;
    uint64_t *id = ht_map_get(&t->nodes, key);
    if (id) { parent = *id; continue; }
    uint64_t first = t->next_id;
    ht_stream_stack_define(&t->s, first, parent, e->frames + i, (size_t)(e->depth - i));
    for (int j = i; j < e->depth; j++) {
      key = ht_hash64(parent * 0x9e3779b97f4a7c15ULL ^ e->frames[j]) | 1;
      ht_map_put(&t->nodes, key, t->next_id);
      parent = t->next_id++;
    }
    break;
  }
  return parent;
}

/* Make a random event for thread tid. */
static void gen_event(Exp *e, uint32_t tid, uint64_t seq, int rt_pool)
{
  static const uint64_t pool[] = {0x401000, 0x401234, 0x7f0000123456ULL,
    0x7fffffffffffULL, 0x555555554000ULL, 0x3fffffffffffffffULL, 0x10, 0x401238};
  memset(e, 0, sizeof(*e));
  e->tid = tid;
  e->seq = seq;
  unsigned r = (unsigned)(rnd() % 100);
  if (r < 55) {
    e->type = HT_EV_ALLOC;
    static const uint8_t kinds[] = {0, 0, 0, HT_K_CALLOC, HT_K_REALLOC, HT_K_ALIGNED,
      HT_K_NEW, HT_K_NEW_ARRAY_ALIGNED, HT_K_RUNTIME | HT_K_DOMAIN_RT};
    e->kind = kinds[rnd() % sizeof(kinds)];
    e->size = rnd() % 8 == 0 ? rnd() >> (rnd() % 64) : rnd() % 4096;
    e->addr = rnd() % 16 == 0 ? rnd() : 0x555555560000ULL + (rnd() % 65536) * 16;
    if (HT_K_HAS_ALIGN(e->kind)) e->align = 1ULL << (rnd() % 20);
    if (rnd() % 10 == 0) e->weight = 1 + rnd() % 100000;
    int d = (int)(rnd() % 40);
    if (rnd() % 10 == 0) d = 0;
    e->depth = d;
    for (int i = 0; i < d; i++) {
      uint64_t v = pool[rnd() % 8] << 1;
      if (rt_pool && rnd() % 3 == 0) v = (rnd() % 50) << 1 | 1;
      if (i > 5 && rnd() % 4 == 0) v = e->frames[i - 1]; /* recursion */
      e->frames[i] = v;
    }
  } else if (r < 90) {
    e->type = HT_EV_FREE;
    e->kind = rnd() % 5 == 0 ? HT_K_SIZED : 0;
    e->addr = 0x555555560000ULL + (rnd() % 65536) * 16;
    if (HT_K_HAS_SIZE(e->kind)) e->size = rnd() % 5000;
  } else if (r < 94) {
    e->type = HT_EV_MARK;
    snprintf(e->str, sizeof(e->str), "mark-%llu", (unsigned long long)seq);
  } else if (r < 97) {
    e->type = HT_EV_THREAD;
    snprintf(e->str, sizeof(e->str), "worker %u", tid);
  } else {
    e->type = HT_EV_RSS;
    e->size = rnd() % (1ULL << 40);
  }
}

/* Write a tape of n events over nth threads; fills exp (seq order). */
static Mem gen_tape(uint64_t seed, int nth, size_t n, int zstd, Exp *exp)
{
  rng_state = seed;
  Mem m = {0};
  HtWriter *w = ht_writer_new(ht_mem_sink, &m, zstd);
  HtTapeInfo info = {.pid = 4242, .exe = "/bin/gen", .argv = "gen\0-x", .argv_len = 6,
                     .clock = HT_CLOCK_MOCK, .clock_res = 1, .start_ns = 1000,
                     .frames = 48, .frontend = "test"};
  ht_writer_header(w, &info);
  GenThread *th = calloc((size_t)nth, sizeof(GenThread));
  for (int i = 0; i < nth; i++) {
    ht_stream_init(&th[i].s, th[i].buf, sizeof(th[i].buf), 4242, 100 + (uint32_t)i,
                   gen_flush, w);
    ht_map_init(&th[i].nodes, 64);
    th[i].next_id = 1;
  }
  uint64_t seq = 0;
  for (size_t i = 0; i < n; i++) {
    int t = (int)(rnd() % (uint64_t)nth);
    GenThread *g = &th[t];
    seq += 1 + (rnd() % 8 == 0 ? rnd() % 1000 : 0);
    Exp *e = &exp[i];
    gen_event(e, 100 + (uint32_t)t, seq, t % 2);
    if (rnd() % 16 == 0) { g->ts += rnd() % 5000000; ht_stream_time(&g->s, g->ts); }
    if (rnd() % 500 == 0) {
      ht_stream_stack_reset(&g->s);
      ht_map_free(&g->nodes);
      ht_map_init(&g->nodes, 64);
      g->next_id = 1;
    }
    switch (e->type) {
    case HT_EV_ALLOC: {
      uint64_t id = gen_stack(g, e);
      ht_stream_alloc(&g->s, seq, e->kind, e->size, e->addr, id, e->align, e->weight);
      break;
    }
    case HT_EV_FREE: ht_stream_free(&g->s, seq, e->kind, e->addr, e->size); break;
    case HT_EV_MARK: ht_stream_string(&g->s, HT_R_MARK, seq, e->str, strlen(e->str)); break;
    case HT_EV_THREAD: ht_stream_string(&g->s, HT_R_THREAD, seq, e->str, strlen(e->str)); break;
    case HT_EV_RSS: ht_stream_value(&g->s, HT_R_RSS, seq, e->size); break;
    }
  }
  for (int i = 0; i < nth; i++) { ht_writer_stream(w, &th[i].s); ht_map_free(&th[i].nodes); }
  HtDict *d = ht_dict_new();
  HtSymFrame f[2] = {{ht_dict_str(d, "inner"), ht_dict_str(d, "a.c"), 10},
                     {ht_dict_str(d, "outer"), ht_dict_str(d, "b.c"), 20}};
  ht_dict_sym(d, 0x401234, f, 2);
  for (uint64_t id = 0; id < 50; id++)
    ht_dict_loc(d, id, HT_L_LUA, 0, ht_dict_str(d, "@test.lua"), id, 1);
  ht_dict_flush(d, w, 4242);
  ht_dict_destroy(d);
  HtTrailer tr = {.events = n, .end_ns = 99, .status = 0};
  ht_writer_trailer(w, &tr);
  ht_writer_destroy(w);
  free(th);
  return m;
}

/* -- Checking -------------------------------------------------------------- */

/* Whether a delivered event matches its expectation; stacks may be partly
** unknown (frame 0) when lost_ok. */
static int event_matches(HtReader *r, const HtEvent *ev, const Exp *e, int lost_ok)
{
  if (ev->type != e->type || ev->seq != e->seq || ev->tid != e->tid || ev->pid != 4242)
    return 0;
  switch (e->type) {
  case HT_EV_ALLOC: {
    if (ev->kind != e->kind || ev->addr != e->addr || ev->size != e->size ||
        ev->align != e->align) return 0;
    if (e->weight && ev->weight != e->weight) return 0;
    if (!e->weight && ev->weight != e->size) return 0;
    uint64_t fr[64];
    size_t n = ht_reader_stack_frames(r, ev->stack, fr, 64);
    int same = n == (size_t)e->depth;
    for (size_t i = 0; same && i < n; i++) same = fr[i] == e->frames[e->depth - 1 - i];
    if (same) return 1;
    if (!lost_ok) return 0;
    for (size_t i = 0; i < n; i++) if (fr[i] == 0) return 1;
    return 0;
  }
  case HT_EV_FREE:
    return ev->kind == e->kind && ev->addr == e->addr &&
           (!HT_K_HAS_SIZE(e->kind) || ev->size == e->size);
  case HT_EV_MARK: case HT_EV_THREAD:
    return ev->len == strlen(e->str) && !memcmp(ev->str, e->str, ev->len);
  case HT_EV_RSS: return ev->size == e->size;
  }
  return 0;
}

/* Find the expectation with sequence number seq (exp is in seq order). */
static const Exp *find_exp(const Exp *exp, size_t n, uint64_t seq)
{
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (exp[mid].seq < seq) lo = mid + 1; else hi = mid;
  }
  return lo < n && exp[lo].seq == seq ? &exp[lo] : NULL;
}

/* Read a tape; count events, and how many did not match. */
static int read_all(const uint8_t *p, size_t len, const Exp *exp, size_t n, int lost_ok,
                    size_t *got, size_t *bad)
{
  HtReader *r;
  char err[200];
  int rc = ht_reader_open_mem(&r, p, len, err, sizeof(err));
  *got = *bad = 0;
  if (rc) return rc;
  HtEvent ev;
  uint64_t last = 0, ts = 0;
  while (ht_reader_next(r, &ev) > 0) {
    const Exp *e = find_exp(exp, n, ev.seq);
    if (!e || !event_matches(r, &ev, e, lost_ok) || ev.seq <= last || ev.ts < ts) (*bad)++;
    last = ev.seq;
    ts = ev.ts;
    (*got)++;
  }
  ht_reader_close(r);
  return 0;
}

/* -- Tests ----------------------------------------------------------------- */

static void test_roundtrip(void)
{
  for (int zstd = 0; zstd <= 1; zstd++) {
    size_t n = 20000;
    Exp *exp = malloc(n * sizeof(Exp));
    Mem m = gen_tape(12345 + (uint64_t)zstd, 8, n, zstd, exp);
    size_t got, bad;
    CHECK_EQ(read_all(m.p, m.n, exp, n, 0, &got, &bad), 0);
    CHECK_EQ(got, n);
    CHECK_EQ(bad, 0);
    HtReader *r;
    char err[200];
    CHECK_EQ(ht_reader_open_mem(&r, m.p, m.n, err, sizeof(err)), 0);
    const HtHeader *h = ht_reader_header(r);
    CHECK_EQ(h->pid, 4242);
    CHECK(!strcmp(h->exe, "/bin/gen"));
    CHECK(!strcmp(h->frontend, "test"));
    CHECK_EQ(h->argv_len, 6);
    const HtSymbol *s;
    CHECK_EQ(ht_reader_symbol(r, 0x401234, &s), 2);
    CHECK(s && !strcmp(s[0].func, "inner") && !strcmp(s[1].file, "b.c") && s[1].line == 20);
    const HtLocation *l = ht_reader_location(r, 7);
    CHECK(l && l->kind == HT_L_LUA && l->line == 7 && !strcmp(l->file, "@test.lua"));
    const HtReadStats *st = ht_reader_stats(r);
    CHECK(st->has_trailer);
    CHECK_EQ(st->damaged, 0);
    CHECK_EQ(st->events, n);
    /* A second pass after rewind delivers the same stream. */
    HtEvent ev;
    size_t k = 0;
    while (ht_reader_next(r, &ev) > 0) k++;
    ht_reader_rewind(r);
    size_t k2 = 0, bad2 = 0;
    while (ht_reader_next(r, &ev) > 0) {
      if (!event_matches(r, &ev, &exp[k2], 0)) bad2++;
      k2++;
    }
    CHECK_EQ(k2, k);
    CHECK_EQ(bad2, 0);
    CHECK_EQ(ht_reader_stats(r)->damaged, 0);
    ht_reader_close(r);
    free(m.p);
    free(exp);
  }
}

static void test_deterministic_bytes(void)
{
  size_t n = 5000;
  Exp *exp = malloc(n * sizeof(Exp));
  for (int zstd = 0; zstd <= 3; zstd += 3) {
    Mem a = gen_tape(777, 4, n, zstd, exp), b = gen_tape(777, 4, n, zstd, exp);
    CHECK_EQ(a.n, b.n);
    CHECK(a.n == b.n && !memcmp(a.p, b.p, a.n));
    free(a.p); free(b.p);
  }
  free(exp);
}

/* Events in EVENTS packets that end at or before len. */
static size_t whole_packet_events(const uint8_t *p, size_t size, size_t len)
{
  size_t off = HT_HEADER_FIXED + ht_ru32(p + 12) + 4, n = 0;
  while (off + HT_PHEAD_SIZE <= size) {
    size_t end = off + HT_PHEAD_SIZE + ht_ru32(p + off + 8);
    if (end > len) break;
    if (p[off + 4] == HT_P_EVENTS) n += ht_ru32(p + off + 48);
    off = end;
  }
  return n;
}

static void test_truncated_everywhere(void)
{
  size_t n = 300;
  Exp *exp = malloc(n * sizeof(Exp));
  Mem m = gen_tape(99, 3, n, 1, exp);
  size_t hdr = HT_HEADER_FIXED + ht_ru32(m.p + 12) + 4;
  int failures = 0;
  for (size_t len = 0; len <= m.n; len++) {
    uint8_t *copy = malloc(len ? len : 1); /* exact size: ASan sees overreads */
    memcpy(copy, m.p, len);
    size_t got, bad;
    int rc = read_all(copy, len, exp, n, 0, &got, &bad);
    if (len < hdr) {
      if (rc != HEAPTAPE_E_TRUNCATED && rc != HEAPTAPE_E_NOTTAPE) failures++;
    } else if (rc || bad || got != whole_packet_events(m.p, m.n, len)) {
      if (failures++ < 5)
        fprintf(stderr, "  len %zu: rc %d got %zu bad %zu want %zu\n", len, rc, got, bad,
                whole_packet_events(m.p, m.n, len));
    }
    free(copy);
  }
  CHECK_EQ(failures, 0);
  free(m.p);
  free(exp);
}

static void test_bit_flips(void)
{
  size_t n = 3000;
  Exp *exp = malloc(n * sizeof(Exp));
  Mem m = gen_tape(4711, 4, n, 1, exp);
  rng_state = 31337;
  int wrong = 0, damaged_seen = 0;
  for (int trial = 0; trial < 400; trial++) {
    uint8_t *copy = malloc(m.n);
    memcpy(copy, m.p, m.n);
    int flips = 1 + (int)(rnd() % 3);
    for (int f = 0; f < flips; f++) copy[rnd() % m.n] ^= (uint8_t)(1u << (rnd() % 8));
    size_t got, bad;
    uint64_t saved = rng_state;
    int rc = read_all(copy, m.n, exp, n, 1, &got, &bad);
    rng_state = saved;
    if (rc == 0 && bad) wrong++;
    if (rc == 0 && got < n) damaged_seen++;
    free(copy);
  }
  CHECK_EQ(wrong, 0);
  CHECK(damaged_seen > 100);
  free(m.p);
  free(exp);
}

static void test_refuses(void)
{
  HtReader *r;
  char err[200];
  CHECK_EQ(ht_reader_open_mem(&r, "hello world, not a tape", 23, err, sizeof(err)),
           HEAPTAPE_E_NOTTAPE);
  CHECK(strstr(err, "not a heaptape tape") != NULL);
  size_t n = 10;
  Exp exp[10];
  Mem m = gen_tape(1, 1, n, 0, exp);
  m.p[8] = HT_VERSION_MAX + 1; /* newer than this reader */
  CHECK_EQ(ht_reader_open_mem(&r, m.p, m.n, err, sizeof(err)), HEAPTAPE_E_VERSION);
  char want[32];
  snprintf(want, sizeof(want), "version %d ", HT_VERSION_MAX + 1);
  CHECK(strstr(err, want) != NULL);
  m.p[8] = HT_VERSION_RTLOC;    /* a version 6 journal (Python, Ruby) reads as 1 */
  size_t hend = HT_HEADER_FIXED + ht_ru32(m.p + 12);
  ht_wu32(m.p + hend, (uint32_t)crc32(0, m.p, (uInt)hend));
  CHECK_EQ(ht_reader_open_mem(&r, m.p, m.n, err, sizeof(err)), 0);
  CHECK_EQ(ht_reader_header(r)->version, HT_VERSION_RTLOC);
  ht_reader_close(r);
  m.p[8] = 1;
  m.p[20] ^= 1; /* header field under the checksum */
  CHECK_EQ(ht_reader_open_mem(&r, m.p, m.n, err, sizeof(err)), HEAPTAPE_E_CORRUPT);
  CHECK_EQ(ht_reader_open(&r, "/nonexistent/x.tape", err, sizeof(err)), HEAPTAPE_E_NOENT);
  free(m.p);
}

/* Unknown packet kinds and EXT records are skipped; unknown record types in a
** packet drop the rest of that packet only. */
static void test_skips_unknown(void)
{
  Mem m = {0};
  HtWriter *w = ht_writer_new(ht_mem_sink, &m, 0);
  HtTapeInfo info = {.pid = 4242};
  ht_writer_header(w, &info);
  uint8_t odd[5] = {1, 2, 3, 4, 5};
  ht_writer_packet(w, 77, 4242, 1, 0, 0, 0, 0, odd, sizeof(odd));
  uint8_t buf[256];
  HtStream s;
  ht_stream_init(&s, buf, sizeof(buf), 4242, 1, NULL, NULL);
  ht_stream_alloc(&s, 1, 0, 10, 0x1000, 0, 0, 0);
  *s.p++ = HT_R_EXT; *s.p++ = 9; *s.p++ = 2; *s.p++ = 0xaa; *s.p++ = 0xbb;
  ht_stream_free(&s, 2, 0, 0x1000, 0);
  ht_writer_stream(w, &s);
  ht_stream_alloc(&s, 3, 0, 10, 0x2000, 0, 0, 0);
  *s.p++ = 0x1e; /* unknown record type */
  ht_stream_free(&s, 4, 0, 0x2000, 0);
  ht_writer_stream(w, &s);
  ht_writer_destroy(w);
  HtReader *r;
  char err[200];
  CHECK_EQ(ht_reader_open_mem(&r, m.p, m.n, err, sizeof(err)), 0);
  HtEvent ev;
  int k = 0;
  uint64_t seqs[8];
  while (ht_reader_next(r, &ev) > 0 && k < 8) seqs[k++] = ev.seq;
  CHECK_EQ(k, 3);
  CHECK(seqs[0] == 1 && seqs[1] == 2 && seqs[2] == 3);
  CHECK_EQ(ht_reader_stats(r)->damaged, 1);
  CHECK(!ht_reader_stats(r)->has_trailer);
  ht_reader_close(r);
  free(m.p);
}

/* A journal with a gap, as a followed one is read (ht_reader_hold before
** every event): thread 1's events 1-3, its block's rest 4-8 said void in
** the same packet (where 0) or at the start of its next one (where 1, the
** writer took its packet between) or not at all (where 2), the writer's
** RSS 9, thread 1's 10-49 (a packet zstd compresses). How many events the
** reader delivers now. */
static int void_delivered(int where, int zstd)
{
  Mem m = {0};
  HtWriter *w = ht_writer_new(ht_mem_sink, &m, zstd);
  HtTapeInfo info = {.pid = 4242};
  ht_writer_header(w, &info);
  uint8_t buf[4096], obuf[256];
  HtStream s, own;
  ht_stream_init(&s, buf, sizeof(buf), 4242, 1, NULL, NULL);
  ht_stream_init(&own, obuf, sizeof(obuf), 4242, 2, NULL, NULL);
  for (uint64_t q = 1; q <= 3; q++) ht_stream_alloc(&s, q, 0, 10, 0x1000 * q, 0, 0, 0);
  if (where == 0) CHECK_EQ(ht_stream_void(&s, 4, 5), 0);
  ht_writer_stream(w, &s);
  ht_stream_value(&own, HT_R_RSS, 9, 1 << 20);
  ht_writer_stream(w, &own);
  if (where == 1) CHECK_EQ(ht_stream_void(&s, 4, 5), 0);
  for (uint64_t q = 10; q <= 49; q++) ht_stream_alloc(&s, q, 0, 10, 0x1000 * q, 0, 0, 0);
  ht_writer_stream(w, &s);
  ht_writer_destroy(w);
  HtReader *r;
  char err[200];
  CHECK_EQ(ht_reader_open_mem(&r, m.p, m.n, err, sizeof(err)), 0);
  ht_reader_hold(r, 0);               /* every event is recent: a gap waits */
  HtEvent ev;
  int k = 0;
  while (ht_reader_next(r, &ev) > 0) k++;
  CHECK_EQ(ht_reader_stats(r)->damaged, 0);
  ht_reader_hold(r, UINT64_MAX);      /* the writer is gone: the rest */
  int all = k;
  while (ht_reader_next(r, &ev) > 0) all++;
  CHECK_EQ(all, 44);
  ht_reader_close(r);
  free(m.p);
  return k;
}

/* A thread's numbers said void (EXT VOID) are not waited for, wherever the
** VOID lies; without it the reader waits at the gap. */
static void test_void_not_waited(void)
{
  for (int zstd = 0; zstd <= 1; zstd++) {
    CHECK_EQ(void_delivered(0, zstd), 44);
    CHECK_EQ(void_delivered(1, zstd), 44);
    CHECK_EQ(void_delivered(2, zstd), 3);
  }
}

/* 1200 threads whose packets interleave, so hundreds of cursors are open
** while new threads keep arriving: the reader's stream table grows under
** them (issue 17: a cursor kept a pointer into it; ASan saw the write to the
** freed table, and stacks defined through it were lost). */
static void test_many_threads(void)
{
  enum { NTH = 1200 };
  for (int zstd = 0; zstd <= 1; zstd++) {
    size_t n = 36000;
    Exp *exp = malloc(n * sizeof(Exp));
    Mem m = gen_tape(2024 + (uint64_t)zstd, NTH, n, zstd, exp);
    size_t got, bad;
    CHECK_EQ(read_all(m.p, m.n, exp, n, 0, &got, &bad), 0);
    CHECK_EQ(got, n);
    CHECK_EQ(bad, 0);
    /* Again after a rewind, counting the threads that took part. */
    HtReader *r;
    char err[200];
    CHECK_EQ(ht_reader_open_mem(&r, m.p, m.n, err, sizeof(err)), 0);
    HtEvent ev;
    while (ht_reader_next(r, &ev) > 0) {}
    ht_reader_rewind(r);
    static uint8_t seen[NTH];
    memset(seen, 0, sizeof(seen));
    size_t k = 0, bad2 = 0, threads = 0;
    while (ht_reader_next(r, &ev) > 0) {
      if (k >= n || !event_matches(r, &ev, &exp[k], 0)) bad2++;
      k++;
      uint32_t i = ev.tid - 100;
      if (i < NTH && !seen[i]) { seen[i] = 1; threads++; }
    }
    CHECK_EQ(k, n);
    CHECK_EQ(bad2, 0);
    CHECK(threads > 1000);
    CHECK_EQ(ht_reader_stats(r)->damaged, 0);
    ht_reader_close(r);
    free(m.p);
    free(exp);
  }
}

/* Module paths and build ids stay valid while later MODULE events grow the
** reader's module table (ht_reader_module_info: "valid with the reader"). */
static void test_module_info_stable(void)
{
  Mem m = {0};
  HtWriter *w = ht_writer_new(ht_mem_sink, &m, 0);
  HtTapeInfo info = {.pid = 4242};
  ht_writer_header(w, &info);
  static uint8_t buf[4096];
  HtStream s;
  ht_stream_init(&s, buf, sizeof(buf), 4242, 1, gen_flush, w);
  for (int i = 0; i < 100; i++) {
    char path[32];
    uint8_t bid[20];
    snprintf(path, sizeof(path), "/lib/m%d.so", i);
    memset(bid, i + 1, sizeof(bid));
    HtSegment seg = {0, 0x1000, 5};
    ht_stream_module(&s, (uint64_t)i + 1, 0, path, 0x10000ull * (uint64_t)(i + 1), bid,
                     sizeof(bid), &seg, 1);
  }
  ht_writer_stream(w, &s);
  ht_writer_destroy(w);
  HtReader *r;
  char err[200];
  CHECK_EQ(ht_reader_open_mem(&r, m.p, m.n, err, sizeof(err)), 0);
  HtEvent ev;
  const char *path0 = NULL;
  const uint8_t *bid0 = NULL;
  size_t nb0 = 0;
  while (ht_reader_next(r, &ev) > 0) {
    uint64_t lo, hi;
    if (!path0) path0 = ht_reader_module_info(r, 0, &lo, &hi, &bid0, &nb0);
  }
  CHECK_EQ(ht_reader_module_count(r), 100);
  CHECK(path0 && !strcmp(path0, "/lib/m0.so"));
  CHECK_EQ(nb0, 20);
  int same = bid0 != NULL;
  for (size_t i = 0; same && i < nb0; i++) same = bid0[i] == 1;
  CHECK(same);
  uint64_t lo, hi;
  const uint8_t *bid;
  size_t nb;
  const char *p99 = ht_reader_module_info(r, 99, &lo, &hi, &bid, &nb);
  CHECK(p99 && !strcmp(p99, "/lib/m99.so") && nb == 20 && bid[19] == 100);
  CHECK(lo == 0x640000 && hi == 0x641000);
  ht_reader_close(r);
  free(m.p);
}

/* A dictionary string id defined twice: symbols loaded before the second
** definition keep the first string (it used to be freed under them). */
static void test_dict_string_redefined(void)
{
  Mem m = {0};
  HtWriter *w = ht_writer_new(ht_mem_sink, &m, 0);
  HtTapeInfo info = {.pid = 4242};
  ht_writer_header(w, &info);
  for (int i = 0; i < 2; i++) { /* two writers of dictionary 0: string ids from 0 */
    HtDict *d = ht_dict_new();
    HtSymFrame f = {ht_dict_str(d, i ? "second" : "first"), 0, 10 + (uint32_t)i};
    ht_dict_sym(d, 0x1000 + (uint64_t)i, &f, 1);
    ht_dict_flush(d, w, 4242);
    ht_dict_destroy(d);
  }
  ht_writer_destroy(w);
  HtReader *r;
  char err[200];
  CHECK_EQ(ht_reader_open_mem(&r, m.p, m.n, err, sizeof(err)), 0);
  const HtSymbol *a, *b;
  CHECK_EQ(ht_reader_symbol(r, 0x1000, &a), 1);
  CHECK_EQ(ht_reader_symbol(r, 0x1001, &b), 1);
  CHECK(a && a->func && !strcmp(a->func, "first") && a->line == 10);
  CHECK(b && b->func && !strcmp(b->func, "second") && b->line == 11);
  ht_reader_close(r);
  free(m.p);
}

/* With HT_WRITE_CORPUS=DIR, also write small tapes as fuzz seeds. */
static void write_corpus(const char *dir)
{
  static const struct { uint64_t seed; int nth; size_t n; int zstd; } seeds[] = {
    {1, 1, 20, 0}, {2, 3, 200, 0}, {3, 4, 300, 1}, {4, 2, 60, 1}};
  for (size_t i = 0; i < HT_COUNTOF(seeds); i++) {
    Exp *exp = malloc(seeds[i].n * sizeof(Exp));
    Mem m = gen_tape(seeds[i].seed, seeds[i].nth, seeds[i].n, seeds[i].zstd, exp);
    char path[512];
    snprintf(path, sizeof(path), "%s/gen-%zu.tape", dir, i);
    FILE *f = fopen(path, "wb");
    if (f) { fwrite(m.p, 1, m.n, f); fclose(f); }
    free(m.p);
    free(exp);
  }
}

/* A tiny tape cannot make the reader allocate huge stack-id tables: a STACK
** record claiming id 2^25 is damage, not a 128 MiB allocation. */
static void test_stack_id_budget(void)
{
  Mem m = {0};
  HtWriter *w = ht_writer_new(ht_mem_sink, &m, 0);
  HtTapeInfo info = {.pid = 4242};
  ht_writer_header(w, &info);
  uint8_t buf[256];
  HtStream s;
  ht_stream_init(&s, buf, sizeof(buf), 4242, 1, NULL, NULL);
  uint64_t v = 0x401000 << 1;
  ht_stream_stack_define(&s, 1, 0, &v, 1);
  ht_stream_alloc(&s, 1, 0, 10, 0x1000, 1, 0, 0);
  ht_stream_stack_define(&s, 1u << 25, 0, &v, 1);
  ht_stream_alloc(&s, 2, 0, 10, 0x2000, 1u << 25, 0, 0);
  ht_writer_stream(w, &s);
  ht_writer_destroy(w);
  HtReader *r;
  char err[200];
  CHECK_EQ(ht_reader_open_mem(&r, m.p, m.n, err, sizeof(err)), 0);
  HtEvent ev;
  int k = 0;
  while (ht_reader_next(r, &ev) > 0) k++;
  CHECK_EQ(k, 1);
  CHECK_EQ(ht_reader_stats(r)->damaged, 1);
  ht_reader_close(r);
  free(m.p);
}

/* Bytes flipped inside the last packet are damage, not truncation: the
** packet is whole (its header fits, the file holds its body); only a file
** that ends inside a packet is truncated. */
static void test_damaged_last_packet(void)
{
  size_t n = 200;
  Exp *exp = malloc(n * sizeof(Exp));
  Mem m = gen_tape(7, 2, n, 0, exp);
  size_t off = HT_HEADER_FIXED + ht_ru32(m.p + 12) + 4, last = off;
  while (off + HT_PHEAD_SIZE <= m.n) { last = off; off += HT_PHEAD_SIZE + ht_ru32(m.p + off + 8); }
  CHECK_EQ(off, m.n);
  size_t blen = ht_ru32(m.p + last + 8);
  CHECK(blen > 2);
  HtReader *r;
  char err[200];
  /* A flip in the body, then in the header (the checksum covers both). */
  for (int where = 0; where < 2; where++) {
    size_t at = where ? last + 20 : last + HT_PHEAD_SIZE + blen / 2;
    m.p[at] ^= 0x10;
    CHECK_EQ(ht_reader_open_mem(&r, m.p, m.n, err, sizeof(err)), 0);
    HtEvent ev;
    while (ht_reader_next(r, &ev) > 0) {}
    const HtReadStats *st = ht_reader_stats(r);
    CHECK_EQ(st->truncated_bytes, 0);
    CHECK_EQ(st->damaged, 1);
    CHECK_EQ(st->damaged_bytes, HT_PHEAD_SIZE + blen);
    CHECK(strstr(st->first_error, "damaged packet") != NULL);
    CHECK(strstr(st->first_error, "truncated") == NULL);
    ht_reader_close(r);
    m.p[at] ^= 0x10;
  }
  /* The same packet cut short is truncation. */
  CHECK_EQ(ht_reader_open_mem(&r, m.p, m.n - 1, err, sizeof(err)), 0);
  CHECK_EQ(ht_reader_stats(r)->truncated_bytes, HT_PHEAD_SIZE + blen - 1);
  CHECK_EQ(ht_reader_stats(r)->damaged, 0);
  CHECK(strstr(ht_reader_stats(r)->first_error, "truncated") != NULL);
  ht_reader_close(r);
  free(m.p);
  free(exp);
}

/* --held: see the top. */
static int held_journal(const char *path)
{
  HtReader *r;
  char err[512];
  if (ht_reader_open(&r, path, err, sizeof(err))) { fprintf(stderr, "%s\n", err); return 2; }
  HtEvent ev;
  uint64_t got = 0, all = 0;
  ht_reader_hold(r, 0);
  for (int pass = 0; pass < 2; pass++) {
    while (ht_reader_next(r, &ev) > 0)
      if (ev.type == HT_EV_ALLOC || ev.type == HT_EV_FREE) { all++; got += !pass; }
    ht_reader_hold(r, UINT64_MAX);    /* the rest, past the gap */
  }
  ht_reader_close(r);
  printf("%llu of %llu heap events\n", (unsigned long long)got, (unsigned long long)all);
  return got == all && all ? 0 : 1;
}

int main(int argc, char **argv)
{
  if (argc == 3 && !strcmp(argv[1], "--held")) return held_journal(argv[2]);
  if (getenv("HT_WRITE_CORPUS")) write_corpus(getenv("HT_WRITE_CORPUS"));
  TEST(test_roundtrip);
  TEST(test_deterministic_bytes);
  TEST(test_truncated_everywhere);
  TEST(test_bit_flips);
  TEST(test_refuses);
  TEST(test_skips_unknown);
  TEST(test_stack_id_budget);
  TEST(test_many_threads);
  TEST(test_module_info_stable);
  TEST(test_dict_string_redefined);
  TEST(test_damaged_last_packet);
  TEST(test_void_not_waited);
  return th_summary();
}
