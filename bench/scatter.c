/* heaptape bench -- blocks with nothing near in time: N small blocks (default
** 4 M of 8 bytes) allocated, then freed in a random order, half of them
** allocated again and all freed (bench/seal_table.sh: the worst case of a
** live table that keeps neighbouring addresses side by side). */
#include <stdint.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 4000000;
  size_t size = argc > 2 ? strtoul(argv[2], NULL, 10) : 8;
  void **p = malloc(n * sizeof(*p));
  if (!n || !p) return 1;
  for (size_t i = 0; i < n; i++) p[i] = malloc(size);
  uint64_t x = 88172645463325252ull;  /* xorshift64: the same order every run */
  for (size_t i = n - 1; i > 0; i--) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    size_t j = x % (i + 1);
    void *t = p[i]; p[i] = p[j]; p[j] = t;
  }
  for (size_t i = 0; i < n / 2; i++) free(p[i]);
  for (size_t i = 0; i < n / 2; i++) p[i] = malloc(size);
  for (size_t i = 0; i < n; i++) free(p[i]);
  free(p);
  return 0;
}
