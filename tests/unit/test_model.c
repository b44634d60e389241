/* heaptape -- unit tests of the analysis model and the report outputs,
** on tapes written with the writer library whose figures are known. */
#include <stdio.h>

#include "testhelper.h"
#include "rep_tapes.h"
#include "format/reader.h"
#include "analyze/model.h"
#include "analyze/snaps.h"
#include "output/report.h"

static Tape tape;

/* Open a reader over t's bytes and run a model with options o. */
static HtReader *run(Tape *t, HtModel *m, const HtModelOpts *o)
{
  HtReader *r = NULL;
  char err[256];
  int rc = ht_reader_open_mem(&r, t->p, t->n, err, sizeof(err));
  CHECK_EQ(rc, 0);
  if (rc) { fprintf(stderr, "  %s\n", err); exit(1); }
  CHECK_EQ(ht_model_init(m, r, o), 0);
  CHECK_EQ(ht_model_run(m), 0);
  return r;
}

/* The site whose innermost meaningful location is named name, or NULL. */
static const HtSite *site_named(const HtModel *m, const char *name)
{
  for (uint32_t i = 0; i < m->nsite; i++)
    if (!strcmp(m->loc[m->site[i].loc].name, name)) return &m->site[i];
  return NULL;
}

/* The location named name, or NULL. */
static const HtLoc *loc_named(const HtModel *m, const char *name)
{
  for (uint32_t i = 0; i < m->nloc; i++)
    if (!strcmp(m->loc[i].name, name)) return &m->loc[i];
  return NULL;
}

/* Totals, peak, leaks, temporaries and unknown frees of the basic tape. */
static void test_basic_totals(void)
{
  HtModel m;
  tape_basic(&tape);
  HtReader *r = run(&tape, &m, NULL);
  CHECK_EQ(m.allocs, 7);
  CHECK_EQ(m.bytes, 2110);
  CHECK_EQ(m.reallocs, 1);
  CHECK_EQ(m.frees, 4);
  CHECK_EQ(m.freed, 1350);
  CHECK_EQ(m.peak, 1500);
  CHECK_EQ(m.peak_n, 3);
  CHECK_EQ(m.peak_ts, 500 * MS);
  CHECK_EQ(m.heap, 760);
  CHECK_EQ(m.heap_n, 3);
  CHECK_EQ(m.temp, 2);
  CHECK_EQ(m.unknown_frees, 1);
  CHECK_EQ(m.duration, 2000 * MS);
  CHECK_EQ(m.nsite, 5);
  CHECK_EQ(m.nth, 2);
  CHECK_EQ(m.by_type[HT_EV_ALLOC], 7);
  CHECK_EQ(m.by_type[HT_EV_FREE], 5);
  CHECK_EQ(m.rss_max, 8u << 20);
  CHECK(!strcmp(m.th[0].name, "main"));
  CHECK(!strcmp(m.th[1].name, "worker"));
  CHECK_EQ(m.th[1].allocs, 2);
  CHECK_EQ(m.th[1].bytes, 360);
  ht_model_free(&m);
  ht_reader_close(r);
  free(tape.p);
}

/* Peak composition per site, leaks per site, temporaries per site. */
static void test_basic_sites(void)
{
  HtModel m;
  tape_basic(&tape);
  HtReader *r = run(&tape, &m, NULL);
  const HtSite *raw = site_named(&m, "0x6000");
  const HtSite *t12 = site_named(&m, "make_table table.c:12");
  const HtSite *t20 = site_named(&m, "make_table table.c:20");
  const HtSite *parse = site_named(&m, "parse parse.c:33");
  const HtSite *xm = site_named(&m, "xmalloc util.c:10");
  CHECK(raw && t12 && t20 && parse && xm);
  if (raw && t12 && t20 && parse && xm) {
    CHECK_EQ(raw->f.peak, 1000); CHECK_EQ(t20->f.peak, 400); CHECK_EQ(t12->f.peak, 100);
    CHECK_EQ(parse->f.peak, 0); CHECK_EQ(xm->f.peak, 0);
    CHECK_EQ(t12->f.allocs, 2); CHECK_EQ(t12->f.bytes, 300); CHECK_EQ(t12->f.frees, 2);
    CHECK_EQ(t20->f.reallocs, 1); CHECK_EQ(t20->f.live, 400);
    CHECK_EQ(parse->f.allocs, 2); CHECK_EQ(parse->f.live, 60); CHECK_EQ(parse->f.temp, 1);
    CHECK_EQ(raw->f.temp, 1); CHECK_EQ(xm->f.live, 300); CHECK_EQ(t12->f.temp, 0);
  }
  /* memprof figures */
  const HtLoc *l12 = loc_named(&m, "make_table table.c:12");
  const HtLoc *l20 = loc_named(&m, "make_table table.c:20");
  CHECK(l12 && l20);
  if (l12 && l20) {
    CHECK_EQ(l12->a_n, 2); CHECK_EQ(l12->a_plus, 300);
    CHECK_EQ(l12->d_n, 1); CHECK_EQ(l12->d_minus, 100);  /* the realloc is not a free */
    CHECK_EQ(l20->r_n, 1); CHECK_EQ(l20->r_plus, 400); CHECK_EQ(l20->r_minus, 200);
    CHECK_EQ(l20->nr_over, 1);
    if (l20->nr_over) CHECK(!strcmp(m.loc[l20->r_over[0]].name, "make_table table.c:12"));
  }
  ht_model_free(&m);
  ht_reader_close(r);
  free(tape.p);
}

/* --wrapper moves attribution outward past matching functions. */
static void test_wrapper(void)
{
  HtModel m;
  const char *w[] = {"xmall*"};
  HtModelOpts o = {.wrappers = w, .nwrappers = 1, .at_ns = UINT64_MAX};
  tape_basic(&tape);
  HtReader *r = run(&tape, &m, &o);
  CHECK(site_named(&m, "xmalloc util.c:10") == NULL);
  const HtLoc *p = loc_named(&m, "parse parse.c:33");
  CHECK(p != NULL);
  if (p) { CHECK_EQ(p->f.allocs, 3); CHECK_EQ(p->f.live, 360); }
  ht_model_free(&m);
  ht_reader_close(r);
  free(tape.p);
}

/* The composition at a time (--at) and snapshots every interval. */
static int nsnap;
static uint64_t snap_heap[8];
/* HtSnapFn recording the heap at each snapshot. */
static void on_snap(void *arg, const HtModel *m, uint64_t t)
{
  (void)arg;
  if (nsnap < 8) snap_heap[nsnap] = m->heap;
  nsnap++;
  CHECK_EQ(t, (uint64_t)nsnap * 500 * MS);
}
static void test_at_and_snapshots(void)
{
  HtModel m;
  HtModelOpts o = {.at_ns = 450 * MS, .snap_ns = 500 * MS, .on_snap = on_snap};
  tape_basic(&tape);
  HtReader *r = run(&tape, &m, &o);
  CHECK_EQ(m.at_heap, 500);
  CHECK_EQ(m.at_heap_n, 2);
  const HtSite *t20 = site_named(&m, "make_table table.c:20");
  CHECK(t20 && t20->f.at == 400);
  CHECK_EQ(nsnap, 4);  /* 0.5, 1.0, 1.5, 2.0 s */
  CHECK_EQ(snap_heap[0], 1500);
  CHECK_EQ(snap_heap[1], 760);
  CHECK_EQ(snap_heap[3], 760);
  ht_model_free(&m);
  ht_reader_close(r);
  free(tape.p);
}

/* Two sets of snapshots hold the same figures. */
static void same_snaps(const HtSnaps *a, const HtSnaps *b)
{
  CHECK_EQ(a->step, b->step);
  CHECK_EQ(a->n, b->n);
  if (a->n != b->n) return;
  for (uint32_t k = 0; k < a->n; k++) {
    CHECK_EQ(a->t[k], b->t[k]);
    CHECK_EQ(a->heap[k], b->heap[k]);
    CHECK_EQ(a->allocs[k], b->allocs[k]);
    CHECK_EQ(a->temp[k], b->temp[k]);
    CHECK_EQ(a->first[k + 1] - a->first[k], b->first[k + 1] - b->first[k]);
    CHECK_EQ(a->dfirst[k + 1] - a->dfirst[k], b->dfirst[k + 1] - b->dfirst[k]);
    CHECK_EQ(a->zfirst[k + 1] - a->zfirst[k], b->zfirst[k + 1] - b->zfirst[k]);
  }
  CHECK_EQ(a->nent, b->nent);
  CHECK_EQ(a->ndent, b->ndent);
  for (size_t e = 0; e < a->nent && e < b->nent; e++) {
    CHECK_EQ(a->esite[e], b->esite[e]);
    CHECK_EQ(a->ebytes[e], b->ebytes[e]);
    CHECK_EQ(a->entn[e], b->entn[e]);
  }
  for (size_t e = 0; e < a->ndent && e < b->ndent; e++) {
    CHECK_EQ(a->dsite[e], b->dsite[e]);
    CHECK_EQ(a->dval[2 * e], b->dval[2 * e]);
    CHECK_EQ(a->dval[2 * e + 1], b->dval[2 * e + 1]);
  }
}

/* Snapshots that fold (from every ns, every other kept at twice the step
** whenever more are due) end as those a pass at their final step takes;
** folding those of a finer pass further, as a loader does, gives the same. */
static void test_folded_snapshots(void)
{
  HtModel m;
  HtSnaps fold = {0}, fine = {0}, fixed = {0};
  HtModelOpts o = {.at_ns = UINT64_MAX};
  tape_basic(&tape);
  ht_snaps_setup(&fold, 2, 0, &o);  /* 2 to 4 snapshots over 2 s */
  HtReader *r = run(&tape, &m, &o);
  uint64_t step = 1ull << 29;    /* 2 s / 2^29 ns = 3.7 */
  CHECK_EQ(ht_snaps_step(m.duration, 4), step);
  CHECK_EQ(fold.step, step);
  CHECK_EQ(fold.n, 3);
  CHECK_EQ(fold.heap[0], 1500);  /* at 0.54 s, after the peak at 0.5 s */
  CHECK_EQ(ht_snaps_fit(&fold, m.duration), 1);
  CHECK_EQ(ht_snaps_fit(&fold, m.duration + step), 0);  /* one short */
  ht_model_free(&m);
  ht_reader_close(r);
  fixed.step = step;
  HtModelOpts of = {.at_ns = UINT64_MAX, .snap_ns = step, .on_snap = ht_snaps_take,
                    .arg = &fixed};
  r = run(&tape, &m, &of);
  ht_model_free(&m);
  ht_reader_close(r);
  same_snaps(&fold, &fixed);
  HtModelOpts o8 = {.at_ns = UINT64_MAX};
  ht_snaps_setup(&fine, 8, 0, &o8);  /* 8 to 16 */
  r = run(&tape, &m, &o8);
  CHECK_EQ(fine.step, 1ull << 27);
  CHECK_EQ(fine.n, 14);
  CHECK_EQ(ht_snaps_fit(&fine, m.duration), 1);
  fine.fold = 4;                   /* folded twice: 7, then 3 */
  CHECK_EQ(ht_snaps_fit(&fine, m.duration), 1);
  same_snaps(&fine, &fixed);
  ht_model_free(&m);
  ht_reader_close(r);
  /* A page of 4 buckets from the 14: the last at or before 0.5, 1, 1.5, 2 s,
  ** the calls of those between added up. */
  HtSnaps page = {0};
  HtModelOpts op = {.at_ns = UINT64_MAX};
  ht_snaps_setup(&page, 8, 1000 * MS, &op);  /* (started at the step of 1 s) */
  r = run(&tape, &m, &op);
  ht_snaps_pick(&page, m.duration, 4);
  CHECK_EQ(page.n, 4);
  CHECK_EQ(page.step, 500 * MS);
  uint64_t fine_step = 1ull << 27, want[] = {3, 7, 11, 14};
  uint64_t calls = 0;
  for (size_t e = 0; e < page.ndent; e++) calls += page.dval[2 * e];
  for (uint32_t k = 0; k < 4 && page.n == 4; k++) CHECK_EQ(page.t[k], want[k] * fine_step);
  CHECK(page.n == 4 && calls == page.allocs[3]);
  ht_snaps_free(&page);
  ht_model_free(&m);
  ht_reader_close(r);
  ht_snaps_free(&fold); ht_snaps_free(&fine); ht_snaps_free(&fixed);
  free(tape.p);
}

/* Sampled tapes: bytes are weights, counts are weight / size. */
static void test_sampled(void)
{
  HtModel m;
  tape_sampled(&tape);
  HtReader *r = run(&tape, &m, NULL);
  CHECK_EQ(m.bytes, 4100 + 8192);
  CHECK_EQ(m.allocs, 41 + 1);
  CHECK_EQ(m.peak, 4100 + 8192);
  CHECK_EQ(m.heap, 8192);
  CHECK_EQ(m.frees, 41);
  ht_model_free(&m);
  ht_reader_close(r);
  free(tape.p);
}

/* Runtime locations name the sites; realloc pairs override Lua lines. */
static void test_lua(void)
{
  HtModel m;
  tape_lua(&tape);
  HtReader *r = run(&tape, &m, NULL);
  const HtLoc *i = loc_named(&m, "INTERNAL"), *l14 = loc_named(&m, "@test.lua:14");
  CHECK(i && l14 && loc_named(&m, "TRACE [3] started at test.lua:8") &&
        loc_named(&m, "string.rep"));
  if (i && l14) {
    CHECK_EQ(i->a_n, 1); CHECK_EQ(i->r_n, 1); CHECK_EQ(i->r_minus, 64);
    CHECK_EQ(i->d_n, 1); CHECK_EQ(i->f.live, 200);
    CHECK_EQ(l14->r_n, 1); CHECK_EQ(l14->r_plus, 96); CHECK_EQ(l14->r_minus, 32);
  }
  CHECK_EQ(m.heap, 96 + 48 + 200);
  ht_model_free(&m);
  ht_reader_close(r);
  free(tape.p);
}

/* Memory follows the live set: a long alloc/free loop keeps few blocks. */
static void test_bounded(void)
{
  HtModel m;
  tape_open(&tape, 0, "native");
  const uint64_t s1[] = {NF(0x1234)};
  uint64_t a = tape_stack(&tape, 0, s1, 1);
  for (int k = 0; k < 20000; k++) {
    tape.ts = (uint64_t)k * 1000;
    tape_alloc(&tape, 0, HT_K_MALLOC, 16, 0x100000 + (uint64_t)(k % 7) * 64, a, 0);
    if (k >= 3) tape_free(&tape, 0, HT_K_MALLOC, 0x100000 + (uint64_t)((k - 3) % 7) * 64);
  }
  tape_close(&tape, 20000000);
  HtReader *r = run(&tape, &m, NULL);
  CHECK_EQ(m.allocs, 20000);
  CHECK_EQ(m.heap_n, 3);
  CHECK(m.rs.live.mask + 1 <= 64);  /* the live table never grew past the live set */
  CHECK_EQ(m.peak, 4 * 16);      /* 4 live just before each free */
  CHECK_EQ(m.dup_allocs, 0);
  CHECK(m.tl.n <= HT_TL_BUCKETS);
  ht_model_free(&m);
  ht_reader_close(r);
  free(tape.p);
}

/* The same address in the native and the runtime domain is two blocks
** (`record --lua=native`): no duplicate, both freed, both counted. */
static void test_domains(void)
{
  HtModel m;
  tape_open(&tape, 0, "lua5.4");
  const uint64_t s1[] = {NF(0x1234)};
  uint64_t a = tape_stack(&tape, 0, s1, 1);
  tape_alloc(&tape, 0, HT_K_MALLOC, 100, 0x5000, a, 0);
  tape_alloc(&tape, 0, HT_K_RUNTIME | HT_K_DOMAIN_RT, 100, 0x5000, a, 0);
  tape_free(&tape, 0, HT_K_RUNTIME | HT_K_DOMAIN_RT, 0x5000);
  tape_alloc(&tape, 0, HT_K_MALLOC, 8, 0x6000, a, 0);
  tape_free(&tape, 0, HT_K_MALLOC, 0x5000);
  tape_close(&tape, 10 * MS);
  HtReader *r = run(&tape, &m, NULL);
  CHECK_EQ(m.allocs, 3);
  CHECK_EQ(m.dup_allocs, 0);
  CHECK_EQ(m.unknown_frees, 0);
  CHECK_EQ(m.heap, 8);
  CHECK_EQ(m.peak, 200);
  ht_model_free(&m);
  ht_reader_close(r);
  free(tape.p);
}

/* The lazy peak snapshot against brute force on a random tape. */
static uint64_t rng = 88172645463325252ull;
/* xorshift64: a deterministic PRNG. */
static uint64_t rnd(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }
static void test_peak_random(void)
{
  enum { NS = 12, NB = 200, NEV = 6000 };
  static uint64_t bsize[NB], live[NS], best[NS];
  static int bsite[NB];
  uint64_t heap = 0, peak = 0, stk[NS];
  memset(bsize, 0, sizeof(bsize)); memset(live, 0, sizeof(live)); memset(best, 0, sizeof(best));
  tape_open(&tape, 0, "native");
  for (int s = 0; s < NS; s++) {
    uint64_t v = NF(0x9000 + s * 16);
    stk[s] = tape_stack(&tape, 0, &v, 1);
  }
  for (int k = 0; k < NEV; k++) {
    tape.ts = (uint64_t)k * 100;
    int b = (int)(rnd() % NB);
    if (bsize[b]) {
      live[bsite[b]] -= bsize[b];
      heap -= bsize[b];
      if (rnd() % 3 == 0) {  /* realloc to a new site */
        tape_free(&tape, 0, HT_K_REALLOC, 0x800000 + (uint64_t)b * 4096);
        bsite[b] = (int)(rnd() % NS);
        bsize[b] = 1 + rnd() % 3000;
        tape_alloc(&tape, 0, HT_K_REALLOC, bsize[b], 0x800000 + (uint64_t)b * 4096,
                   stk[bsite[b]], 0);
        live[bsite[b]] += bsize[b];
        heap += bsize[b];
      } else {
        tape_free(&tape, 0, HT_K_MALLOC, 0x800000 + (uint64_t)b * 4096);
        bsize[b] = 0;
      }
    } else {
      bsite[b] = (int)(rnd() % NS);
      bsize[b] = 1 + rnd() % 3000;
      tape_alloc(&tape, 0, HT_K_MALLOC, bsize[b], 0x800000 + (uint64_t)b * 4096,
                 stk[bsite[b]], 0);
      live[bsite[b]] += bsize[b];
      heap += bsize[b];
    }
    if (heap > peak) { peak = heap; memcpy(best, live, sizeof(best)); }
  }
  tape_close(&tape, (uint64_t)NEV * 100);
  HtModel m;
  HtReader *r = run(&tape, &m, NULL);
  CHECK_EQ(m.peak, peak);
  CHECK_EQ(m.heap, heap);
  int matched = 0;
  for (uint32_t i = 0; i < m.nsite; i++) {
    uint64_t ip = HT_FRAME_IP(ht_reader_stack_frame(r, m.site[i].stack));
    int s = (int)((ip - 0x9000) / 16);
    CHECK(s >= 0 && s < NS);
    if (s < 0 || s >= NS) continue;
    CHECK_EQ(m.site[i].f.peak, best[s]);
    CHECK_EQ(m.site[i].f.live, live[s]);
    matched++;
  }
  CHECK_EQ(matched, NS);
  ht_model_free(&m);
  ht_reader_close(r);
  free(tape.p);
}

/* The report outputs run on every tape and produce valid text. */
static void test_outputs(void)
{
  HtModel m;
  tape_basic(&tape);
  HtReader *r = run(&tape, &m, NULL);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  HtReportOpts o = {.path = "x", .sections = HT_RS_DEFAULT | HT_RS_TEMP, .top = 3, .depth = 2};
  ht_report_text(f, &m, &o);
  ht_report_memprof(f, &m, &o);
  ht_report_json(f, &m, &o);
  fclose(f);
  CHECK(strstr(buf, "peak heap            1500 B in 3 blocks at 0.500 s") != NULL);
  CHECK(strstr(buf, "make_table table.c:20: 1 events\t+400B\t-200B\n\tOverrides:\n"
                    "\t\tmake_table table.c:12\n") != NULL);
  CHECK(strstr(buf, "\"peak\": 1500") != NULL);
  free(buf);
  ht_model_free(&m);
  ht_reader_close(r);
  free(tape.p);
}

int main(void)
{
  TEST(test_basic_totals);
  TEST(test_basic_sites);
  TEST(test_wrapper);
  TEST(test_at_and_snapshots);
  TEST(test_folded_snapshots);
  TEST(test_sampled);
  TEST(test_lua);
  TEST(test_bounded);
  TEST(test_domains);
  TEST(test_peak_random);
  TEST(test_outputs);
  return th_summary();
}
