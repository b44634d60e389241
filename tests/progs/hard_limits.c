/* heaptape tests -- tight limits: 150 MiB of touched heap in 1 MiB chunks (run under
** ulimit -v), and a tiny program that reports its own address space and resident memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Opaque allocator calls: the compiler must not elide malloc/free pairs. */
static void *(*volatile do_malloc)(size_t) = malloc;
static void (*volatile do_free)(void *) = free;

/* malloc and touch n chunks of 1 MiB; report how many succeeded. */
static int big_mode(int n)
{
  char **p = calloc((size_t)n, sizeof(*p));
  int got = 0;
  for (; p && got < n; got++) {
    if (!(p[got] = do_malloc(1 << 20))) break;
    memset(p[got], got & 0xff, 1 << 20);
  }
  printf("%d of %d MiB allocated and touched\n", got, n);
  for (int i = 0; i < got; i++) do_free(p[i]);
  free(p);
  return got == n ? 0 : 1;
}

/* A few small allocations, then VmPeak, VmSize, VmHWM and VmRSS in kB. */
static int status_mode(void)
{
  void *keep[100];
  for (int i = 0; i < 100; i++) keep[i] = do_malloc(32 + (size_t)i * 8);
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) { perror("/proc/self/status"); return 1; }
  char line[256];
  while (fgets(line, sizeof(line), f))
    if (!strncmp(line, "VmPeak:", 7) || !strncmp(line, "VmSize:", 7) ||
        !strncmp(line, "VmHWM:", 6) || !strncmp(line, "VmRSS:", 6)) {
      char name[16];
      long kb;
      if (sscanf(line, "%15[^:]: %ld", name, &kb) == 2) printf("%s %ld\n", name, kb);
    }
  fclose(f);
  for (int i = 0; i < 100; i++) do_free(keep[i]);
  return 0;
}

int main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "big")) return big_mode(argc > 2 ? atoi(argv[2]) : 150);
  if (!strcmp(mode, "status")) return status_mode();
  fprintf(stderr, "usage: hard_limits big [MIB] | status\n");
  return 2;
}
