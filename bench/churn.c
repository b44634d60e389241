/* heaptape bench -- a synthetic churn: 2M allocations from 64 sites 8 frames
** deep, 1000 live (bench_report.sh, bench_sealed_size.sh). */
#include <stdlib.h>
#define NI __attribute__((noinline))
static void *win[1000];
NI static void *leaf(int s, size_t n) { return s & 1 ? malloc(n) : calloc(1, n); }
NI static void *l1(int s, size_t n) { return leaf(s, n); }
NI static void *l2(int s, size_t n) { return s & 2 ? l1(s, n) : leaf(s, n); }
NI static void *l3(int s, size_t n) { return s & 4 ? l2(s, n) : l1(s, n); }
NI static void *l4(int s, size_t n) { return s & 8 ? l3(s, n) : l2(s, n); }
NI static void *l5(int s, size_t n) { return s & 16 ? l4(s, n) : l3(s, n); }
NI static void *l6(int s, size_t n) { return s & 32 ? l5(s, n) : l4(s, n); }
int main(void)
{
  unsigned x = 12345;
  for (long i = 0; i < 2000000; i++) {
    x = x * 1103515245u + 12345u;
    int k = (int)(i % 1000);
    free(win[k]);
    win[k] = l6((int)(x >> 10) & 63, 16 + (x >> 20) % 2000);
  }
  return 0;
}
