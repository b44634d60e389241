/* heaptape -- unit tests of ACCESS packets (format version 4): the encoder
** (src/format/accessw.h) against the decoder (src/analyze/access.c), alone
** and among the resolved events; damage; squeezing. With
** HT_WRITE_CORPUS=DIR, also writes small tapes with accesses as fuzz seeds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testhelper.h"
#include "../../include/heaptape_errors.h"
#include "../../src/analyze/access.h"
#include "../../src/format/accessw.h"
#include "../../src/format/squeeze.h"
#include "../../src/format/writer.h"

#define PID 777

/* One access as the test made it. */
typedef struct Acc { uint32_t tid; uint64_t blk, before, ts, off, size; unsigned kind; } Acc;

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(uint64_t n)
{
  rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
  return n ? rng % n : 0;
}

/* A tape: n blocks allocated by thread 1 (ALLOC seq 1..n at 0x10000 * k),
** then accesses made by the pattern generator, then every block freed
** (seq n+1..2n). Accesses have before in 2..n+1. */
static HtMemTape make_tape(Acc *acc, size_t nacc, int nblocks, int zstd, size_t body)
{
  HtMemTape m = {0};
  HtWriter *w = ht_writer_new(ht_mem_sink, &m, zstd);
  HtTapeInfo info = {.pid = PID, .clock = HT_CLOCK_MOCK, .clock_res = 1,
                     .frontend = "native", .clock_start = 1000};
  ht_writer_header(w, &info);
  uint8_t sbuf[65536];
  HtStream s;
  ht_stream_init(&s, sbuf, sizeof(sbuf), PID, 1, NULL, NULL);
  s.ts0 = s.ts_prev = 1000;
  for (int k = 1; k <= nblocks; k++) {
    ht_stream_time(&s, 1000 + (uint64_t)k);
    ht_stream_alloc(&s, (uint64_t)k, 0, 4096, 0x10000ull * (uint64_t)k, 0, 0, 0);
  }
  for (int k = 1; k <= nblocks; k++) {
    ht_stream_time(&s, 100000 + (uint64_t)k);
    ht_stream_free(&s, (uint64_t)(nblocks + k), 0, 0x10000ull * (uint64_t)k, 0);
  }
  ht_writer_stream(w, &s);
  uint8_t *abuf = malloc(body);
  HtAccessW aw;
  ht_accessw_init(&aw, abuf, body);
  for (size_t i = 0; i < nacc; i++) {
    const Acc *a = &acc[i];
    if (ht_accessw_full(&aw)) {
      ht_accessw_end_run(&aw);
      ht_writer_packet(w, HT_P_ACCESS, PID, 0, aw.seq0, aw.seq1, aw.ts0, aw.nev, abuf,
                       ht_accessw_len(&aw));
      ht_accessw_init(&aw, abuf, body);
    }
    ht_accessw_add(&aw, a->tid, a->blk, a->before, a->ts, a->kind, a->off, a->size);
  }
  ht_accessw_end_run(&aw);
  if (ht_accessw_len(&aw))
    ht_writer_packet(w, HT_P_ACCESS, PID, 0, aw.seq0, aw.seq1, aw.ts0, aw.nev, abuf,
                     ht_accessw_len(&aw));
  ht_writer_destroy(w);
  free(abuf);
  return m;
}

/* Accesses with the patterns programs make: sequential walks, the same
** word again and again, strides, odd sizes, several threads and blocks. */
static size_t gen_accesses(Acc *acc, size_t max, int nblocks)
{
  size_t n = 0;
  uint64_t before = 2, ts = 2000;
  while (n < max) {
    Acc a = {.tid = 1 + (uint32_t)rnd(3), .blk = 1 + rnd((uint64_t)nblocks),
             .kind = 1 + (unsigned)rnd(3)};
    if (a.blk + 1 > before) a.blk = before - 1;  /* only blocks already live */
    uint64_t size = rnd(4) ? 1ull << rnd(7) : 1 + rnd(300), off = rnd(4096);
    int64_t step = rnd(3) == 0 ? 0 : rnd(2) ? (int64_t)size : (int64_t)rnd(64) - 32;
    size_t reps = rnd(3) ? 1 + rnd(5) : 1 + rnd(2000);
    for (size_t r = 0; r < reps && n < max; r++) {
      a.before = before;
      a.ts = ts;
      a.off = off;
      a.size = size;
      acc[n++] = a;
      off += (uint64_t)step;
      if (rnd(50) == 0) a.kind = 1 + (unsigned)rnd(3);
    }
    if (rnd(8) == 0 && before < (uint64_t)nblocks + 1) before++;
    if (rnd(4) == 0) ts += rnd(1000);
  }
  return n;
}

static const uint8_t kinds[4] = {0, HT_ACC_LOAD, HT_ACC_STORE, HT_ACC_MODIFY};

/* Decode m's accesses and compare them with acc[n] one by one. */
static void check_decode(const HtMemTape *m, const Acc *acc, size_t n)
{
  HtReader *r;
  char err[200];
  CHECK_EQ(ht_reader_open_mem(&r, m->p, m->n, err, sizeof(err)), 0);
  HtAccessInfo info;
  ht_access_info(r, &info);
  CHECK(info.present);
  CHECK_EQ(info.accesses, n);
  HtAccessIter *it;
  CHECK_EQ(ht_access_open(&it, r), 0);
  HtAccess a;
  size_t i = 0, bad = 0;
  while (ht_access_next(it, &a)) {
    if (i < n) {
      const Acc *e = &acc[i];
      if (a.tid != e->tid || a.alloc_seq != e->blk || a.before != e->before ||
          a.ts != e->ts - 1000 || a.offset != e->off || a.size != e->size ||
          a.kind != kinds[e->kind])
        bad++;
    }
    i++;
  }
  CHECK_EQ(i, n);
  CHECK_EQ(bad, 0);
  CHECK_EQ(ht_access_damaged(it), 0);
  ht_access_close(it);
  ht_reader_close(r);
}

/* Random accesses survive the round trip exactly, raw and compressed, in
** small and default-size packets. */
static void test_roundtrip(void)
{
  size_t max = 200000;
  Acc *acc = malloc(max * sizeof(Acc));
  size_t n = gen_accesses(acc, max, 50);
  for (int zstd = 0; zstd <= 1; zstd++)
    for (int small = 0; small <= 1; small++) {
      HtMemTape m = make_tape(acc, n, 50, zstd, small ? 256 : 65536);
      check_decode(&m, acc, n);
      free(m.p);
    }
  free(acc);
}

/* A sequential walk folds to a few bytes: 18 loads of 8 bytes are 0d 8d 0f
** (docs/FORMAT.md's example), a 1000-store loop a handful of bytes. */
static void test_folding(void)
{
  uint8_t buf[256];
  HtAccessW w;
  ht_accessw_init(&w, buf, sizeof(buf));
  for (int i = 0; i < 18; i++) ht_accessw_add(&w, 5, 1, 2, 0, HT_AK_LOAD, 8u * i, 8);
  ht_accessw_end_run(&w);
  size_t len = ht_accessw_len(&w);
  CHECK(len >= 4);
  CHECK_EQ(buf[len - 4], 0x0d);
  CHECK_EQ(buf[len - 3], 0x8d);
  CHECK_EQ(buf[len - 2], 0x0f);
  CHECK_EQ(buf[len - 1], 0);
  ht_accessw_init(&w, buf, sizeof(buf));
  for (int i = 0; i < 1000; i++) ht_accessw_add(&w, 5, 1, 2, 0, HT_AK_STORE, 16, 4);
  ht_accessw_end_run(&w);
  CHECK(ht_accessw_len(&w) <= 10);
  CHECK_EQ(w.nev, 1000);
}

typedef struct Seen { uint64_t n, bad, last_seq; HtResolve *rs; } Seen;

static void seen_event(void *ctx, const HtRes *res)
{
  Seen *s = ctx;
  s->last_seq = res->ev->seq;
}

static void seen_access(void *ctx, const HtAccess *a)
{
  Seen *s = ctx;
  s->n++;
  /* Delivered after its block's New (seq blk), before event `before`. */
  if (s->last_seq >= a->before || a->handle != a->alloc_seq ||
      a->addr != 0x10000ull * a->alloc_seq + a->offset || a->block_size != 4096)
    s->bad++;
}

/* Among the events: each access between the event before it and the one
** it names, with its block's handle and address. */
static void test_run(void)
{
  size_t max = 20000;
  Acc *acc = malloc(max * sizeof(Acc));
  size_t n = gen_accesses(acc, max, 20);
  HtMemTape m = make_tape(acc, n, 20, 1, 65536);
  HtReader *r;
  char err[200];
  CHECK_EQ(ht_reader_open_mem(&r, m.p, m.n, err, sizeof(err)), 0);
  HtResolve rs;
  ht_resolve_init(&rs);
  Seen s = {.rs = &rs};
  CHECK_EQ(ht_access_run(&rs, r, seen_event, seen_access, &s), 0);
  CHECK_EQ(s.n, n);
  CHECK_EQ(s.bad, 0);
  ht_resolve_free(&rs);
  ht_reader_close(r);
  free(m.p);
  free(acc);
}

/* A damaged ACCESS body ends that packet's accesses, never the reading. */
static void test_damage(void)
{
  size_t max = 3000;
  Acc *acc = malloc(max * sizeof(Acc));
  size_t n = gen_accesses(acc, max, 10);
  HtMemTape m = make_tape(acc, n, 10, 0, 512);
  HtReader *r;
  char err[200];
  /* Cut every run's terminator in the first ACCESS packet's body: trust no
  ** checksum so the decoder meets the damage. */
  CHECK_EQ(ht_reader_open_mem(&r, m.p, m.n, err, sizeof(err)), 0);
  HtPacketInfo pk;
  uint8_t *own;
  const uint8_t *b = ht_reader_access_packet(r, 0, &pk, &own);
  CHECK(b != NULL && !own);
  size_t at = (size_t)(b - m.p);
  ht_reader_close(r);
  for (size_t i = 0; i < pk.rawlen; i++) m.p[at + i] = 0xff;
  CHECK_EQ(ht_reader_open_mem_nocrc(&r, m.p, m.n, err, sizeof(err)), 0);
  HtAccessIter *it;
  CHECK_EQ(ht_access_open(&it, r), 0);
  HtAccess a;
  size_t k = 0;
  while (ht_access_next(it, &a)) k++;
  CHECK(k < n);
  CHECK(k >= n - pk.nev);
  CHECK_EQ(ht_access_damaged(it), 1);
  ht_access_close(it);
  ht_reader_close(r);
  free(m.p);
  free(acc);
}

/* ht_tape_squeeze compresses the raw packets and changes no access. */
static void test_squeeze(void)
{
  size_t max = 50000;
  Acc *acc = malloc(max * sizeof(Acc));
  size_t n = gen_accesses(acc, max, 30);
  HtMemTape m = make_tape(acc, n, 30, 0, 65536);
  char path[] = "/tmp/ht_test_access_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  CHECK_EQ(write(fd, m.p, m.n), (long long)m.n);
  close(fd);
  char err[300];
  CHECK_EQ(ht_tape_squeeze(path, 3, err, sizeof(err)), 0);
  FILE *f = fopen(path, "rb");
  HtMemTape z = {.p = malloc(m.n + 1)};
  z.n = f ? fread(z.p, 1, m.n + 1, f) : 0;
  if (f) fclose(f);
  CHECK(z.n > 0 && z.n < m.n);
  check_decode(&z, acc, n);
  unlink(path);
  free(z.p);
  free(m.p);
  free(acc);
}

/* Small tapes with accesses as fuzz seeds (raw and compressed). */
static void write_corpus(const char *dir)
{
  for (int i = 0; i < 2; i++) {
    Acc acc[300];
    size_t n = gen_accesses(acc, 300, 6);
    HtMemTape m = make_tape(acc, n, 6, i, i ? 65536 : 200);
    char path[512];
    snprintf(path, sizeof(path), "%s/access-%d.tape", dir, i);
    FILE *f = fopen(path, "wb");
    if (f) { fwrite(m.p, 1, m.n, f); fclose(f); }
    free(m.p);
  }
}

int main(void)
{
  if (getenv("HT_WRITE_CORPUS")) write_corpus(getenv("HT_WRITE_CORPUS"));
  TEST(test_folding);
  TEST(test_roundtrip);
  TEST(test_run);
  TEST(test_damage);
  TEST(test_squeeze);
  return th_summary();
}
