/* heaptape -- the caller lines of a merged row's stacks, each stack's
** computed once a report. A row of cc1plus merges 10^4 stacks and appears
** in several lists; printing each stack's lines to compare them took most
** of the report. Here each level's line is printed once (keyed by its
** frame and its place in the frame's inline chain) and a stack's lines are
** compared as a string of line ids. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callers.h"
#include "frames.h"

#define CALLERS_INDENT "                "

int ht_callers_init(HtCallers *c, const HtModel *m, unsigned depth)
{
  memset(c, 0, sizeof(*c));
  c->m = m;
  c->depth = depth;
  /* A sealed tape's groups, when made at this depth for every site. */
  c->stored = m->group_depth && m->group_depth == depth;
  for (uint32_t i = 0; c->stored && i < m->nsite; i++) c->stored = m->site[i].group != 0;
  c->nid = c->stored ? m->ngroup : m->nsite;
  c->text_of = calloc(m->nsite ? m->nsite : 1, sizeof(uint32_t));
  c->below = calloc((size_t)ht_reader_stack_count(m->r) + 1, sizeof(uint32_t));
  if (!c->text_of || !c->below || ht_map_init(&c->line_of, 1024) || ht_strtab_init(&c->lines, 1024) ||
      ht_strtab_init(&c->keys, 1024) || ht_map_init(&c->frame_at, 1024)) {
    ht_callers_free(c);
    return -1;
  }
  return 0;
}

void ht_callers_free(HtCallers *c)
{
  free(c->text_of);
  free(c->below);
  ht_map_free(&c->line_of);
  ht_strtab_free(&c->lines);
  ht_strtab_free(&c->keys);
  ht_map_free(&c->frame_at);
  free(c->pool);
  memset(c, 0, sizeof(*c));
}

/* The id of a level's line; -1 when out of memory. */
static int64_t callers_line(HtCallers *c, const HtFrameInfo *fi)
{
  uint64_t key, *v = NULL;
  int keyed = ht_frames_level_key(fi, &key);
  if (keyed) v = ht_map_get(&c->line_of, key);
  if (v) return (int64_t)*v - 1;
  char name[1024], line[1040];
  ht_frames_format(fi, name, sizeof(name));
  snprintf(line, sizeof(line), "%s%s", name, fi->inlined ? " (inlined)" : "");
  int64_t id = ht_strtab_intern(&c->lines, line, NULL);
  if (id >= 0 && keyed && ht_map_put(&c->line_of, key, (uint64_t)id + 1)) return -1;
  return id;
}

/* The line ids of a frame's levels: {k, id0 .. id(k-1)} (valid until the
** next call), or NULL when out of memory. A frame is looked up and its
** levels named once a report, not once per stack through it. */
static const uint32_t *callers_frame(HtCallers *c, uint64_t frame)
{
  uint64_t *v = ht_map_get(&c->frame_at, frame);
  if (v) return c->pool + *v - 1;
  HtFrameInfo fi[16];
  size_t k = ht_frames_info(c->m->r, frame, fi, HT_COUNTOF(fi));
  if (c->npool + k + 1 > c->cpool) {
    size_t n = c->cpool ? c->cpool * 2 : 4096;
    uint32_t *p = realloc(c->pool, n * sizeof(uint32_t));
    if (!p) return NULL;
    c->pool = p;
    c->cpool = n;
  }
  size_t at = c->npool;
  c->pool[at] = (uint32_t)k;
  for (size_t j = 0; j < k; j++) {
    int64_t id = callers_line(c, &fi[j]);
    if (id < 0 || id > UINT32_MAX) return NULL;
    c->pool[at + 1 + j] = (uint32_t)id;
  }
  if (ht_map_put(&c->frame_at, frame, at + 1)) return NULL;
  c->npool += k + 1;
  return c->pool + at;
}

/* The line ids of a stack's first levels from level `level` of node `node`
** outward into ids[max] (as ht_frames_levels_at gives the levels); returns
** how many levels there are, or -1 when out of memory. */
static int64_t callers_ids(HtCallers *c, uint32_t node, unsigned level, uint32_t *ids,
                           size_t max)
{
  const HtReader *r = c->m->r;
  size_t got = 0, total = 0;
  for (; node; node = ht_reader_stack_parent(r, node), level = 0) {
    if (got == max && total) return (int64_t)(total + ht_frames_below(r, node, c->below));
    const uint32_t *f = callers_frame(c, ht_reader_stack_frame(r, node));
    if (!f) return -1;
    for (uint32_t j = level; j < f[0]; j++) {
      if (got < max) ids[got++] = f[1 + j];
      total++;
    }
  }
  return (int64_t)total;
}

/* Appends the character lead (if any), v in base 16 (hex) or 10, then the
** character end (if any) to the key in buf; 0 or -1 when it does not fit.
** By hand: snprintf was a tenth of a report naming 10^5 stacks. */
static int callers_put(char *buf, size_t len, size_t *at, char lead, int hex, uint64_t v,
                       char end)
{
  char tmp[24];
  size_t n = 0;
  do {
    unsigned d = (unsigned)(hex ? v & 15 : v % 10);
    tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
    v = hex ? v >> 4 : v / 10;
  } while (v);
  if (*at + n + 3 > len) return -1;
  if (lead) buf[(*at)++] = lead;
  while (n) buf[(*at)++] = tmp[--n];
  if (end) buf[(*at)++] = end;
  buf[*at] = 0;
  return 0;
}

/* The id of site's key in c->keys: the ids of the lines the report
** prints, then the count of levels left out ("... N more frames"); "-"
** with no caller. Sites get ids in the order they come (below m->nsite). */
static int64_t callers_key(HtCallers *c, uint32_t site)
{
  if (c->text_of[site]) return (int64_t)c->text_of[site] - 1;
  const HtModel *m = c->m;
  HtFrameInfo lv[64];
  uint32_t ids[64];
  size_t max = c->depth < HT_COUNTOF(lv) ? c->depth : HT_COUNTOF(lv);
  uint32_t stack = m->site[site].stack, node;
  unsigned level;
  size_t total;
  int fast = ht_reader_stack_depth(m->r, stack) < 256 &&
             ht_model_first_kept(m, stack, &node, &level);
  if (fast) {
    int64_t n = callers_ids(c, node, level, ids, max < 2 ? 2 : max);
    if (n < 0) return -1;
    total = (size_t)n;
  } else {  /* all plumbing, or deep: the long way */
    total = ht_frames_levels_counted(m->r, stack, m->o.wrappers, m->o.nwrappers, lv,
                                     max < 2 ? 2 : max, c->below);
  }
  char key[64 * 20 + 32];
  size_t at = 0;
  if (total < 2) {
    key[at++] = '-';
    key[at] = 0;
  } else {
    size_t shown = c->depth > 2 ? (total < max ? total : max) : 2;
    for (size_t i = 1; i < shown; i++) {
      int64_t id = fast ? ids[i] : callers_line(c, &lv[i]);
      if (id < 0 || callers_put(key, sizeof(key), &at, 0, 1, (uint64_t)id, ','))
        return -1;
    }
    if (c->depth > 2 && total > shown &&
        callers_put(key, sizeof(key), &at, '+', 0, (uint64_t)(total - shown), 0))
      return -1;
  }
  int64_t id = ht_strtab_intern(&c->keys, key, NULL);
  if (id >= 0) c->text_of[site] = (uint32_t)id + 1;
  return id;
}

int64_t ht_callers_id(HtCallers *c, uint32_t site)
{
  return c->stored ? (int64_t)c->m->site[site].group - 1 : callers_key(c, site);
}

char *ht_callers_text(HtCallers *c, uint32_t site)
{
  int64_t id = callers_key(c, site);
  if (id < 0) return NULL;
  const char *k = c->keys.str[id];
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  if (k[0] == '-') { fputs("(no caller)\n", f); k++; }
  for (int first = 1; *k && *k != '+'; first = 0) {
    char *end;
    unsigned long long line = strtoull(k, &end, 16);
    fprintf(f, "%s%s\n", first ? "" : CALLERS_INDENT, c->lines.str[line]);
    k = *end == ',' ? end + 1 : end;
  }
  if (*k == '+') {
    unsigned long long more = strtoull(k + 1, NULL, 10);
    fprintf(f, CALLERS_INDENT "... %llu more frame%s\n", more, more == 1 ? "" : "s");
  }
  if (fclose(f)) { free(buf); return NULL; }
  return buf;
}
