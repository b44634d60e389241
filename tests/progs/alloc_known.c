/* heaptape tests -- a program with known operations and lifetimes for the
** ops, lifetimes, heapmap and replay tests (tests/integration/alloc_*.sh). */
#include <stdlib.h>
#include <string.h>

void *volatile sink;  /* keeps the compiler from eliding allocations */

/* Hand p to the sink and return it. */
static void *use(void *p)
{
  sink = p;
  return p;
}

int main(void)
{
  void *keep[10], *leak[5], *a = NULL;
  for (int i = 0; i < 10; i++) keep[i] = use(malloc(1000));   /* ops 0-9 */
  for (int i = 0; i < 100; i++) free(use(malloc(16)));        /* ops 10-209 */
  void *c = use(calloc(3, 8));                                /* op 210 */
  if (posix_memalign(&a, 64, 100)) return 1;                  /* op 211 */
  use(a);
  char *r = use(malloc(10));                                  /* op 212 */
  memset(r, 1, 10);
  r = use(realloc(r, 5000));                                  /* ops 213-214 */
  free(r);                                                    /* op 215 */
  free(c);                                                    /* op 216 */
  free(a);                                                    /* op 217 */
  for (int i = 0; i < 10; i++) free(keep[i]);                 /* ops 218-227 */
  for (int i = 0; i < 5; i++) leak[i] = use(malloc(777));     /* ops 228-232 */
  return leak[4] == NULL;
}
