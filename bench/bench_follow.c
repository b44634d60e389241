/* heaptape -- what the live view's refresh costs as a tape grows: a finished
** tape is appended to a scratch file one slice at a time (a slice is the
** tape's bytes per second of recording, so each stands for one refresh of a
** running program), and each slice is taken in by the follower
** (ht_follow_poll, what a refresh does) and, for comparison, by a fresh pass
** over the whole file so far (what `record --pprof-every` does per snapshot).
**
** usage: bench_follow TAPE [SCRATCH]
** Prints one markdown row per tenth of the tape, then the medians of the
** first and last thirds. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyze/follow.h"

/* CPU seconds of this process. */
static double cpu_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Order of doubles. */
static int dcmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of v[lo..hi). */
static double median(const double *v, size_t lo, size_t hi)
{
  size_t n = hi - lo;
  double *c = malloc(n * sizeof(double));
  memcpy(c, v + lo, n * sizeof(double));
  qsort(c, n, sizeof(double), dcmp);
  double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
  free(c);
  return m;
}

int main(int argc, char **argv)
{
  if (argc < 2) { fprintf(stderr, "usage: bench_follow TAPE [SCRATCH]\n"); return 2; }
  const char *scratch = argc > 2 ? argv[2] : "/tmp/bench_follow.tape";
  FILE *in = fopen(argv[1], "rb");
  if (!in) { perror(argv[1]); return 1; }
  struct stat sb;
  fstat(fileno(in), &sb);
  size_t n = (size_t)sb.st_size;
  uint8_t *p = malloc(n);
  if (!p || fread(p, 1, n, in) != n) { fprintf(stderr, "cannot read %s\n", argv[1]); return 1; }
  fclose(in);
  HtReader *r;
  char err[256];
  if (ht_reader_open_mem(&r, p, n, err, sizeof(err))) { fprintf(stderr, "%s\n", err); return 1; }
  double secs = (double)ht_reader_stats(r)->end_ns / 1e9;
  ht_reader_close(r);
  size_t slices = secs < 2 ? 2 : (size_t)(secs + 0.5);
  size_t slice = n / slices + 1;

  int fd = open(scratch, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  HtFollow f;
  ht_follow_init(&f, scratch, 0);
  double *inc = calloc(slices + 1, sizeof(double)), *full = calloc(slices + 1, sizeof(double));
  size_t k = 0, off = 0;
  printf("tape %s: %.1f MB, %.1f s recorded, %zu slices of %.2f MB\n\n", argv[1],
         (double)n / 1e6, secs, slices, (double)slice / 1e6);
  printf("| slice | tape so far | follower poll (CPU ms) | whole re-read (CPU ms) |\n");
  printf("|---:|---:|---:|---:|\n");
  while (off < n) {
    size_t c = n - off < slice ? n - off : slice;
    if (write(fd, p + off, c) != (ssize_t)c) { perror("write"); return 1; }
    off += c;
    double t0 = cpu_s();
    ht_follow_poll(&f, off == n);
    inc[k] = (cpu_s() - t0) * 1e3;
    HtFollow g;  /* a fresh pass over everything so far */
    ht_follow_init(&g, scratch, 0);
    t0 = cpu_s();
    ht_follow_poll(&g, off == n);
    full[k] = (cpu_s() - t0) * 1e3;
    ht_follow_free(&g);
    if (k % (slices / 10 ? slices / 10 : 1) == 0 || off == n)
      printf("| %zu | %.1f MB | %.1f | %.1f |\n", k + 1, (double)off / 1e6, inc[k], full[k]);
    k++;
  }
  close(fd);
  size_t third = k / 3 ? k / 3 : 1;
  printf("\nmedian follower poll: first third %.1f ms, last third %.1f ms; "
         "whole re-read: first third %.1f ms, last third %.1f ms "
         "(last slice, with the trailer, left out)\n",
         median(inc, 0, third), median(inc, k - 1 - third, k - 1),
         median(full, 0, third), median(full, k - 1 - third, k - 1));
  printf("follower: %llu sites, %u moments, peak %.1f MB\n",
         (unsigned long long)ht_follow_nsite(&f), f.nmom, (double)f.m.peak / 1e6);
  ht_follow_free(&f);
  unlink(scratch);
  free(p); free(inc); free(full);
  return 0;
}
