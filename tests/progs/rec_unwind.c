/* heaptape -- test program for the libunwind-mode stack cache: call chains
** that reuse the same stack addresses with other callers. The block size tags the expected stack. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOFP __attribute__((noinline, optimize("omit-frame-pointer")))
#define FP __attribute__((noinline))

volatile void *sink;         /* keeps results alive, defeats tail calls */
volatile int one = 1;        /* makes P and Q differ (no identical-code folding) */

/* -- Same frame, other caller: sizes 1001 (X), 1002 (Y), 1011/1012 without rbp -- */

FP void *A(size_t n) { void *p = malloc(n); sink = p; return p; }
FP void *X(size_t n) { void *p = A(n); sink = p; return p; }
FP void *Y(size_t n) { void *p = A(n); sink = p; return p; }
NOFP void *A2(size_t n) { void *p = malloc(n); sink = p; return p; }
NOFP void *X2(size_t n) { void *p = A2(n); sink = p; return p; }
NOFP void *Y2(size_t n) { void *p = A2(n); sink = p; return p; }

/* -- Recursion of varying depth d: size 2000 + d, d + 1 frames of rec -- */

FP void *rec(int d, size_t n)
{
  void *p = d ? rec(d - 1, n) : malloc(n);
  sink = p;
  return p;
}

/* -- Paths of P and Q: size 4000 + v, P where bit k of v is set -- */

NOFP void *step(int v, int k);
NOFP void *P(int v, int k) { void *p = step(v, k + 1); sink = p; return p; }
NOFP void *Q(int v, int k) { void *p = step(v, k + one - 1 + 1); sink = p; return p; }
NOFP void *step(int v, int k)
{
  void *p = k == 6 ? malloc(4000 + (size_t)v) : (v >> k) & 1 ? P(v, k) : Q(v, k);
  sink = p;
  return p;
}

/* -- Outer frame with a variable-size alloca (rbp-based CFA): size 3000 -- */

FP void *M(int k)
{
  volatile char *pad = __builtin_alloca(16 * (size_t)k + 16);
  pad[0] = 1;
  void *p = A(3000);
  sink = p;
  return p;
}

/* -- Allocation in a signal handler: size 5000 under sig_raiser -- */

FP void sig_handler(int s) { (void)s; void *p = malloc(5000); sink = p; free(p); }
FP void sig_raiser(void) { raise(SIGUSR1); sink = 0; }

/* One round of every pattern, in an order that mixes them up. */
static void round_all(unsigned seed)
{
  unsigned r = seed;
  for (int i = 0; i < 400; i++) {
    r = r * 1103515245u + 12345u;
    free(X(1001));
    free(Y(1002));
    free(X2(1011));
    free(Y2(1012));
    free(Y(1002));
    free(X(1001));
    int d = (int)(r >> 16) % 21;
    free(rec(d, 2000 + (size_t)d));
    free(step((int)(r >> 8) & 63, 0));
    free(M((int)(r >> 20) % 9));
    if (i % 50 == 0) sig_raiser();
  }
}

/* Thread body: the same rounds with its own seed. */
static void *thread_main(void *arg)
{
  round_all((unsigned)(size_t)arg);
  return NULL;
}

int main(void)
{
  signal(SIGUSR1, sig_handler);
  round_all(1);
  pthread_t th[3];
  for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, thread_main, (void *)(size_t)(i + 2));
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  return 0;
}
