/* heaptape -- unit tests of the pprof export: a golden tape through the tally
** into a profile, gunzipped and decoded with protobuf-c, totals checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "testhelper.h"
#include "format/reader.h"
#include "analyze/model.h"
#include "output/pprof.h"
#include "profile.pb-c.h"

/* Read and gunzip a whole file; returns the bytes (caller frees). */
static uint8_t *gunzip_file(const char *path, size_t *len)
{
  gzFile g = gzopen(path, "rb");
  if (!g) return NULL;
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  int k;
  while (buf && (k = gzread(g, buf + n, (unsigned)(cap - n))) > 0) {
    n += (size_t)k;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  gzclose(g);
  *len = n;
  return buf;
}

/* Profile of one tape (mode, at) decoded; NULL on failure. */
static Perftools__Profiles__Profile *profile_of(const char *tape, int mode, HtModel *m)
{
  HtReader *r;
  char err[256];
  if (ht_reader_open(&r, tape, err, sizeof(err))) return NULL;
  HtTally t;
  HtModelOpts mo = {.at_ns = UINT64_MAX, .split = 1};
  ht_model_init(m, r, &mo);
  ht_model_run(m);
  ht_tally_from_model(&t, m, mode);
  HtPprof *p = ht_pprof_new();
  HtPprofSrc src = {.r = r, .t = &t};
  char out[] = "/tmp/test_pprof_XXXXXX";
  int fd = mkstemp(out);
  if (fd >= 0) close(fd);
  Perftools__Profiles__Profile *pr = NULL;
  if (!ht_pprof_add(p, &src) && !ht_pprof_write(p, out, err, sizeof(err))) {
    size_t len;
    uint8_t *b = gunzip_file(out, &len);
    if (b) pr = perftools__profiles__profile__unpack(NULL, len, b);
    free(b);
  }
  unlink(out);
  ht_pprof_destroy(p);
  ht_tally_free(&t);
  m->r = NULL;  /* the reader is closed here; the figures stay */
  ht_reader_close(r);
  return pr;
}

/* Sum of sample values of type i. */
static long long sum_of(const Perftools__Profiles__Profile *pr, size_t i)
{
  long long s = 0;
  for (size_t k = 0; k < pr->n_sample; k++) s += pr->sample[k]->value[i];
  return s;
}

/* The four totals equal the model's, and the string table starts with "". */
static void test_totals(void)
{
  const char *tapes[] = {"tests/data/rep_basic.tape", "tests/data/rep_lua.tape",
                         "tests/data/rep_sampled.tape"};
  for (size_t i = 0; i < 3; i++) {
    HtModel m;
    Perftools__Profiles__Profile *pr = profile_of(tapes[i], HT_INUSE_END, &m);
    CHECK(pr != NULL);
    if (!pr) continue;
    CHECK_EQ(pr->n_sample_type, 4);
    CHECK(!strcmp(pr->string_table[0], ""));
    CHECK(!strcmp(pr->string_table[pr->sample_type[3]->type], "inuse_space"));
    CHECK_EQ(sum_of(pr, 0), m.allocs);
    CHECK_EQ(sum_of(pr, 1), m.bytes);
    CHECK_EQ(sum_of(pr, 2), m.heap_n);
    CHECK_EQ(sum_of(pr, 3), m.heap);
    for (size_t k = 0; k < pr->n_location; k++) CHECK_EQ(pr->location[k]->id, k + 1);
    perftools__profiles__profile__free_unpacked(pr, NULL);
    ht_model_free(&m);
  }
}

/* --at peak: inuse totals are the model's peak. */
static void test_peak(void)
{
  HtModel m;
  Perftools__Profiles__Profile *pr = profile_of("tests/data/rep_basic.tape", HT_INUSE_PEAK, &m);
  CHECK(pr != NULL);
  if (!pr) return;
  CHECK_EQ(sum_of(pr, 3), m.peak);
  CHECK_EQ(sum_of(pr, 2), m.peak_n);
  perftools__profiles__profile__free_unpacked(pr, NULL);
  ht_model_free(&m);
}

int main(void)
{
  TEST(test_totals);
  TEST(test_peak);
  return th_summary();
}
