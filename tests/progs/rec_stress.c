/* heaptape tests -- 8 threads x N mixed heap operations with cross-thread
** frees (a shared mailbox) and reallocs; prints its own operation counters.
** "late" as second argument: the main thread works alone first (the
** recorder's single-thread numbering), then keeps working beside the others,
** exchanging blocks with them from their first operation. "handoff": see
** handoff() below. "threads M": M threads at once instead of 8; "keys M":
** likewise, and each thread's pthread key destructor allocates at exit. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 8
#define SLOTS 256
#define MAILBOX 64

static _Atomic(void *) mailbox[MAILBOX];   /* blocks passed between threads */
static long ops = 1000000;                  /* operations per thread */
static _Atomic long n_alloc, n_free, n_realloc, n_cross;
static pthread_barrier_t start;             /* "threads", "keys": all begin together */
static pthread_key_t key;                   /* "keys": its destructor allocates */
static int use_key;                         /* "keys" */

/* xorshift PRNG. */
static uint64_t rnd(uint64_t *s)
{
  uint64_t x = *s;
  x ^= x << 13; x ^= x >> 7; x ^= x << 17;
  return *s = x;
}

/* Key destructor at thread exit: allocates, reallocates and frees, and arms
** itself again once, so a second destructor round allocates too. */
static void key_dtor(void *v)
{
  uintptr_t round = (uintptr_t)v;
  char *p = malloc(100 + round), *q;
  if (!p) return;
  n_alloc++;
  if ((q = realloc(p, 3000))) { p = q; n_realloc++; }
  memset(p, 1, 100);
  free(p);
  n_free++;
  if (round < 2) pthread_setspecific(key, (void *)(round + 1));
}

/* One worker: mixed malloc/calloc/realloc/free/aligned, mailbox exchange. */
static void *worker(void *arg)
{
  uint64_t s = (uintptr_t)arg * 0x9e3779b97f4a7c15ULL + 1;
  void *slot[SLOTS] = { 0 };
  long a = 0, f = 0, r = 0, c = 0;
  for (long i = 0; i < ops; i++) {
    uint64_t x = rnd(&s);
    int k = (int)(x % SLOTS), op = (int)((x >> 16) % 100);
    size_t n = 1 + (size_t)((x >> 32) % 512);
    if (op < 40) {
      if (slot[k]) { free(slot[k]); f++; }
      slot[k] = (op < 35) ? malloc(n) : calloc(1, n);
      a++;
    } else if (op < 65) {
      if (slot[k]) { free(slot[k]); f++; slot[k] = NULL; }
    } else if (op < 80) {
      void *q = realloc(slot[k], n * 2);
      if (q) { slot[k] = q; r++; }
    } else if (op < 95) {
      if (slot[k]) {
        void *old = atomic_exchange(&mailbox[x % MAILBOX], slot[k]);
        slot[k] = NULL;
        if (old) { free(old); f++; c++; }
      }
    } else {
      void *q = NULL;
      if (slot[k]) { free(slot[k]); f++; }
      if (posix_memalign(&q, 64, n) == 0) a++;
      slot[k] = q;
    }
  }
  for (int k = 0; k < SLOTS; k++) if (slot[k]) { free(slot[k]); f++; }
  n_alloc += a; n_free += f; n_realloc += r; n_cross += c;
  return NULL;
}

/* "handoff": the main thread, still alone, allocates 64 blocks; a second
** thread frees them; then the main thread allocates 64 more of the same size,
** which glibc hands back from the main arena: the same addresses, freed by
** the other thread just before. */
static _Atomic int handoff_done;
static void *handoff_freer(void *arg)
{
  void **v = arg;
  for (int i = 0; i < 64; i++) free(v[i]);
  atomic_store(&handoff_done, 1);
  return NULL;
}

static int handoff(void)
{
  void *v[64], *w[64];
  pthread_t b;
  for (int i = 0; i < 64; i++) v[i] = malloc(4000);
  pthread_create(&b, NULL, handoff_freer, v);
  while (!atomic_load(&handoff_done)) sched_yield();
  int same = 0;
  for (int i = 0; i < 64; i++) {
    w[i] = malloc(4000);
    for (int j = 0; j < 64; j++) same += w[i] == v[j];
  }
  for (int i = 0; i < 64; i++) free(w[i]);
  pthread_join(b, NULL);
  printf("threads 2 ops 64 allocs 128 frees 128 reallocs 0 cross 64 mailbox 0 reused %d\n", same);
  return 0;
}

/* A worker started with the others: waits until every thread exists. */
static void *crowd_worker(void *arg)
{
  if (use_key) pthread_setspecific(key, (void *)1);
  pthread_barrier_wait(&start);
  return worker(arg);
}

/* "threads M" and "keys M": M workers at once, small stacks. */
static int crowd(int n)
{
  pthread_t *t = malloc((size_t)n * sizeof(*t));
  pthread_attr_t at;
  if (!t || pthread_attr_init(&at) || pthread_attr_setstacksize(&at, 256 << 10)) return 1;
  if (use_key && pthread_key_create(&key, key_dtor)) return 1;
  pthread_barrier_init(&start, NULL, (unsigned)n);
  int made = 0;
  for (long i = 0; i < n; i++)
    if (pthread_create(&t[i], &at, crowd_worker, (void *)(i + 1)) == 0) made++;
    else break;
  if (made < n) { fprintf(stderr, "rec_stress: only %d of %d threads\n", made, n); exit(1); }
  for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
  long left = 0;
  for (int i = 0; i < MAILBOX; i++) {
    void *p = atomic_exchange(&mailbox[i], NULL);
    if (p) { free(p); left++; }
  }
  printf("threads %d ops %ld allocs %ld frees %ld reallocs %ld cross %ld mailbox %ld\n",
         n, ops, (long)n_alloc, (long)(n_free + left), (long)n_realloc, (long)n_cross, left);
  free(t);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc > 2 && argv[2][0] == 'h') return handoff();
  if (argc > 1) ops = atol(argv[1]);
  if (argc > 2 && (argv[2][0] == 't' || argv[2][0] == 'k')) {
    use_key = argv[2][0] == 'k';
    return crowd(argc > 3 ? atoi(argv[3]) : THREADS);
  }
  int late = argc > 2 && argv[2][0] == 'l';
  int nt = late ? THREADS - 1 : THREADS;
  pthread_t t[THREADS];
  if (late) worker((void *)100);          /* alone: fills the mailbox */
  for (long i = 0; i < nt; i++) pthread_create(&t[i], NULL, worker, (void *)(i + 1));
  if (late) worker((void *)101);          /* beside the others */
  for (int i = 0; i < nt; i++) pthread_join(t[i], NULL);
  long left = 0;
  for (int i = 0; i < MAILBOX; i++) {
    void *p = atomic_exchange(&mailbox[i], NULL);
    if (p) { free(p); left++; }
  }
  printf("threads %d ops %ld allocs %ld frees %ld reallocs %ld cross %ld mailbox %ld\n",
         late ? nt + 1 : nt, ops, (long)n_alloc, (long)(n_free + left), (long)n_realloc,
         (long)n_cross, left);
  return 0;
}
