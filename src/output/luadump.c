/* heaptape -- a Lua universe dump printed in the memprof layout, then the
** largest objects and the objects that retain the most. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "luadump.h"

/* The memprof layout: every object with its links. */
static void dump_print_objects(FILE *f, const HtLuaDump *d)
{
  fprintf(f, "===== MEMORY SNAPSHOT\n");
  for (uint32_t i = 0; i < d->n; i++) {
    const HtDumpObj *o = &d->o[i];
    fprintf(f, "@%s 0x%" PRIx64 " holds %" PRIu64 " bytes and linked with\n", o->type, o->addr, o->size);
    if (o->mt) fprintf(f, "\tmetatable => LJ_TTAB 0x%" PRIx64 "\n", o->mt);
    else fprintf(f, "\tmetatable => NULL\n");
    if (!strcmp(o->type, "LJ_TTAB")) {
      fprintf(f, "===== ARRAY PART\n");
      for (uint32_t k = 0; k < o->nlink; k++)
        if (o->link[k].sect == 'A') fprintf(f, "\t%s\n", o->link[k].text);
      fprintf(f, "===== HASH PART\n");
      for (uint32_t k = 0; k < o->nlink; k++)
        if (o->link[k].sect == 'H') fprintf(f, "\t%s\n", o->link[k].text);
    } else {
      for (uint32_t k = 0; k < o->nlink; k++)
        if (o->link[k].sect == 'R') fprintf(f, "\t%s\n", o->link[k].text);
    }
  }
  fprintf(f, "\n");
}

/* Sort context: which figure orders the objects. */
static int dump_by_retained;
static const HtLuaDump *dump_cur;

/* Larger first, then by address. */
static int dump_cmp(const void *a, const void *b)
{
  const HtDumpObj *x = &dump_cur->o[*(const uint32_t *)a], *y = &dump_cur->o[*(const uint32_t *)b];
  uint64_t kx = dump_by_retained ? x->retained : x->size;
  uint64_t ky = dump_by_retained ? y->retained : y->size;
  if (kx != ky) return kx > ky ? -1 : 1;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The top objects by size, then by retained bytes. */
static void dump_print_tops(FILE *f, const HtLuaDump *d, unsigned top)
{
  uint32_t *v = malloc((d->n + 1) * sizeof(uint32_t));
  if (!v) return;
  uint64_t total = 0;
  for (uint32_t i = 0; i < d->n; i++) { v[i] = i; total += d->o[i].size; }
  fprintf(f, "===== SUMMARY\n%" PRIu32 " objects, %" PRIu64 " bytes (%s)\n\n", d->n, total, d->vm);
  dump_cur = d;
  for (int pass = 0; pass < 2; pass++) {
    dump_by_retained = pass;
    qsort(v, d->n, sizeof(uint32_t), dump_cmp);
    fprintf(f, pass ? "===== RETAINED (bytes kept alive by the object alone)\n"
                : "===== LARGEST OBJECTS\n");
    for (uint32_t i = 0; i < d->n && i < top; i++) {
      const HtDumpObj *o = &d->o[v[i]];
      fprintf(f, "@%s 0x%" PRIx64 " %s %" PRIu64 " bytes%s%s\n", o->type, o->addr,
             pass ? "retains" : "holds", pass ? o->retained : o->size,
             o->preview[0] ? " " : "", o->preview);
    }
    fprintf(f, "\n");
  }
  free(v);
}

/* The whole report of a dump: objects with links, then the tops. */
void ht_luadump_print(FILE *f, const HtLuaDump *d, unsigned top)
{
  dump_print_objects(f, d);
  dump_print_tops(f, d, top);
}
