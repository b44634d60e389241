/* heaptape tests -- a long-running program to attach to (attach.sh): it
** allocates in a loop with every allocator function and counts its own
** calls. SIGUSR1 opens a counting window (marked on the heap by a block of
** 999001 bytes) and, sent again, closes it (999002 bytes) and prints the
** window's count on stderr; SIGUSR2 ends the loop; then a fixed final phase
** prints a checksum on stdout, the same whether attached or not.
** Usage: attach_loop [THREADS]  (THREADS > 1: that many threads allocate,
** each freeing blocks the next one made, until SIGUSR2). ATTACH_LOOP_BUSY=1:
** no pauses, so a window's count is the allocation rate (bench/). */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RING 64
static volatile sig_atomic_t toggles, quit;
static _Atomic uint64_t total;           /* allocation calls, all threads */
static int busy;                         /* ATTACH_LOOP_BUSY=1: never sleep (bench/) */

static void on_usr1(int s) { (void)s; toggles++; }
static void on_usr2(int s) { (void)s; quit = 1; }

/* One allocation call of kind k (0..8) of about n bytes; 1 call counted. */
static void *one(unsigned k, size_t n, void *old)
{
  void *p = NULL;
  switch (k % 9) {
  case 0: p = malloc(n); break;
  case 1: p = calloc(1, n); break;
  case 2: p = realloc(NULL, n); break;
  case 3: if (posix_memalign(&p, 64, n)) p = NULL; break;
  case 4: p = aligned_alloc(32, (n + 31) & ~(size_t)31); break;
  case 5: p = memalign(128, n); break;
  case 6: p = valloc(n); break;
  case 7: p = reallocarray(NULL, n, 1); break;
  case 8: p = old ? realloc(old, n) : malloc(n); return p;  /* grows the old block */
  }
  return p;
}

/* The loop of one thread: keep RING blocks, replace one per step. */
static void *work(void *arg)
{
  uintptr_t id = (uintptr_t)arg;
  void *ring[RING] = { 0 };
  uint64_t i = 0, counted = 0;
  int window = 0;
  sig_atomic_t seen = 0;
  while (!quit) {
    if (id == 0 && toggles != seen) {         /* the window opens or closes */
      seen = toggles;
      window = !window;
      free(malloc(window ? 999001 : 999002));
      if (!window) fprintf(stderr, "window %llu\n", (unsigned long long)counted);
      counted = 0;
    }
    unsigned slot = (unsigned)(i % RING), k = (unsigned)(i * 7 + id) % 9;
    void *p;
    if (k == 8) { p = one(k, 32 + i % 512, ring[slot]); ring[slot] = p; }
    else { free(ring[slot]); ring[slot] = one(k, 16 + (i * 37) % 1024, NULL); }
    counted += window;
    atomic_fetch_add_explicit(&total, 1, memory_order_relaxed);
    if (++i % 64 == 0 && id == 0 && !busy) usleep(200);
    else if (i % 4096 == 0 && !busy) usleep(500);  /* the other threads: heavy, bounded */
  }
  for (int j = 0; j < RING; j++) free(ring[j]);
  return NULL;
}

int main(int argc, char **argv)
{
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  busy = getenv("ATTACH_LOOP_BUSY") && atoi(getenv("ATTACH_LOOP_BUSY"));
  signal(SIGUSR1, on_usr1);
  signal(SIGUSR2, on_usr2);
  fprintf(stderr, "ready %d\n", (int)getpid());
  if (threads > 1) {
    pthread_t t[64];
    for (int i = 1; i < threads && i < 64; i++) pthread_create(&t[i], NULL, work, (void *)(uintptr_t)i);
    work(0);
    for (int i = 1; i < threads && i < 64; i++) pthread_join(t[i], NULL);
  } else {
    work(0);
  }
  /* The final phase: the same output every run. */
  uint64_t sum = 0;
  for (int r = 0; r < 2000; r++) {
    char *s = malloc(100 + r);
    for (int j = 0; j < 100 + r; j++) s[j] = (char)(r * j);
    for (int j = 0; j < 100 + r; j++) sum = sum * 31 + (unsigned char)s[j];
    free(s);
  }
  printf("final checksum %llu\n", (unsigned long long)sum);
  return 0;
}
