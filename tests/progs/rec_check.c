/* heaptape tests -- reads `heaptape dump` output on stdin and checks the order
** of heap events: no address allocated while live, no free of a freed address. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Slot { uint64_t addr; int state; } Slot; /* state 1 live, 2 freed */

static Slot *tab;                      /* open-addressing table */
static size_t mask, used;              /* slots - 1, slots in use */

/* Slot of addr (empty or matching). */
static Slot *find(uint64_t a)
{
  size_t i = (size_t)((a * 0x9e3779b97f4a7c15ULL) >> 20) & mask;
  while (tab[i].addr && tab[i].addr != a) i = (i + 1) & mask;
  return &tab[i];
}

/* Double the table. */
static void grow(void)
{
  Slot *old = tab;
  size_t n = mask + 1;
  mask = n * 2 - 1;
  tab = calloc(mask + 1, sizeof(Slot));
  for (size_t i = 0; i < n; i++) if (old[i].addr) *find(old[i].addr) = old[i];
  free(old);
}

int main(int argc, char **argv)
{
  int verbose = argc > 1 && !strcmp(argv[1], "-v");
  mask = (1u << 20) - 1;
  tab = calloc(mask + 1, sizeof(Slot));
  char line[4096];
  uint64_t allocs = 0, frees = 0, reallocs = 0, anomalies = 0, foreign = 0, seqerr = 0;
  uint64_t bytes = 0, lastseq = 0, live = 0, marks = 0, modules = 0, rss = 0, lost = 0;
  while (fgets(line, sizeof(line), stdin)) {
    unsigned long long seq, ts, addr, size;
    char type[16], kind[32];
    if (line[0] == '#' || !strncmp(line, "STACK", 5)) continue;
    if (sscanf(line, "%llu %llu %*u/%*u %15s", &seq, &ts, type) != 3) continue;
    if (seq <= lastseq) seqerr++;
    lastseq = seq;
    if (!strcmp(type, "MARK")) { marks++; continue; }
    if (!strcmp(type, "MODULE") || !strcmp(type, "UNLOAD")) { modules++; continue; }
    if (!strcmp(type, "RSS")) { rss++; continue; }
    if (!strcmp(type, "LOST")) { lost++; continue; }
    if (!strcmp(type, "ALLOC")) {
      if (sscanf(line, "%*u %*u %*u/%*u ALLOC %31s %llx %llu", kind, &addr, &size) != 3) continue;
      allocs++;
      bytes += size;
      if (strstr(kind, "realloc")) reallocs++;
      if (used * 2 > mask) grow();
      Slot *s = find(addr);
      if (!s->addr) { s->addr = addr; used++; }
      else if (s->state == 1) {
        anomalies++;
        if (verbose) fprintf(stderr, "alloc of live address: %s", line);
      }
      s->state = 1;
      live++;
    } else if (!strcmp(type, "FREE")) {
      if (sscanf(line, "%*u %*u %*u/%*u FREE %31s %llx", kind, &addr) != 2) continue;
      frees++;
      if (used * 2 > mask) grow();
      Slot *s = find(addr);
      if (!s->addr) { foreign++; s->addr = addr; s->state = 2; used++; continue; }
      if (s->state != 1) {
        anomalies++;
        if (verbose) fprintf(stderr, "free of non-live address: %s", line);
      } else live--;
      s->state = 2;
    }
  }
  printf("allocs %llu frees %llu reallocs %llu bytes %llu live %llu foreign %llu "
         "anomalies %llu seqerr %llu marks %llu modules %llu rss %llu lost %llu\n",
         (unsigned long long)allocs, (unsigned long long)frees,
         (unsigned long long)reallocs, (unsigned long long)bytes,
         (unsigned long long)live, (unsigned long long)foreign,
         (unsigned long long)anomalies, (unsigned long long)seqerr,
         (unsigned long long)marks, (unsigned long long)modules,
         (unsigned long long)rss, (unsigned long long)lost);
  return anomalies || seqerr ? 1 : 0;
}
