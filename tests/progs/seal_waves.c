/* heaptape tests -- waves of many small blocks, each wave freed before the
** next: the live set peaks at one wave (N blocks of 16 bytes) while W waves
** are allocated. A finaliser that runs out of memory for its table of live
** blocks misses frees and would see the waves pile up. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
  int waves = argc > 2 ? atoi(argv[2]) : 4;
  void **p = malloc(n * sizeof(*p));
  if (!p) return 1;
  for (int w = 0; w < waves; w++) {
    for (size_t i = 0; i < n; i++) p[i] = malloc(16);
    for (size_t i = 0; i < n; i++) free(p[i]);
  }
  free(p);
  printf("waves %d of %zu blocks\n", waves, n);
  return 0;
}
