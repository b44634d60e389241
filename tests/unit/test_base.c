/* heaptape -- unit tests of the shared pieces in src/base/: the interner,
** the array growth, JSON/XML escaping and the descriptor writer. */
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

int main(void)
{
  TEST(strtab_ids);
  TEST(grow_keeps);
  TEST(escape_json);
  TEST(escape_xml);
  TEST(fd_write_all);
  TEST(fnv_fold);
  TEST(dec_digits);
  return th_summary();
}
