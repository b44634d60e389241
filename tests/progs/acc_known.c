/* heaptape test program -- known heap access patterns for record --access
** (tests/integration/record_access.sh counts them in ops --access). Each
** block has a size no other allocation of the run has; volatile pointers make
** every access one load or store of the size written. Prints nothing (stdio
** would allocate a buffer of 4096 bytes, the size of block C).
**   A  72 B: 1000 stores of 4 bytes at offset 0, never read
**   B 264 B: 33 stores of 8 bytes (offsets 0..256), then 330 loads (read-only
**            after initialisation)
**   C 4096 B: 1 store and 5 loads of 8 bytes at offset 0 (bytes 0-7 only)
**   D  40 B: 1 store, 1 load of 8 bytes, freed 300 ms after its last access
**   E 136 B: thread 1 stores 4 bytes at offset 0 100 times, thread 2 loads 4
**            bytes at offset 64 100 times
**   F  24 B: 50 modifies (read-modify-write in one instruction) of 4 bytes at 4
**   G  56 B: allocated first, 1 store and 1 load of 8 bytes 300 ms later (after
**            the other frees), then freed (allocated too early)
**   H  88 B: never accessed */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static void *writer(void *arg)
{
  volatile uint32_t *e = arg;
  for (int i = 0; i < 100; i++) e[0] = (uint32_t)i;
  return NULL;
}

static void *reader(void *arg)
{
  volatile uint32_t *e = arg;
  uint32_t s = 0;
  for (int i = 0; i < 100; i++) s += e[16];
  return (void *)(uintptr_t)s;
}

int main(void)
{
  volatile uint64_t *g = malloc(56);
  void *volatile h = malloc(88);

  volatile uint32_t *a = malloc(72);
  for (int i = 0; i < 1000; i++) a[0] = (uint32_t)i;

  volatile uint64_t *b = malloc(264);
  for (int i = 0; i < 33; i++) b[i] = (uint64_t)i;
  uint64_t sum = 0;
  for (int pass = 0; pass < 10; pass++)
    for (int i = 0; i < 33; i++) sum += b[i];

  volatile uint64_t *c = malloc(4096);
  c[0] = 7;
  for (int i = 0; i < 5; i++) sum += c[0];

  volatile uint64_t *d = malloc(40);
  d[0] = 1;
  sum += d[0];

  volatile uint32_t *e = malloc(136);
  pthread_t t1, t2;
  pthread_create(&t1, NULL, writer, (void *)e);
  pthread_join(t1, NULL);
  pthread_create(&t2, NULL, reader, (void *)e);
  void *r;
  pthread_join(t2, &r);
  sum += (uintptr_t)r;

  volatile uint32_t *f = malloc(24);
  f[1] = 0;  /* 1 store */
  for (int i = 0; i < 50; i++) __asm__ volatile("addl $1, %0" : "+m"(f[1]));

  usleep(300000);  /* d: long idle before its free; g: before its first access */
  free((void *)a); free((void *)b); free((void *)c); free((void *)d);
  free((void *)e); free((void *)f);
  /* After events: the tool's clock, read at events, has moved past the sleep. */
  g[0] = 2;
  sum += g[0];
  free((void *)g); free(h);
  return sum == 0 ? 1 : 0;
}
