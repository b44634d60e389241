/* heaptape -- unit tests of the follower (src/analyze/follow.c): a tape fed
** to it in chunks, cut anywhere, gives the figures of the tape read whole,
** read by the follower itself or by the sealer feeding it (record --live),
** and a tape cut short under its follower.
** With a tape as argument: follow a copy of it grown in chunks (both ways),
** check it against one poll of the whole tape (live figures only when no
** event came after its hold), print the whole poll's sites (name, calls,
** bytes, live bytes, live blocks; tab-separated) for
** tests/integration/live_view.sh. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testhelper.h"
#include "rep_tapes.h"
#include "analyze/follow.h"
#include "analyze/model.h"
#include "analyze/sealfollow.h"

static Tape tape;
static char tmp[256];

/* Follow tmp while p[0..n) is appended to it chunk bytes at a time (a prime
** chunk cuts packets anywhere); f is left set up for the caller. With sf,
** f is fed by sf's sealing pass (sf set up for tmp and the tape's pid). */
static void follow_chunks_fed(HtFollow *f, HtSealFollow *sf, const uint8_t *p, size_t n,
                              size_t chunk)
{
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  CHECK_EQ(ht_follow_init(f, tmp, sf ? sf->pid : 0), 0);
  if (sf) ht_follow_feed(f, sf);
  size_t off = 0;
  int opened = 0;
  while (off < n) {
    size_t k = n - off < chunk ? n - off : chunk;
    CHECK_EQ(write(fd, p + off, k), (long long)k);
    off += k;
    if (off < 64 && !opened) continue;  /* not yet a whole header */
    int rc = ht_follow_poll(f, 0);
    if (rc && !opened) continue;        /* (the header's own length) */
    opened = 1;
    CHECK_EQ(rc, 0);
    if (f->r) {  /* a partial packet is not damage while the tape grows */
      CHECK_EQ(ht_reader_stats(f->r)->damaged, 0);
      CHECK(ht_reader_stats(f->r)->first_error_off == UINT64_MAX);
    }
  }
  close(fd);
  CHECK_EQ(ht_follow_poll(f, 0), 0);
}

static void follow_chunks(HtFollow *f, const uint8_t *p, size_t n, size_t chunk)
{
  follow_chunks_fed(f, NULL, p, n, chunk);
}

/* The pid a tape's header names. */
static uint32_t tape_pid(const uint8_t *p, size_t n)
{
  HtReader *r;
  char err[256];
  CHECK_EQ(ht_reader_open_mem(&r, p, n, err, sizeof(err)), 0);
  uint32_t pid = ht_reader_header(r)->pid;
  ht_reader_close(r);
  return pid;
}

/* Every location of a whole-tape model has a follower site with its figures. */
static void check_against_model(HtFollow *f, const uint8_t *p, size_t n)
{
  HtReader *r;
  char err[256];
  CHECK_EQ(ht_reader_open_mem(&r, p, n, err, sizeof(err)), 0);
  HtModel m;
  CHECK_EQ(ht_model_init(&m, r, NULL), 0);
  CHECK_EQ(ht_model_run(&m), 0);
  CHECK(f->done);
  CHECK_EQ(f->m.heap, m.heap);
  CHECK_EQ(f->m.peak, m.peak);
  CHECK_EQ(f->m.allocs, m.allocs);
  size_t found = 0;
  for (uint32_t i = 0; i < m.nloc; i++) {
    const HtLoc *l = &m.loc[i];
    for (size_t j = 0; j < ht_follow_nsite(f); j++) {
      const HtFollowSite *s = &f->site[j];
      if (strcmp(s->name, l->name) || (!s->allocs && !s->live)) continue;
      found++;
      CHECK_EQ(s->allocs, l->f.allocs);
      CHECK_EQ(s->bytes, l->f.bytes);
      CHECK_EQ(s->live, l->f.live);
      CHECK_EQ(s->live_n, l->f.live_n);
    }
  }
  CHECK_EQ(found, m.nloc);
  ht_model_free(&m);
  ht_reader_close(r);
}

/* Each synthetic tape, in chunks of several sizes. */
static void test_chunks(void)
{
  void (*make[])(Tape *) = {tape_basic, tape_lua, tape_sampled};
  const size_t chunks[] = {1, 7, 61, 331, 4099, 1 << 20};
  for (size_t t = 0; t < HT_COUNTOF(make); t++) {
    memset(&tape, 0, sizeof(tape));
    make[t](&tape);
    for (size_t c = 0; c < HT_COUNTOF(chunks); c++) {
      HtFollow f;
      follow_chunks(&f, tape.p, tape.n, chunks[c]);
      check_against_model(&f, tape.p, tape.n);
      CHECK(f.nmom > 0);  /* the history has moments */
      ht_follow_free(&f);
    }
    free(tape.p);
  }
}

/* Fed by the sealer (record --live): the same figures; the sealer did
** not give up, and the follower's history has moments. */
static void test_fed(void)
{
  void (*make[])(Tape *) = {tape_basic, tape_lua, tape_sampled};
  const size_t chunks[] = {7, 331, 1 << 20};
  for (size_t t = 0; t < HT_COUNTOF(make); t++) {
    memset(&tape, 0, sizeof(tape));
    make[t](&tape);
    for (size_t c = 0; c < HT_COUNTOF(chunks); c++) {
      HtFollow f;
      HtSealFollow sf;
      CHECK_EQ(ht_sealfollow_init(&sf, tmp, tape_pid(tape.p, tape.n), 0), 0);
      follow_chunks_fed(&f, &sf, tape.p, tape.n, chunks[c]);
      CHECK(!sf.off);
      CHECK(f.sf == &sf && f.r == sf.r);
      check_against_model(&f, tape.p, tape.n);
      CHECK(f.nmom > 0);
      CHECK_EQ(sf.sum.events, f.m.events);  /* one pass: the sealer's */
      ht_follow_free(&f);
      CHECK(sf.also == NULL);  /* let go of */
      ht_sealfollow_free(&sf);
    }
    free(tape.p);
  }
}

/* A tape cut inside a packet (a crashed writer): final delivers what is whole. */
static void test_cut(void)
{
  memset(&tape, 0, sizeof(tape));
  tape_basic(&tape);
  HtFollow f;
  follow_chunks(&f, tape.p, tape.n * 2 / 3, 97);
  CHECK(!f.done);
  CHECK_EQ(ht_follow_poll(&f, 1), 0);
  CHECK(f.done);
  CHECK(ht_reader_stats(f.r)->truncated_bytes > 0);
  CHECK_EQ(ht_reader_stats(f.r)->damaged, 0);
  ht_follow_free(&f);
  free(tape.p);
}

/* The tape cut short while followed (a new run truncating the path, the
** recorder cutting back an exec that failed): the events already found
** still read, and the next poll forgets what went. A mapping of the file
** would raise SIGBUS at the first page past the cut. */
static void test_truncated_under(void)
{
  memset(&tape, 0, sizeof(tape));
  tape_basic(&tape);
  HtReader *whole;
  char err[256];
  CHECK_EQ(ht_reader_open_mem(&whole, tape.p, tape.n, err, sizeof(err)), 0);
  HtEvent ev;
  uint64_t want = 0, got = 0;
  while (ht_reader_next(whole, &ev) > 0) want++;
  ht_reader_close(whole);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  CHECK_EQ(write(fd, tape.p, tape.n), (long long)tape.n);
  HtReader *r;
  CHECK_EQ(ht_reader_open_follow(&r, tmp, err, sizeof(err)), 0);
  CHECK_EQ(ftruncate(fd, 0), 0);
  while (ht_reader_next(r, &ev) > 0) got++;
  CHECK(want > 10);
  CHECK_EQ(got, want);
  CHECK(ht_reader_poll(r) >= 0);
  CHECK_EQ(ht_reader_next(r, &ev), 0);
  close(fd);
  ht_reader_close(r);
  free(tape.p);
}

/* Under an address-space limit (ulimit -v 2 GiB) a tape is followed all
** the same: the room reserved to grow shrinks to fit (64 GiB was refused:
** `heaptape live` said "cannot reserve memory to follow it"). A child takes
** the limit; ASan's shadow memory needs more than any such limit. */
static void test_limited_space(void)
{
#if !defined(__SANITIZE_ADDRESS__)
  memset(&tape, 0, sizeof(tape));
  tape_basic(&tape);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  CHECK_EQ(write(fd, tape.p, tape.n), (long long)tape.n);
  close(fd);
  pid_t pid = fork();
  if (pid == 0) {
    struct rlimit rl = {(rlim_t)2 << 30, (rlim_t)2 << 30};
    HtReader *r;
    HtEvent ev;
    char err[256];
    uint64_t got = 0;
    if (setrlimit(RLIMIT_AS, &rl) || ht_reader_open_follow(&r, tmp, err, sizeof(err))) _exit(1);
    while (ht_reader_next(r, &ev) > 0) got++;
    ht_reader_close(r);
    _exit(got > 10 ? 0 : 2);
  }
  int st = -1;
  CHECK_EQ(waitpid(pid, &st, 0), pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  free(tape.p);
#endif
}

/* A missing file and one that is not a tape: an error naming the file. */
static void test_errors(void)
{
  HtFollow f;
  CHECK_EQ(ht_follow_init(&f, "/nonexistent/x.tape", 0), 0);
  CHECK(ht_follow_poll(&f, 0) != 0);
  CHECK(strstr(f.err, "/nonexistent/x.tape") != NULL);
  ht_follow_free(&f);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK_EQ(write(fd, "not a tape at all, just text\n", 29), 29);
  close(fd);
  CHECK_EQ(ht_follow_init(&f, tmp, 0), 0);
  CHECK(ht_follow_poll(&f, 0) != 0);
  ht_follow_free(&f);
  /* Following a pid: a file not there yet is no error, only "not yet". */
  CHECK_EQ(ht_follow_init(&f, "/nonexistent/x.tape", 1234), 0);
  CHECK_EQ(ht_follow_poll(&f, 0), 0);
  CHECK(f.r == NULL);
  ht_follow_free(&f);
}

/* Follower a (chunked) against b (one poll of the whole tape); b's sites
** printed when print is set. */
static void real_compare(const HtFollow *a, const HtFollow *b, int print)
{
  CHECK(a->done && b->done);
  CHECK_EQ(a->m.allocs, b->m.allocs);
  /* Live figures depend on the order; a thread's packet written later than
  ** the hold waits (seen on a machine loaded 20 deep) makes them differ, and
  ** the follower counts such events (fed by the sealer, which gives up
  ** then, the follower reads the tape again by itself). Calls and bytes
  ** never depend on it. */
  int exact = a->late == 0;
  if (!exact)
    fprintf(stderr, "  note: %llu events came after their hold: live figures not compared\n",
            (unsigned long long)a->late);
  if (exact) CHECK_EQ(a->m.heap, b->m.heap);
  CHECK_EQ(ht_follow_nsite(a) >= ht_follow_nsite(b), 1);
  for (size_t j = 0; j < ht_follow_nsite(b); j++) {
    const HtFollowSite *y = &b->site[j];
    if (!y->allocs && !y->live) continue;
    const HtFollowSite *x = NULL;
    for (size_t i = 0; i < ht_follow_nsite(a) && !x; i++)
      if (!strcmp(a->site[i].name, y->name) && (a->site[i].allocs || a->site[i].live))
        x = &a->site[i];
    CHECK(x != NULL);
    if (!x) { fprintf(stderr, "  missing: %s\n", y->name); continue; }
    CHECK_EQ(x->allocs, y->allocs);
    CHECK_EQ(x->bytes, y->bytes);
    if (exact) CHECK_EQ(x->live, y->live);
    if (exact) CHECK_EQ(x->live_n, y->live_n);
    if (print)
      printf("%s\t%llu\t%llu\t%llu\t%llu\n", y->name, (unsigned long long)y->allocs,
             (unsigned long long)y->bytes, (unsigned long long)y->live,
             (unsigned long long)y->live_n);
  }
}

/* A real tape: chunked against whole, read by the follower and fed by the
** sealer, then the sites printed. */
static int real_tape(const char *path)
{
  FILE *in = fopen(path, "rb");
  if (!in) { perror(path); return 2; }
  struct stat sb;
  fstat(fileno(in), &sb);
  uint8_t *p = malloc((size_t)sb.st_size + 1);
  size_t n = fread(p, 1, (size_t)sb.st_size, in);
  fclose(in);
  HtFollow a, b, c;
  th_name = "real_tape";
  follow_chunks(&a, p, n, 65521);
  CHECK_EQ(ht_follow_init(&b, path, 0), 0);
  CHECK_EQ(ht_follow_poll(&b, 0), 0);
  CHECK_EQ(b.late, 0);  /* read whole: nothing is late */
  real_compare(&a, &b, 0);
  ht_follow_free(&a);  /* (its copy is written again) */
  HtSealFollow sf;
  CHECK_EQ(ht_sealfollow_init(&sf, tmp, tape_pid(p, n), 0), 0);
  follow_chunks_fed(&c, &sf, p, n, 65521);
  real_compare(&c, &b, 1);
  ht_follow_free(&b);
  ht_follow_free(&c);
  ht_sealfollow_free(&sf);
  free(p);
  unlink(tmp);
  if (th_cur_failed) fprintf(stderr, "real_tape: FAIL\n");
  return th_cur_failed;
}

int main(int argc, char **argv)
{
  snprintf(tmp, sizeof(tmp), "/tmp/test_follow.%d.tape", (int)getpid());
  if (argc > 1) return real_tape(argv[1]);
  TEST(test_chunks);
  TEST(test_fed);
  TEST(test_cut);
  TEST(test_truncated_under);
  TEST(test_limited_space);
  TEST(test_errors);
  unlink(tmp);
  return th_summary();
}
