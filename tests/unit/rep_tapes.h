/* heaptape -- deterministic tapes with known events for the report tests.
** Shared by test_model.c and rep_gentapes.c (which writes tests/data/). */
#ifndef HT_REP_TAPES_H
#define HT_REP_TAPES_H

#include <stdlib.h>
#include <string.h>

#include "format/writer.h"

#define TB_THREADS 2
#define TB_PID 4242
#define MS 1000000ull  /* one millisecond in ns */

/* A tape being built in memory. */
typedef struct Tape {
  uint8_t *p;                /* bytes written */
  size_t n, cap;             /* used, allocated */
  HtWriter *w;               /* writer */
  HtDict *d;                 /* dictionary */
  HtStream s[TB_THREADS];    /* one stream per thread */
  uint8_t body[TB_THREADS][16384]; /* their packet bodies */
  uint64_t next_stack[TB_THREADS]; /* next stack id per thread */
  uint64_t seq;              /* last sequence number */
  uint64_t ts;               /* current time, ns */
  int cur;                   /* thread written last, -1 none */
} Tape;

/* HtSink: append to the tape's buffer. */
static size_t tape_sink(const void *data, size_t len, void *arg)
{
  Tape *t = arg;
  if (t->n + len > t->cap) {
    size_t c = t->cap ? t->cap * 2 : 65536;
    while (c < t->n + len) c *= 2;
    uint8_t *np = realloc(t->p, c);
    if (!np) return 0;
    t->p = np;
    t->cap = c;
  }
  memcpy(t->p + t->n, data, len);
  t->n += len;
  return len;
}

/* HtStreamFlush: seal the body as a packet. */
static void tape_flush(HtStream *s, void *ctx)
{
  ht_writer_stream(((Tape *)ctx)->w, s);
}

/* Start a tape: header with a fixed program, mock clock, sampling interval. */
static void tape_open(Tape *t, uint64_t sample, const char *frontend)
{
  memset(t, 0, sizeof(*t));
  t->cur = -1;
  t->w = ht_writer_new(tape_sink, t, 0);
  t->d = ht_dict_new();
  static const char argv[] = "demo\0--fast";
  HtTapeInfo in = {
    .pid = TB_PID, .exe = "/usr/bin/demo", .argv = argv, .argv_len = sizeof(argv),
    .clock = HT_CLOCK_MOCK, .clock_res = 1, .sample = sample,
    .start_ns = 1700000000000000000ull, .unwind = HT_UNWIND_FP, .frames = 64,
    .frontend = frontend, .flags = HT_F_SYMBOLIZED,
  };
  ht_writer_header(t->w, &in);
  for (int i = 0; i < TB_THREADS; i++) {
    ht_stream_init(&t->s[i], t->body[i], sizeof(t->body[i]), TB_PID, 100 + i,
                   tape_flush, t);
    t->next_stack[i] = 1;
  }
}

/* Switch to thread i (sealing the other thread's packet) at the current time. */
static HtStream *tape_on(Tape *t, int i)
{
  if (t->cur >= 0 && t->cur != i) ht_writer_stream(t->w, &t->s[t->cur]);
  t->cur = i;
  ht_stream_time(&t->s[i], t->ts);
  return &t->s[i];
}

/* Define a stack on thread i from n frame values, outermost first; returns its id. */
static uint64_t tape_stack(Tape *t, int i, const uint64_t *v, size_t n)
{
  HtStream *s = tape_on(t, i);
  uint64_t first = t->next_stack[i];
  ht_stream_stack_define(s, first, 0, v, n);
  t->next_stack[i] += n;
  return first + n - 1;
}

/* An allocation on thread i. */
static void tape_alloc(Tape *t, int i, unsigned kind, uint64_t size, uint64_t addr,
                       uint64_t stack, uint64_t weight)
{
  ht_stream_alloc(tape_on(t, i), ++t->seq, kind, size, addr, stack, 0, weight);
}

/* A free on thread i. */
static void tape_free(Tape *t, int i, unsigned kind, uint64_t addr)
{
  ht_stream_free(tape_on(t, i), ++t->seq, kind, addr, 0);
}

/* A thread name. */
static void tape_name(Tape *t, int i, const char *name)
{
  ht_stream_string(tape_on(t, i), HT_R_THREAD, ++t->seq, name, strlen(name));
}

/* An RSS sample. */
static void tape_rss(Tape *t, int i, uint64_t bytes)
{
  ht_stream_value(tape_on(t, i), HT_R_RSS, ++t->seq, bytes);
}

/* Symbol of a native address (one level). */
static void tape_sym(Tape *t, uint64_t ip, const char *func, const char *file, uint64_t line)
{
  HtSymFrame f = {(uint64_t)ht_dict_str(t->d, func), (uint64_t)ht_dict_str(t->d, file), line};
  ht_dict_sym(t->d, ip, &f, 1);
}

/* A runtime location. */
static void tape_loc(Tape *t, uint64_t id, unsigned kind, const char *name,
                     const char *file, uint64_t line, uint64_t aux)
{
  ht_dict_loc(t->d, id, kind, (uint64_t)ht_dict_str(t->d, name),
              (uint64_t)ht_dict_str(t->d, file), line, aux);
}

/* Seal every stream, then the dictionary and the trailer (ending at end_ns). */
static void tape_close(Tape *t, uint64_t end_ns)
{
  for (int i = 0; i < TB_THREADS; i++) ht_writer_stream(t->w, &t->s[i]);
  ht_dict_flush(t->d, t->w, TB_PID);
  HtTrailer tr = {.events = t->seq, .lost = 0, .end_ns = end_ns, .status = 0};
  ht_writer_trailer(t->w, &tr);
  ht_writer_destroy(t->w);
  ht_dict_destroy(t->d);
  t->w = NULL;
  t->d = NULL;
}

/* -- The tapes ------------------------------------------------------------ */

/* Native frames of the basic tape. */
enum {
  IP_MALLOC = 0x1000, IP_REALLOC = 0x1100, IP_XMALLOC = 0x2000,
  IP_TABLE12 = 0x3000, IP_TABLE20 = 0x3100, IP_PARSE = 0x4000,
  IP_MAIN40 = 0x5000, IP_MAIN44 = 0x5100, IP_RAW = 0x6000,
};
#define NF(ip) ((uint64_t)(ip) << 1)
#define LF(id) ((uint64_t)(id) << 1 | 1)

/* The basic native tape: two threads, a realloc, temporaries, an unknown
** free, leaks and a peak (figures in docs/REPORT.md and test_model.c). */
static void tape_basic(Tape *t)
{
  tape_open(t, 0, "native");
  tape_sym(t, IP_MALLOC, "malloc", NULL, 0);
  tape_sym(t, IP_REALLOC, "realloc", NULL, 0);
  tape_sym(t, IP_XMALLOC, "xmalloc", "util.c", 10);
  tape_sym(t, IP_TABLE12, "make_table", "table.c", 12);
  tape_sym(t, IP_TABLE20, "make_table", "table.c", 20);
  tape_sym(t, IP_PARSE, "parse", "parse.c", 33);
  tape_sym(t, IP_MAIN40, "main", "main.c", 40);
  tape_sym(t, IP_MAIN44, "main", "main.c", 44);
  const uint64_t s1[] = {NF(IP_MAIN40), NF(IP_TABLE12), NF(IP_MALLOC)};
  const uint64_t s2[] = {NF(IP_MAIN44), NF(IP_PARSE), NF(IP_MALLOC)};
  const uint64_t s3[] = {NF(IP_MAIN40), NF(IP_TABLE20), NF(IP_REALLOC)};
  const uint64_t s4[] = {NF(IP_MAIN44), NF(IP_RAW)};
  const uint64_t s5[] = {NF(IP_MAIN44), NF(IP_PARSE), NF(IP_XMALLOC), NF(IP_MALLOC)};
  tape_name(t, 0, "main");
  uint64_t a = tape_stack(t, 0, s1, 3), b = tape_stack(t, 0, s2, 3);
  uint64_t c = tape_stack(t, 0, s3, 3), d = tape_stack(t, 0, s4, 2);
  t->ts = 100 * MS; tape_alloc(t, 0, HT_K_MALLOC, 100, 0x10000, a, 0);
  t->ts = 200 * MS; tape_alloc(t, 0, HT_K_MALLOC, 200, 0x10100, a, 0);
  t->ts = 300 * MS; tape_alloc(t, 0, HT_K_MALLOC, 50, 0x10200, b, 0);
  tape_free(t, 0, HT_K_MALLOC, 0x10200);
  t->ts = 400 * MS; tape_free(t, 0, HT_K_REALLOC, 0x10100);
  tape_alloc(t, 0, HT_K_REALLOC, 400, 0x10300, c, 0);
  t->ts = 500 * MS; tape_alloc(t, 0, HT_K_NEW, 1000, 0x10400, d, 0);
  tape_rss(t, 0, 8u << 20);
  t->ts = 600 * MS; tape_free(t, 0, HT_K_NEW, 0x10400);
  t->ts = 650 * MS; tape_name(t, 1, "worker");
  uint64_t e = tape_stack(t, 1, s5, 4), f = tape_stack(t, 1, s2, 3);
  t->ts = 700 * MS; tape_alloc(t, 1, HT_K_MALLOC, 300, 0x20000, e, 0);
  t->ts = 800 * MS; tape_free(t, 1, HT_K_MALLOC, 0x99999);
  t->ts = 900 * MS; tape_alloc(t, 1, HT_K_CALLOC, 60, 0x20100, f, 0);
  t->ts = 1000 * MS; tape_free(t, 0, HT_K_MALLOC, 0x10000);
  tape_close(t, 2000 * MS);
}

/* A LuaJIT-style runtime tape: locations instead of native frames. */
static void tape_lua(Tape *t)
{
  const unsigned RT = HT_K_RUNTIME | HT_K_DOMAIN_RT, RR = HT_K_REALLOC | HT_K_DOMAIN_RT;
  tape_open(t, 0, "luajit");
  tape_loc(t, 1, HT_L_LUA, NULL, "test.lua", 10, 1);
  tape_loc(t, 2, HT_L_LUA, NULL, "test.lua", 14, 1);
  tape_loc(t, 3, HT_L_INTERNAL, NULL, NULL, 0, 0);
  tape_loc(t, 4, HT_L_TRACE, NULL, "test.lua", 8, 3);
  tape_loc(t, 5, HT_L_CFUNC, "string.rep", NULL, 0, 0x7f00);
  const uint64_t l1[] = {LF(1)}, l2[] = {LF(1), LF(2)}, l3[] = {LF(3)};
  const uint64_t l4[] = {LF(4)}, l5[] = {LF(2), LF(5)};
  uint64_t a = tape_stack(t, 0, l1, 1), b = tape_stack(t, 0, l2, 2);
  uint64_t c = tape_stack(t, 0, l3, 1), d = tape_stack(t, 0, l4, 1);
  uint64_t e = tape_stack(t, 0, l5, 2);
  t->ts = 100 * MS; tape_alloc(t, 0, RT, 64, 0x100, a, 0);
  t->ts = 200 * MS; tape_alloc(t, 0, RT, 128, 0x200, c, 0);
  t->ts = 300 * MS; tape_alloc(t, 0, RT, 32, 0x300, a, 0);
  t->ts = 400 * MS; tape_free(t, 0, RR, 0x300);
  tape_alloc(t, 0, RR, 96, 0x400, b, 0);
  t->ts = 500 * MS; tape_alloc(t, 0, RT, 48, 0x500, d, 0);
  t->ts = 600 * MS; tape_alloc(t, 0, RT, 16, 0x600, e, 0);
  t->ts = 700 * MS; tape_free(t, 0, RT, 0x200);
  t->ts = 800 * MS; tape_free(t, 0, RT, 0x600);
  t->ts = 1200 * MS; tape_free(t, 0, RR, 0x100);
  tape_alloc(t, 0, RR, 200, 0x700, c, 0);
  tape_close(t, 1500 * MS);
}

/* A sampled tape: explicit weights stand for unsampled bytes. */
static void tape_sampled(Tape *t)
{
  tape_open(t, 4096, "native");
  tape_sym(t, IP_TABLE12, "make_table", "table.c", 12);
  const uint64_t s1[] = {NF(IP_TABLE12)};
  uint64_t a = tape_stack(t, 0, s1, 1);
  t->ts = 10 * MS; tape_alloc(t, 0, HT_K_MALLOC, 100, 0x1000, a, 4100);
  t->ts = 20 * MS; tape_alloc(t, 0, HT_K_MALLOC, 8192, 0x3000, a, 8192);
  t->ts = 30 * MS; tape_free(t, 0, HT_K_MALLOC, 0x1000);
  tape_close(t, 40 * MS);
}

#endif
