/* heaptape -- the LuaJIT memprof parser layout: ALLOCATIONS, REALLOCATIONS,
** DEALLOCATIONS with Overrides, HEAP SUMMARY and heap snapshots. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "../analyze/frames.h"

/*
** heaptape tapes carry no stack on frees, so a DEALLOCATIONS line is keyed
** by the location that allocated the freed blocks, and its Overrides list
** names that same location. REALLOCATIONS lines are keyed by the location
** of the realloc call; their Overrides name where the replaced blocks were
** allocated. A realloc of a block from before the recording replaces
** nothing known: it counts -0B and adds no override.
*/

/* Which figures a section shows. */
typedef enum { SEC_ALLOC, SEC_REALLOC, SEC_DEALLOC } Section;

/* Events of a location in a section. */
static uint64_t memprof_events(const HtLoc *l, Section s)
{
  return s == SEC_ALLOC ? l->a_n : s == SEC_REALLOC ? l->r_n : l->d_n;
}

/* Sort context for qsort_r. */
typedef struct MpCtx { const HtModel *m; Section s; int heap; } MpCtx;

/* Most events (or bytes held) first, ties by location name. */
static int memprof_cmp(const void *a, const void *b, void *arg)
{
  const MpCtx *c = arg;
  const HtLoc *x = &c->m->loc[*(const uint32_t *)a], *y = &c->m->loc[*(const uint32_t *)b];
  uint64_t kx, ky;
  if (c->heap) { kx = x->scratch; ky = y->scratch; }
  else { kx = memprof_events(x, c->s); ky = memprof_events(y, c->s); }
  if (kx != ky) return kx > ky ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Location names in order, for Overrides lists. */
static int memprof_name_cmp(const void *a, const void *b, void *arg)
{
  const HtModel *m = arg;
  return strcmp(m->loc[*(const uint32_t *)a].name, m->loc[*(const uint32_t *)b].name);
}

/* Bytes as "<n>B", or "<x.yy>KiB/MiB/GiB" when human. */
static const char *memprof_bytes(char *buf, size_t len, uint64_t v, int human)
{
  static const char *const unit[] = {"KiB", "MiB", "GiB"};
  if (!human || v < 1024) { snprintf(buf, len, "%" PRIu64 "B", v); return buf; }
  double d = (double)v / 1024;
  int u = 0;
  while (d >= 1024 && u < 2) { d /= 1024; u++; }
  snprintf(buf, len, "%.2f%s", d, unit[u]);
  return buf;
}

/* A location's name in this layout: a Python or Ruby line is `@file:line`,
** as memprof names a Lua line; every other the report's site name. */
static const char *memprof_name(const HtModel *m, const HtLoc *l, char *buf, size_t len)
{
  HtFrameInfo fi;
  if (!HT_FRAME_IS_LOC(l->frame) || !ht_frames_info(m->r, l->frame, &fi, 1) ||
      !fi.known || (fi.lkind != HT_L_PYTHON && fi.lkind != HT_L_RUBY))
    return l->name;
  snprintf(buf, len, "@%s:%" PRIu64, fi.file ? fi.file : "?", fi.line);
  return buf;
}

/* Print one section. */
static void memprof_section(FILE *f, const HtModel *m, Section s, int human)
{
  static const char *const title[] = {"ALLOCATIONS", "REALLOCATIONS", "DEALLOCATIONS"};
  fprintf(f, "%s\n", title[s]);
  uint32_t *v = malloc((m->nloc ? m->nloc : 1) * sizeof(uint32_t)), n = 0;
  if (!v) return;
  for (uint32_t i = 0; i < m->nloc; i++)
    if (memprof_events(&m->loc[i], s)) v[n++] = i;
  MpCtx c = {m, s, 0};
  qsort_r(v, n, sizeof(uint32_t), memprof_cmp, &c);
  int blank = 0;
  for (uint32_t i = 0; i < n; i++) {
    const HtLoc *l = &m->loc[v[i]];
    uint64_t plus = s == SEC_ALLOC ? l->a_plus : s == SEC_REALLOC ? l->r_plus : 0;
    uint64_t minus = s == SEC_ALLOC ? 0 : s == SEC_REALLOC ? l->r_minus : l->d_minus;
    char b1[32], b2[32], nm[1024];
    fprintf(f, "%s: %" PRIu64 " events\t+%s\t-%s\n", memprof_name(m, l, nm, sizeof(nm)),
            memprof_events(l, s),
            memprof_bytes(b1, sizeof(b1), plus, human),
            memprof_bytes(b2, sizeof(b2), minus, human));
    uint32_t no = s == SEC_REALLOC ? l->nr_over : s == SEC_DEALLOC ? l->nd_over : 0;
    blank = 0;
    if (no) {
      uint32_t *ov = malloc(no * sizeof(uint32_t));
      if (!ov) continue;
      memcpy(ov, s == SEC_REALLOC ? l->r_over : l->d_over, no * sizeof(uint32_t));
      qsort_r(ov, no, sizeof(uint32_t), memprof_name_cmp, (void *)m);
      fprintf(f, "\tOverrides:\n");
      for (uint32_t j = 0; j < no; j++)
        fprintf(f, "\t\t%s\n", memprof_name(m, &m->loc[ov[j]], nm, sizeof(nm)));
      fputc('\n', f);
      blank = 1;
      free(ov);
    }
  }
  if (!blank) fputc('\n', f);
  free(v);
}

/* Locations holding bytes (in loc[].scratch), most first; caller frees. */
static uint32_t memprof_holders(const HtModel *m, uint32_t **out)
{
  uint32_t *v = malloc((m->nloc ? m->nloc : 1) * sizeof(uint32_t)), n = 0;
  *out = v;
  if (!v) return 0;
  for (uint32_t i = 0; i < m->nloc; i++)
    if (m->loc[i].scratch) v[n++] = i;
  MpCtx c = {m, SEC_ALLOC, 1};
  qsort_r(v, n, sizeof(uint32_t), memprof_cmp, &c);
  return n;
}

/* The heap summary: what each location still holds at the end. */
static void memprof_heap(FILE *f, const HtModel *m, int human)
{
  fprintf(f, "HEAP SUMMARY:\n");
  for (uint32_t i = 0; i < m->nloc; i++) m->loc[i].scratch = m->loc[i].f.live;
  uint32_t *v, n = memprof_holders(m, &v);
  for (uint32_t i = 0; i < n; i++) {
    const HtLoc *l = &m->loc[v[i]];
    char b[32], nm[1024];
    fprintf(f, "%s holds %s: %" PRIu64 " allocs, %" PRIu64 " frees\n",
            memprof_name(m, l, nm, sizeof(nm)),
            memprof_bytes(b, sizeof(b), l->f.live, human), l->f.allocs, l->f.frees);
  }
  free(v);
}

/* The LuaJIT memprof parser layout. */
void ht_report_memprof(FILE *f, const HtModel *m, const HtReportOpts *o)
{
  if (!o->leak_only) {
    memprof_section(f, m, SEC_ALLOC, o->human);
    memprof_section(f, m, SEC_REALLOC, o->human);
    memprof_section(f, m, SEC_DEALLOC, o->human);
  }
  memprof_heap(f, m, o->human);
}

/* A memprof heap snapshot at tape time t_ns. */
void ht_report_memprof_snap(void *arg, const HtModel *m, uint64_t t_ns)
{
  FILE *f = arg;
  ht_model_loc_live(m);
  uint32_t *v, n = memprof_holders(m, &v);
  fprintf(f, "===== HEAP SNAPSHOT, %g seconds passed\n", (double)t_ns / 1e9);
  char nm[1024];
  for (uint32_t i = 0; i < n; i++)
    fprintf(f, "%s holds %" PRIu64 " bytes\n", memprof_name(m, &m->loc[v[i]], nm, sizeof(nm)),
            m->loc[v[i]].scratch);
  fputc('\n', f);
  free(v);
}
