/* heaptape -- unit tests of the shared pieces in src/base/: the interner,
** the array growth, the live-block table, JSON/XML escaping and the descriptor writer. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testhelper.h"
#include <inttypes.h>

#include "base/dec.h"
#include "base/escape.h"
#include "base/fdio.h"
#include "base/grow.h"
#include "base/hash.h"
#include "base/livetab.h"
#include "base/strtab.h"
#include "../include/heaptape.h"

/* Equal strings share an id, ids are dense, copies are owned. */
static void strtab_ids(void)
{
  HtStrtab t;
  CHECK_EQ(ht_strtab_init(&t, 4), 0);
  char buf[32];
  int added;
  for (int i = 0; i < 1000; i++) {          /* past several growths */
    snprintf(buf, sizeof(buf), "name%d", i);
    CHECK_EQ(ht_strtab_intern(&t, buf, &added), i);
    CHECK_EQ(added, 1);
  }
  strcpy(buf, "name7");
  CHECK_EQ(ht_strtab_intern(&t, buf, &added), 7);
  CHECK_EQ(added, 0);
  buf[0] = 'N';                             /* the table kept its own copy */
  CHECK(!strcmp(t.str[7], "name7"));
  CHECK_EQ(t.n, 1000);
  CHECK_EQ(ht_strtab_intern(&t, "", NULL), 1000);
  ht_strtab_free(&t);
  CHECK_EQ(t.n, 0);
}

/* Growth keeps the contents, zeroes the new slots, never shrinks. */
static void grow_keeps(void)
{
  int *v = NULL;
  size_t cap = 0;
  CHECK_EQ(ht_grow(&v, &cap, 5, sizeof(int)), 0);
  CHECK(cap >= 5);
  for (int i = 0; i < 5; i++) v[i] = i + 1;
  CHECK_EQ(ht_grow(&v, &cap, 100, sizeof(int)), 0);
  CHECK(cap >= 100);
  CHECK_EQ(v[4], 5);
  CHECK_EQ(v[99], 0);
  size_t c = cap;
  CHECK_EQ(ht_grow(&v, &cap, 3, sizeof(int)), 0);
  CHECK_EQ(cap, c);
  CHECK_EQ(ht_grow(&v, &cap, SIZE_MAX / 2, sizeof(int)), -1);  /* overflow refused */
  CHECK_EQ(cap, c);
  free(v);
}

/* What f holds after the writes of fn, as a string (static buffer). */
static const char *captured(void (*fn)(FILE *, const char *), const char *s)
{
  static char out[256];
  memset(out, 0, sizeof(out));
  FILE *f = fmemopen(out, sizeof(out), "w");
  fn(f, s);
  fclose(f);
  return out;
}
static void json_plain(FILE *f, const char *s) { ht_json_str(f, s, 0); }
static void json_script(FILE *f, const char *s) { ht_json_str(f, s, HT_JSON_SCRIPT); }

/* JSON: quotes, backslashes and control characters always; < > & for <script>. */
static void escape_json(void)
{
  CHECK(!strcmp(captured(json_plain, "a\"b\\c\n<&>"), "\"a\\\"b\\\\c\\u000a<&>\""));
  CHECK(!strcmp(captured(json_script, "a<b>&"), "\"a\\u003cb\\u003e\\u0026\""));
  CHECK(!strcmp(captured(json_plain, NULL), "null"));
}

/* XML: the four specials as entities, control characters but tab dropped. */
static void escape_xml(void)
{
  CHECK(!strcmp(captured(ht_xml_text, "<a href=\"x\">&\t\x01"), "&lt;a href=&quot;x&quot;&gt;&amp;\t"));
  CHECK(!strcmp(captured(ht_xml_text, NULL), ""));
}

/* The descriptor writer writes everything, at an offset or at the position. */
static void fd_write_all(void)
{
  char path[] = "/tmp/ht_test_base_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  static char big[1 << 20];
  memset(big, 'x', sizeof(big));
  CHECK_EQ(heaptape_fd_writer(big, sizeof(big), (void *)(intptr_t)fd), sizeof(big));
  CHECK_EQ(ht_fd_write(fd, "ab", 2, 0), 2);
  char got[2];
  CHECK_EQ(pread(fd, got, 2, 0), 2);
  CHECK(got[0] == 'a' && got[1] == 'b');
  CHECK_EQ(lseek(fd, 0, SEEK_END), sizeof(big));
  close(fd);
  unlink(path);
  CHECK_EQ(heaptape_fd_writer("a", 1, (void *)(intptr_t)-1), 0);  /* bad descriptor */
}

/* The hash folds like one pass over the concatenation. */
static void fnv_fold(void)
{
  CHECK(ht_fnv1a_fold(ht_fnv1a("ab"), "cd") == ht_fnv1a("abcd"));
  CHECK(ht_fnv1a_fold(7, NULL) == 7);
  CHECK(ht_fnv1a("a") != ht_fnv1a("b"));
}

/* Decimal as printf writes it: 0, each power of ten and its neighbours,
** each power of two less one, the largest (the digit count's edges). */
static void dec_digits(void)
{
  char a[HT_DEC_MAX + 1], b[32];
  uint64_t p = 1;
  for (int i = 0; i < 64; i++) {
    uint64_t vs[] = {p - 1, p, p + 1, (1ull << i) - 1, 1ull << i, UINT64_MAX - (uint64_t)i, 0};
    for (size_t k = 0; k < sizeof(vs) / sizeof(vs[0]); k++) {
      *ht_dec_u64(a, vs[k]) = 0;
      snprintf(b, sizeof(b), "%" PRIu64, vs[k]);
      CHECK(!strcmp(a, b));
    }
    if (i < 19) p *= 10;
  }
}

/* A block's payload in the live-table tests: what its key says. */
static void live_fill(uint64_t *p, uint64_t key)
{
  for (int i = 0; i < 4; i++) p[i] = key * (uint64_t)(i + 3);
}

/* Put, get and delete against a bitmap of which keys are in, past the
** 2 MiB where a table is remapped as it doubles; every key found with its
** payload, none found that is out, the count and the walk agree. */
static void live_matches(int dense)
{
  enum { N = 200000 };
  static uint8_t in[N];
  memset(in, 0, sizeof(in));
  HtLive t;
  ht_live_init(&t, 4 * sizeof(uint64_t));
  if (dense) ht_live_dense(&t);
  uint64_t x = 88172645463325252ull, nin = 0;
  for (int step = 0; step < 1200000; step++) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    uint64_t i = x % N, key = dense || !i ? i : ht_hash64(i) & ~15ull;  /* 0 among them */
    int existed = -1;
    if ((x >> 40) % 8 < 5) {        /* more puts than deletes: it grows */
      uint64_t *p = ht_live_put(&t, key, &existed);
      CHECK(p != NULL);
      CHECK_EQ(existed, in[i]);
      live_fill(p, key);
      nin += !in[i];
      in[i] = 1;
    } else if ((x >> 40) % 8 < 7) {
      uint64_t out[4];
      CHECK_EQ(ht_live_del(&t, key, out), in[i]);
      if (in[i]) CHECK_EQ(out[3], key * 6);
      nin -= in[i];
      in[i] = 0;
    } else {
      uint64_t *p = ht_live_get(&t, key);
      CHECK_EQ(p != NULL, in[i]);
      if (p) CHECK_EQ(p[1], key * 4);
    }
  }
  CHECK_EQ(t.count, nin);
  CHECK(nin > 100000);
  size_t it = 0, seen = 0;
  uint64_t key;
  void *v;
  while (ht_live_next(&t, &it, &key, &v)) {
    seen++;
    CHECK_EQ(((uint64_t *)v)[0], key * 3);
  }
  CHECK_EQ(seen, nin);
  for (uint64_t i = 0; i < N; i++) {
    uint64_t k = dense || !i ? i : ht_hash64(i) & ~15ull;
    CHECK_EQ(ht_live_get(&t, k) != NULL, in[i]);
  }
  ht_live_free(&t);
}

static void live_random(void) { live_matches(0); }
static void live_dense(void) { live_matches(1); }

/* Addresses 8 bytes apart in one 512-byte span get consecutive homes (what
** keeps blocks carved one after another side by side), spans apart do not;
** a span's 64 blocks and their neighbours' are all kept and found. */
static void live_near(void)
{
  HtLive t;
  ht_live_init(&t, 4 * sizeof(uint64_t));
  const uint64_t base = 0x7f0000001000ull;
  for (uint64_t k = 8; k < 512; k += 8)
    CHECK_EQ(ht_live_home(&t, base + k), ht_live_home(&t, base) + k / 8);
  size_t far = 0;
  for (uint64_t s = 1; s <= 64; s++)
    far += ht_live_home(&t, base + 512 * s) - ht_live_home(&t, base) > 64 &&
           ht_live_home(&t, base) - ht_live_home(&t, base + 512 * s) > 64;
  CHECK(far >= 60);  /* 64 bits of hash: a neighbouring span lands far away */
  for (uint64_t k = 0; k < 64 * 512; k += 8) {  /* 64 spans, every step full */
    int existed;
    uint64_t *p = ht_live_put(&t, base + k, &existed);
    CHECK(p && !existed);
    live_fill(p, base + k);
  }
  CHECK_EQ(t.count, 64 * 64);
  for (uint64_t k = 0; k < 64 * 512; k += 8) {
    uint64_t *p = ht_live_get(&t, base + k);
    CHECK(p && p[2] == (base + k) * 5);
  }
  for (uint64_t k = 0; k < 64 * 512; k += 16) CHECK_EQ(ht_live_del(&t, base + k, NULL), 1);
  for (uint64_t k = 0; k < 64 * 512; k += 8)
    CHECK_EQ(ht_live_get(&t, base + k) != NULL, (k & 8) != 0);
  ht_live_free(&t);
}

/* Keys whose homes are all the last home of every table up to 2^16: their
** probes run off the end, doubling moves them all to the new last home,
** and only a table of 2^17 homes parts them. Every one is kept. A home is
** hash(k >> 9) << 6 | (k >> 3 & 63) (livetab.h): the last of its 64 slots,
** and the hash's low 10 bits all ones. */
static void live_collide(void)
{
  enum { N = 3000 };
  HtLive t;
  ht_live_init(&t, 4 * sizeof(uint64_t));
  uint64_t keys[N], g = 0;
  for (uint64_t i = 0; i < N; i++) {
    while ((ht_hash64(++g) & 0x3ff) != 0x3ff) {}
    keys[i] = g << 9 | 63 << 3;
    CHECK_EQ(ht_live_home(&t, keys[i]) & 0xffff, 0xffff);
    int existed;
    uint64_t *p = ht_live_put(&t, keys[i], &existed);
    CHECK(p != NULL);
    CHECK_EQ(existed, 0);
    live_fill(p, keys[i]);
  }
  CHECK_EQ(t.count, N);
  CHECK(t.mask + 1 >= 1u << 17);
  for (int i = 0; i < N; i++) {
    uint64_t *p = ht_live_get(&t, keys[i]);
    CHECK(p && p[2] == keys[i] * 5);
  }
  for (int i = 0; i < N; i += 2) CHECK_EQ(ht_live_del(&t, keys[i], NULL), 1);
  for (int i = 0; i < N; i++) CHECK_EQ(ht_live_get(&t, keys[i]) != NULL, i % 2);
  ht_live_free(&t);
}

int main(void)
{
  TEST(strtab_ids);
  TEST(grow_keeps);
  TEST(escape_json);
  TEST(escape_xml);
  TEST(fd_write_all);
  TEST(fnv_fold);
  TEST(dec_digits);
  TEST(live_random);
  TEST(live_dense);
  TEST(live_near);
  TEST(live_collide);
  return th_summary();
}
