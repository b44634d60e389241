/* heaptape -- heaptape-replay: replays an operations file against one driver
** in a process of its own, measuring time, RSS, mapped memory and failures. */
#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "heaptape_driver.h"
#include "../opfile.h"
#include "../../analyze/ops.h"
#include "../../analyze/locks.h"

/*
** usage: heaptape-replay OPFILE DRIVER[:ARGS] RESULT SERIES TOUCH INTERVAL
**                        [KILLPERCENT ROUNDS SEED]
** TOUCH is page|all|none; INTERVAL the ops between samples (>= 1).
** With KILLPERCENT, after each pass over the ops KILLPERCENT% of the live
** blocks (rounded down), chosen by a splitmix64 stream from SEED, are freed
** and the ops replayed again with new blocks, ROUNDS times (runner_kill).
** Writes RESULT as "key value" lines and SERIES as one line per sample:
**   index used rss mapped alloc_in_use alloc_mapped op_ns
** Exit status: 0 replayed (failures are counted, not fatal), 3 the driver
** could not be loaded or initialised, 4 bad operations file, 2 bad usage.
** A driver whose table names a library to preload makes the runner re-exec
** itself once with LD_PRELOAD set, so the whole process uses that allocator.
*/

#define PAGE 4096
#define PRELOADED_ENV "HEAPTAPE_REPLAY_PRELOADED"

typedef struct Slot {
  void *p;                   /* driver's pointer (NULL: not live or failed) */
  uint64_t size;             /* requested bytes */
  uint64_t live;             /* live on the tape (its New came, its Free not yet) */
  uint64_t locked;           /* locks of the locking model held (K records) */
} Slot;

/* A block kept alive from an earlier pass (killpercent rounds). */
typedef struct Kept {
  void *p;                   /* driver's pointer (NULL: its allocation failed) */
  uint64_t size;             /* requested bytes */
  uint64_t handle;           /* handle it had in its pass (its stamp) */
  uint64_t locked;           /* locks of the locking model it still holds */
} Kept;

typedef struct Runner {
  const heaptape_driver *d;  /* driver table */
  void *st;                  /* driver state */
  int touch;                 /* 0 none, 1 page, 2 all */
  int statm;                 /* fd of /proc/self/statm */
  long pagesz;               /* bytes per page */
  int64_t base_rss, base_size; /* baseline anon resident and virtual bytes */
  uint64_t fails;            /* allocations that failed */
  uint64_t corrupt;          /* blocks whose stamp or zeroing was wrong */
  uint64_t ns_total;         /* time inside the driver */
  uint64_t ns_max;           /* slowest single call */
  uint64_t ns_by[4];         /* by op: malloc, free, realloc, aligned+calloc */
  uint64_t n_by[4];          /* calls by op */
  uint64_t oom_calls;        /* oom hook invocations */
  uint64_t kills;            /* blocks freed between passes (killpercent) */
  uint64_t timer_ns;         /* cost of one pair of clock reads (subtracted) */
  uint64_t n_lock, ns_lock;  /* lock()/unlock() calls of K and U records, their time */
} Runner;

/* Monotonic nanoseconds. */
static uint64_t runner_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Virtual size and anonymous resident bytes from /proc/self/statm. */
static void runner_statm(Runner *R, int64_t *size, int64_t *rss)
{
  char buf[128];
  ssize_t n = pread(R->statm, buf, sizeof(buf) - 1, 0);
  long long sz = 0, res = 0, sh = 0;
  if (n > 0) { buf[n] = 0; sscanf(buf, "%lld %lld %lld", &sz, &res, &sh); }
  *size = sz * R->pagesz;
  *rss = (res - sh) * R->pagesz;
}

/* A "kB" line of /proc/self/status in bytes (0 if absent). */
static int64_t runner_status(const char *key)
{
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  int64_t v = 0;
  size_t kl = strlen(key);
  while (f && fgets(line, sizeof(line), f))
    if (!strncmp(line, key, kl) && line[kl] == ':') { v = atoll(line + kl + 1) * 1024; break; }
  if (f) fclose(f);
  return v;
}

/* The smallest cost of two back-to-back clock reads, to subtract per call. */
static uint64_t runner_timer_cost(void)
{
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 2000; i++) {
    uint64_t a = runner_now(), b = runner_now();
    if (b - a < best) best = b - a;
  }
  return best;
}

/* Map the operations file read-only and check its header. */
static const HtOpFileHead *runner_map(const char *path, size_t *len)
{
  int fd = open(path, O_RDONLY);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) || (size_t)sb.st_size < sizeof(HtOpFileHead)) {
    if (fd >= 0) close(fd);
    return NULL;
  }
  void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return NULL;
  const HtOpFileHead *h = p;
  if (memcmp(h->magic, HT_OPFILE_MAGIC, 8) ||
      h->nrecs < h->nops || (size_t)sb.st_size < sizeof(*h) + h->nrecs * sizeof(HtOpRec))
    return NULL;
  *len = (size_t)sb.st_size;
  return h;
}

/* Anonymous zeroed memory outside any allocator, touched now so that it
** belongs to the baseline. */
static void *runner_anon(size_t len)
{
  void *p = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  memset(p, 0, len);
  return p;
}

/* -- Operations ------------------------------------------------------------ */

/* Address of a block (locking it for handle-based drivers). */
static unsigned char *runner_lock(Runner *R, void *p)
{
  return R->d->lock ? R->d->lock(R->st, p) : p;
}

/* Release the address of a block. */
static void runner_unlock(Runner *R, void *p)
{
  if (R->d->unlock) R->d->unlock(R->st, p);
}

/* First touch of bytes [from, size) of a new block, and its handle stamp;
** zeroed blocks are checked to be zero where touched. */
static void runner_touch(Runner *R, void *h, uint64_t from, uint64_t size, uint64_t handle,
                         int zeroed)
{
  if (!size || !h) return;
  unsigned char *p = runner_lock(R, h);
  if (!p) { R->corrupt++; return; }
  if (R->touch == 2) {
    for (uint64_t i = from; i < size; i++) {
      if (zeroed && p[i]) { R->corrupt++; zeroed = 0; }
      p[i] = (unsigned char)(i * 31 + 7);
    }
  } else if (R->touch == 1) {
    for (uint64_t i = from; i < size; i += PAGE - ((uintptr_t)(p + i) & (PAGE - 1))) {
      if (zeroed && p[i]) { R->corrupt++; zeroed = 0; }
      p[i] = 0xa5;
    }
  }
  if (from == 0 && size >= 8) memcpy(p, &handle, 8);
  runner_unlock(R, h);
}

/* Whether a block still carries its handle stamp -- and, with --touch all,
** every byte the runner wrote (moving allocators must keep them all). */
static void runner_check(Runner *R, void *h, uint64_t size, uint64_t handle)
{
  if (!h || (size < 8 && R->touch != 2)) return;
  unsigned char *p = runner_lock(R, h);
  uint64_t v = 0;
  if (p && size >= 8) memcpy(&v, p, 8);
  int bad = !p || (size >= 8 && v != handle);
  if (p && R->touch == 2)
    for (uint64_t i = size >= 8 ? 8 : 0; i < size && !bad; i++)
      bad = p[i] != (unsigned char)(i * 31 + 7);
  if (bad) R->corrupt++;
  runner_unlock(R, h);
}

/* A K or U record: pin or release a block for a handle-based driver (the
** others ignore them). A block is never left locked across its free. */
static void runner_lockop(Runner *R, const HtOpRec *o, Slot *slot, uint64_t nh)
{
  if (!R->d->lock || o->handle == 0 || o->handle > nh) return;
  Slot *s = &slot[o->handle];
  if (!s->p || (o->op == HT_OP_UNLOCK && !s->locked)) return;
  uint64_t t0 = runner_now();
  if (o->op == HT_OP_LOCK) {
    if (!R->d->lock(R->st, s->p)) R->corrupt++;
    s->locked++;
  } else {
    R->d->unlock(R->st, s->p);
    s->locked--;
  }
  uint64_t ns = runner_now() - t0;
  ns = ns > R->timer_ns ? ns - R->timer_ns : 0;
  R->ns_lock += ns;
  R->ns_total += ns;
  R->n_lock++;
}

/* Release the model's locks of a block before it is freed or reallocated. */
static void runner_unpin(Runner *R, void *p, uint64_t *locked)
{
  for (; *locked; (*locked)--) runner_unlock(R, p);
}

/* Account one driver call of op class c that took ns. */
static void runner_time(Runner *R, int c, uint64_t ns)
{
  ns = ns > R->timer_ns ? ns - R->timer_ns : 0;
  R->ns_total += ns;
  R->ns_by[c] += ns;
  R->n_by[c]++;
  if (ns > R->ns_max) R->ns_max = ns;
}

/* One allocation through the driver, with the out-of-memory retry. */
static void *runner_alloc(Runner *R, const HtOpRec *o, Slot *old, uint64_t *ns)
{
  const heaptape_driver *d = R->d;
  void *p = NULL;
  for (int attempt = 0; attempt < 2; attempt++) {
    uint64_t t0 = runner_now();
    if (old) p = d->realloc(R->st, old->p, old->size, o->size, o->handle);
    else if ((o->flags & HT_OPF_ALIGN) && d->aligned)
      p = d->aligned(R->st, o->aux, o->size, o->handle);
    else if ((o->flags & HT_OPF_CALLOC) && d->calloc) p = d->calloc(R->st, o->size, o->handle);
    else p = d->malloc(R->st, o->size, o->handle);
    *ns += runner_now() - t0;
    if (p || !d->oom) break;
    R->oom_calls++;
    t0 = runner_now();
    int retry = d->oom(R->st, o->size);
    *ns += runner_now() - t0;
    if (!retry) break;
  }
  return p;
}

/* Replay op o. */
static void runner_op(Runner *R, const HtOpRec *o, Slot *slot, uint64_t nh, uint64_t *used)
{
  if (o->handle == 0 || o->handle > nh) { R->corrupt++; return; }
  Slot *s = &slot[o->handle];
  uint64_t ns = 0;
  s->live = o->op != HT_OP_FREE;
  if (o->op == HT_OP_FREE) {
    *used -= s->size;
    if (o->flags & HT_OPF_REALLOC) return;  /* the New with R completes it */
    if (!s->p) return;                      /* its allocation had failed */
    runner_unpin(R, s->p, &s->locked);
    runner_check(R, s->p, s->size, o->handle);
    uint64_t t0 = runner_now();
    R->d->free(R->st, s->p, s->size, o->handle);
    runner_time(R, 1, runner_now() - t0);
    s->p = NULL;
    return;
  }
  *used += o->size;
  s->size = o->size;
  s->locked = 0;
  Slot *old = NULL;
  if ((o->flags & HT_OPF_REALLOC) && o->aux && o->aux <= nh && slot[o->aux].p)
    old = &slot[o->aux];
  if (old) runner_unpin(R, old->p, &old->locked);
  if (old && R->d->realloc) {
    runner_check(R, old->p, old->size, o->aux);
    void *p = runner_alloc(R, o, old, &ns);
    runner_time(R, 2, ns);
    if (p) {
      uint64_t keep = old->size < o->size ? old->size : o->size;
      old->p = NULL;
      s->p = p;
      runner_touch(R, p, keep, o->size, o->handle, 0);
      if (keep >= 8) {  /* the contents moved: restamp with the new handle */
        unsigned char *q = runner_lock(R, p);
        if (q) memcpy(q, &o->handle, 8);
        runner_unlock(R, p);
      } else if (keep) runner_touch(R, p, 0, o->size, o->handle, 0);
      return;
    }
    /* A failed realloc: the tape says the old block is gone, so free it. */
    R->fails++;
    uint64_t t0 = runner_now();
    R->d->free(R->st, old->p, old->size, o->aux);
    runner_time(R, 1, runner_now() - t0);
    old->p = NULL;
    s->p = NULL;
    return;
  }
  if (old) {  /* a driver without realloc: allocate, copy, free */
    void *p = runner_alloc(R, o, NULL, &ns);
    if (p) {
      unsigned char *dst = runner_lock(R, p), *src = runner_lock(R, old->p);
      if (dst && src) memcpy(dst, src, old->size < o->size ? old->size : o->size);
      runner_unlock(R, old->p);
      runner_unlock(R, p);
    }
    uint64_t t0 = runner_now();
    R->d->free(R->st, old->p, old->size, o->aux);
    ns += runner_now() - t0;
    old->p = NULL;
    runner_time(R, 2, ns);
    s->p = p;
    if (!p) { R->fails++; return; }
    runner_touch(R, p, 0, o->size, o->handle, 0);
    return;
  }
  void *p = runner_alloc(R, o, NULL, &ns);
  runner_time(R, (o->flags & (HT_OPF_ALIGN | HT_OPF_CALLOC)) ? 3 : 0, ns);
  s->p = p;
  if (!p) { R->fails++; return; }
  if ((o->flags & HT_OPF_CALLOC) && !R->d->calloc) {
    unsigned char *q = runner_lock(R, p);
    if (q) memset(q, 0, o->size);
    runner_unlock(R, p);
  }
  if ((o->flags & HT_OPF_ALIGN) && ((uintptr_t)p & (o->aux - 1)) && !R->d->lock) R->corrupt++;
  runner_touch(R, p, 0, o->size, o->handle, (o->flags & HT_OPF_CALLOC) != 0);
}

/* -- Killpercent rounds ------------------------------------------------------ */

/* The next number of the splitmix64 stream at *x. */
static uint64_t runner_rand(uint64_t *x)
{
  uint64_t z = (*x += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

/* The killpercent rounds' state. */
typedef struct Rounds {
  unsigned pct;              /* share of the live blocks freed after a pass */
  uint64_t rng;              /* splitmix64 state, from the seed */
  Kept *kept;                /* blocks kept alive from earlier passes */
  uint64_t nkept, cap;       /* their count, and the array's */
} Rounds;

/* Shift the baseline by what the runner's own memory changes between begin
** and end, so that its arrays never count as the allocator's. */
static void runner_rebase_begin(Runner *R, int64_t *size, int64_t *rss)
{
  runner_statm(R, size, rss);
}

static void runner_rebase_end(Runner *R, int64_t size0, int64_t rss0)
{
  int64_t size, rss;
  runner_statm(R, &size, &rss);
  R->base_size += size - size0;
  R->base_rss += rss - rss0;
}

/* End of a pass: free pct% (rounded down) of the live blocks -- those kept
** from earlier passes and this pass's -- chosen at random, keep the rest in
** a new *kept array and clear the slots for the next pass. The candidates
** are listed in a fixed order (kept, then by handle), so every driver frees
** the same blocks. Returns the blocks freed, or UINT64_MAX when out of memory. */
static uint64_t runner_kill(Runner *R, Slot *slot, uint64_t nh, Rounds *K, uint64_t *used)
{
  int64_t size0, rss0;
  uint64_t live = K->nkept;
  for (uint64_t k = 1; k <= nh; k++) live += slot[k].live != 0;
  runner_rebase_begin(R, &size0, &rss0);
  Kept *c = runner_anon(live * sizeof(Kept));
  runner_rebase_end(R, size0, rss0);
  if (!c) return UINT64_MAX;
  uint64_t n = 0;
  for (uint64_t k = 0; k < K->nkept; k++) c[n++] = K->kept[k];
  for (uint64_t k = 1; k <= nh; k++)
    if (slot[k].live)
      c[n++] = (Kept){.p = slot[k].p, .size = slot[k].size, .handle = k, .locked = slot[k].locked};
  uint64_t nkill = live * K->pct / 100;
  for (uint64_t j = 0; j < nkill; j++) {  /* partial Fisher-Yates: victims first */
    uint64_t r = j + runner_rand(&K->rng) % (live - j);
    Kept t = c[j]; c[j] = c[r]; c[r] = t;
    *used -= c[j].size;
    if (!c[j].p) continue;  /* its allocation had failed */
    runner_unpin(R, c[j].p, &c[j].locked);
    runner_check(R, c[j].p, c[j].size, c[j].handle);
    uint64_t t0 = runner_now();
    R->d->free(R->st, c[j].p, c[j].size, c[j].handle);
    runner_time(R, 1, runner_now() - t0);
  }
  memmove(c, c + nkill, (live - nkill) * sizeof(Kept));
  runner_rebase_begin(R, &size0, &rss0);
  if (K->kept) munmap(K->kept, K->cap ? K->cap * sizeof(Kept) : 1);
  runner_rebase_end(R, size0, rss0);
  K->kept = c;
  K->cap = live;
  K->nkept = live - nkill;
  memset(slot, 0, (nh + 1) * sizeof(Slot));
  return nkill;
}

/* -- Main ------------------------------------------------------------------- */

/* Load the driver (re-executing with its preload library if it names one). */
static const heaptape_driver *runner_driver(char **argv, char *spec, const char **args)
{
  char *colon = strchr(spec, ':');
  *args = "";
  if (colon) { *colon = 0; *args = colon + 1; }
  void *h = dlopen(spec, RTLD_NOW | RTLD_LOCAL);
  if (!h) { fprintf(stderr, "heaptape-replay: %s\n", dlerror()); return NULL; }
  const heaptape_driver *(*get)(void) =
    (const heaptape_driver *(*)(void))dlsym(h, "heaptape_driver_get");
  const heaptape_driver *d = get ? get() : NULL;
  if (!d || d->version < 1 || d->version > HEAPTAPE_DRIVER_VERSION || !d->malloc || !d->free) {
    fprintf(stderr, "heaptape-replay: %s: not a heaptape driver (versions 1 to %d)\n", spec,
            HEAPTAPE_DRIVER_VERSION);
    return NULL;
  }
  if (d->preload && d->preload[0] && !getenv(PRELOADED_ENV)) {
    if (colon) *colon = ':';
    setenv("LD_PRELOAD", d->preload, 1);
    setenv(PRELOADED_ENV, "1", 1);
    execv("/proc/self/exe", argv);
    fprintf(stderr, "heaptape-replay: cannot re-execute with %s\n", d->preload);
    return NULL;
  }
  return d;
}

int main(int argc, char **argv)
{
  if (argc != 7 && argc != 10) {
    fprintf(stderr, "usage: heaptape-replay OPFILE DRIVER[:ARGS] RESULT SERIES page|all|none INTERVAL"
            " [KILLPERCENT ROUNDS SEED]\n");
    return 2;
  }
  Rounds K = {0};
  uint64_t passes = 1;
  if (argc == 10) {
    K.pct = (unsigned)strtoul(argv[7], NULL, 10);
    passes = strtoull(argv[8], NULL, 10) + 1;
    K.rng = strtoull(argv[9], NULL, 10);
    if (K.pct > 100 || passes < 2) { fprintf(stderr, "heaptape-replay: bad killpercent or rounds\n"); return 2; }
  }
  Runner R = {.touch = !strcmp(argv[5], "all") ? 2 : !strcmp(argv[5], "none") ? 0 : 1,
              .pagesz = sysconf(_SC_PAGESIZE)};
  uint64_t interval = strtoull(argv[6], NULL, 10);
  if (!interval) interval = 1;
  char spec[4096];
  snprintf(spec, sizeof(spec), "%s", argv[2]);
  const char *args;
  R.d = runner_driver(argv, spec, &args);
  if (!R.d) return 3;
  unsetenv("LD_PRELOAD");
  size_t maplen;
  const HtOpFileHead *h = runner_map(argv[1], &maplen);
  if (!h) { fprintf(stderr, "heaptape-replay: %s: bad operations file\n", argv[1]); return 4; }
  const HtOpRec *ops = (const HtOpRec *)(h + 1);
  uint64_t nrecs = h->nrecs;
  uint64_t nh = h->nhandles, nsamp = passes * (h->nops / interval + 3);
  Slot *slot = runner_anon((nh + 1) * sizeof(Slot));
  HtReplaySample *samp = runner_anon(nsamp * sizeof(HtReplaySample));
  FILE *res = fopen(argv[3], "w"), *ser = fopen(argv[4], "w");
  R.statm = open("/proc/self/statm", O_RDONLY);
  if (!slot || !samp || !res || !ser || R.statm < 0) {
    fprintf(stderr, "heaptape-replay: cannot set up (out of memory or files)\n");
    return 4;
  }
  if (R.d->init && R.d->init(&R.st, args)) {
    fprintf(stderr, "heaptape-replay: %s: driver init failed\n", R.d->name);
    return 3;
  }
  runner_statm(&R, &R.base_size, &R.base_rss);
  R.timer_ns = runner_timer_cost();

  uint64_t used = 0, ns_mark = 0, n = 0, next = interval, max_used = h->peak;
  int64_t peak_rss = 0, peak_map = 0, held_at_peak = -1;
  double frag_sum = 0;
  uint64_t frag_n = 0, nkills = 0, kills[64];  /* freed per round (the first 64) */
  uint64_t t_start = runner_now();
  for (uint64_t pass = 0; pass < passes; pass++) {
    if (pass) {
      uint64_t k = runner_kill(&R, slot, nh, &K, &used);
      if (k == UINT64_MAX) { fprintf(stderr, "heaptape-replay: out of memory\n"); return 4; }
      if (nkills < 64) kills[nkills] = k;
      nkills++;
      R.kills += k;
    }
    for (uint64_t ri = 0, i = 0; ri < nrecs; ri++) {
      if (ops[ri].op == HT_OP_LOCK || ops[ri].op == HT_OP_UNLOCK) {
        runner_lockop(&R, &ops[ri], slot, nh);
        continue;
      }
      if (i >= h->nops) break;
      runner_op(&R, &ops[ri], slot, nh, &used);
      uint64_t g = pass * h->nops + i++;  /* op index over all passes */
      int at_peak = !pass && i - 1 == h->peak_index && h->peak;
      if (pass && used > max_used) {  /* a later pass outgrew the tape's peak */
        int64_t size, rss;
        runner_statm(&R, &size, &rss);
        max_used = used;
        held_at_peak = rss - R.base_rss;
      }
      if (g + 1 != next && !at_peak && i != h->nops) continue;
      if (g + 1 == next) next += interval;
      HtReplaySample *s = &samp[n < nsamp ? n : nsamp - 1];
      int64_t size, rss;
      runner_statm(&R, &size, &rss);
      heaptape_driver_stats ds = {0};
      if (R.d->stats) R.d->stats(R.st, &ds);
      *s = (HtReplaySample){.index = g, .used = used, .rss = rss - R.base_rss,
                    .mapped = size - R.base_size, .a_in_use = ds.in_use,
                    .a_mapped = ds.mapped, .op_ns = R.ns_total - ns_mark};
      ns_mark = R.ns_total;
      if (s->rss > peak_rss) peak_rss = s->rss;
      if (s->mapped > peak_map) peak_map = s->mapped;
      if ((int64_t)s->a_mapped > peak_map) peak_map = (int64_t)s->a_mapped;
      if (at_peak) held_at_peak = s->rss;
      if (s->rss > 0 && used) {
        frag_sum += (double)(s->rss > (int64_t)used ? s->rss - (int64_t)used : 0) / (double)s->rss;
        frag_n++;
      }
      if (n < nsamp) n++;
    }
  }
  uint64_t wall = runner_now() - t_start;
  int64_t vmpeak = runner_status("VmPeak") - R.base_size;
  if (vmpeak > peak_map) peak_map = vmpeak;
  uint64_t live_blocks = 0;
  for (uint64_t k = 0; k < K.nkept; k++) live_blocks += K.kept[k].p != NULL;
  for (uint64_t k = 1; k <= nh; k++) live_blocks += slot[k].p != NULL;
  /* Every block live at the end still holds what the runner wrote into it
  ** (a moving allocator may have moved it any number of times). */
  for (uint64_t k = 0; k < K.nkept; k++) runner_check(&R, K.kept[k].p, K.kept[k].size, K.kept[k].handle);
  for (uint64_t k = 1; k <= nh; k++) runner_check(&R, slot[k].p, slot[k].size, k);
  heaptape_driver_stats fin = {0};
  if (R.d->stats && R.d->version >= 2) R.d->stats(R.st, &fin);
  if (R.d->destroy) R.d->destroy(R.st);

  fprintf(res, "name %s\n", R.d->name ? R.d->name : "?");
  fprintf(res, "ops %" PRIu64 "\nfails %" PRIu64 "\ncorrupt %" PRIu64 "\n", h->nops * passes + R.kills, R.fails,
          R.corrupt);
  fprintf(res, "oom_calls %" PRIu64 "\nlive_blocks %" PRIu64 "\n", R.oom_calls, live_blocks);
  fprintf(res, "live_peak %" PRIu64 "\npeak_rss %" PRId64 "\npeak_mapped %" PRId64 "\n",
          max_used, peak_rss, peak_map);
  for (uint64_t k = 0; k < nkills && k < 64; k++) fprintf(res, "round_kills %" PRIu64 "\n", kills[k]);
  fprintf(res, "held_at_peak %" PRId64 "\nfrag_mean %.6f\n", held_at_peak,
          frag_n ? frag_sum / (double)frag_n : 0.0);
  fprintf(res, "ns_total %" PRIu64 "\nns_max %" PRIu64 "\nwall_ns %" PRIu64 "\n", R.ns_total,
          R.ns_max, wall);
  fprintf(res, "n_lock %" PRIu64 "\nns_lock %" PRIu64 "\ncompactions %" PRIu64 "\nmoved %" PRIu64
          "\n", R.n_lock, R.ns_lock, fin.compactions, fin.moved);
  static const char *const cls[] = {"malloc", "free", "realloc", "other"};
  for (int c = 0; c < 4; c++)
    fprintf(res, "n_%s %" PRIu64 "\nns_%s %" PRIu64 "\n", cls[c], R.n_by[c], cls[c], R.ns_by[c]);
  for (uint64_t k = 0; k < n; k++)
    fprintf(ser, "%" PRIu64 " %" PRIu64 " %" PRId64 " %" PRId64 " %" PRIu64 " %" PRIu64
            " %" PRIu64 "\n", samp[k].index, samp[k].used, samp[k].rss, samp[k].mapped,
            samp[k].a_in_use, samp[k].a_mapped, samp[k].op_ns);
  int bad = fclose(res) | fclose(ser);
  return bad ? 4 : 0;
}
