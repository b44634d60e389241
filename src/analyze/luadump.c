/* heaptape -- Lua universe dumps: the reader, and retained sizes by the
** dominator iteration of Cooper, Harvey and Kennedy. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "luadump.h"
#include "../base/grow.h"

/* Index + 1 of the object at addr, 0 if none. */
static uint32_t dump_find(const HtLuaDump *d, uint64_t addr)
{
  if (!addr) return 0;
  uint32_t i = (uint32_t)((addr * 0x9e3779b97f4a7c15ULL) >> 40) & d->mask;
  for (; d->hash[i]; i = (i + 1) & d->mask)
    if (d->o[d->hash[i] - 1].addr == addr) return d->hash[i];
  return 0;
}

/* Parse an address field ("0x..."). */
static uint64_t dump_addr(const char *s) { return s ? strtoull(s, NULL, 16) : 0; }

/* Read the dump at path into d (zeroed first); 0, or -1 with why in err. */
int ht_luadump_read(HtLuaDump *d, const char *path, char *err, size_t errlen)
{
  memset(d, 0, sizeof(*d));
  FILE *f = fopen(path, "r");
  if (!f) { snprintf(err, errlen, "cannot open"); return -1; }
  char line[4096];
  if (!fgets(line, sizeof(line), f) || strncmp(line, "HTLUADUMP\t1\t", 12)) {
    snprintf(err, errlen, "not a heaptape Lua dump (version 1)");
    fclose(f);
    return -1;
  }
  snprintf(d->vm, sizeof(d->vm), "%.31s", line + 12);
  d->vm[strcspn(d->vm, "\n")] = 0;
  int ended = 0;
  while (fgets(line, sizeof(line), f)) {
    line[strcspn(line, "\n")] = 0;
    char *fld[6] = {0};
    int nf = 0;
    for (char *p = line; nf < 6; ) {
      fld[nf++] = p;
      p = strchr(p, '\t');
      if (!p) break;
      *p++ = 0;
    }
    if (!strcmp(fld[0], "O") && nf >= 5) {
      if (ht_grow(&d->o, &d->c, (size_t)d->n + 1, sizeof(HtDumpObj))) {
        fclose(f);
        snprintf(err, errlen, "out of memory");
        return -1;
      }
      HtDumpObj *o = &d->o[d->n++];
      memset(o, 0, sizeof(*o));
      snprintf(o->type, sizeof(o->type), "%s", fld[1]);
      o->addr = dump_addr(fld[2]);
      o->size = strtoull(fld[3], NULL, 10);
      o->mt = dump_addr(fld[4]);
      if (nf > 5) snprintf(o->preview, sizeof(o->preview), "%s", fld[5]);
    } else if ((!strcmp(fld[0], "A") || !strcmp(fld[0], "H") || !strcmp(fld[0], "R")) &&
               d->n && nf >= 3) {
      HtDumpObj *o = &d->o[d->n - 1];
      /* room for this link and a hash key's */
      if (ht_grow(&o->link, &o->clink, (size_t)o->nlink + 2, sizeof(HtDumpLink))) {
        fclose(f);
        snprintf(err, errlen, "out of memory");
        return -1;
      }
      HtDumpLink *l = &o->link[o->nlink++];
      char buf[512];
      l->sect = fld[0][0];
      if (l->sect == 'A' && nf >= 4) {
        snprintf(buf, sizeof(buf), "[%s] => %s %s", fld[1], fld[2], fld[3]);
        l->target = strncmp(fld[2], "LJ_T", 4) ? 0 : dump_addr(fld[3]);
      } else if (l->sect == 'H' && nf >= 5) {
        snprintf(buf, sizeof(buf), "%s %s => %s %s", fld[1], fld[2], fld[3], fld[4]);
        l->target = strncmp(fld[3], "LJ_T", 4) ? 0 : dump_addr(fld[4]);
      } else {
        snprintf(buf, sizeof(buf), "%s %s", fld[1], fld[2]);
        l->target = strncmp(fld[1], "LJ_T", 4) ? 0 : dump_addr(fld[2]);
      }
      l->text = strdup(buf);
      /* a hash key that is an object is a reference too */
      if (l->sect == 'H' && !strncmp(fld[1], "LJ_T", 4) && o->nlink < UINT32_MAX)
        o->link[o->nlink++] = (HtDumpLink){'K', NULL, dump_addr(fld[2])};
    } else if (!strcmp(fld[0], "E")) {
      ended = 1;
    }
  }
  fclose(f);
  d->truncated = !ended;
  uint32_t slots = 1024;
  while (slots < d->n * 2) slots *= 2;
  d->mask = slots - 1;
  d->hash = calloc(slots, sizeof(uint32_t));
  if (!d->hash) { snprintf(err, errlen, "out of memory"); return -1; }
  for (uint32_t i = 0; i < d->n; i++) {
    if (dump_find(d, d->o[i].addr)) continue;
    uint32_t j = (uint32_t)((d->o[i].addr * 0x9e3779b97f4a7c15ULL) >> 40) & d->mask;
    while (d->hash[j]) j = (j + 1) & d->mask;
    d->hash[j] = i + 1;
  }
  return 0;
}

/* -- Retained sizes: dominators (Cooper, Harvey and Kennedy's iteration) -- */

/* Nearest common dominator of a and b (indexes + 1; 0 is the root). */
static uint32_t dump_meet(const HtLuaDump *d, uint32_t a, uint32_t b)
{
  while (a != b) {
    while (a && b && d->o[a - 1].rpo > d->o[b - 1].rpo) a = d->o[a - 1].idom;
    while (a && b && d->o[b - 1].rpo > d->o[a - 1].rpo) b = d->o[b - 1].idom;
    if (!a || !b) return 0;
  }
  return a;
}

/* Compute every object's retained bytes; roots are the first two objects. */
int ht_luadump_retained(HtLuaDump *d)
{
  for (uint32_t i = 0; i < d->n; i++) {       /* successors and predecessors */
    HtDumpObj *o = &d->o[i];
    o->succ = malloc((o->nlink + 1) * sizeof(uint32_t));
    if (!o->succ) return -1;
    uint32_t m = dump_find(d, o->mt);
    if (m) o->succ[o->nsucc++] = m;
    for (uint32_t k = 0; k < o->nlink; k++)
      if ((m = dump_find(d, o->link[k].target))) o->succ[o->nsucc++] = m;
    for (uint32_t k = 0; k < o->nsucc; k++) {
      HtDumpObj *t = &d->o[o->succ[k] - 1];
      if (ht_grow(&t->pred, &t->cpred, (size_t)t->npred + 1, sizeof(uint32_t))) return -1;
      t->pred[t->npred++] = i + 1;
    }
  }
  /* postorder by an explicit stack from the roots */
  uint32_t *order = malloc((d->n + 1) * sizeof(uint32_t)), no = 0;
  uint32_t *stk = malloc((d->n + 1) * sizeof(uint32_t)), *pos = calloc(d->n + 1, sizeof(uint32_t));
  uint8_t *seen = calloc(d->n + 1, 1);
  if (!order || !stk || !pos || !seen) { free(order); free(stk); free(pos); free(seen); return -1; }
  for (uint32_t r = 1; r <= d->n && r <= 2; r++) {
    if (seen[r]) continue;
    uint32_t sp = 0;
    stk[sp++] = r; seen[r] = 1;
    while (sp) {
      uint32_t v = stk[sp - 1];
      HtDumpObj *o = &d->o[v - 1];
      if (pos[v] < o->nsucc) {
        uint32_t w = o->succ[pos[v]++];
        if (!seen[w]) { seen[w] = 1; stk[sp++] = w; }
      } else {
        order[no++] = v;
        sp--;
      }
    }
  }
  for (uint32_t k = 0; k < no; k++) d->o[order[k] - 1].rpo = no - k;  /* 1 = first */
  for (uint32_t r = 1; r <= d->n && r <= 2; r++) d->o[r - 1].idom = 0;
  uint8_t *def = calloc(d->n + 1, 1);     /* idom computed (roots: yes) */
  if (!def) { free(order); free(stk); free(pos); free(seen); return -1; }
  for (uint32_t r = 1; r <= d->n && r <= 2; r++) def[r] = 1;
  int changed = 1;
  for (int iter = 0; changed && iter < 1000; iter++) {
    changed = 0;
    for (uint32_t k = no; k-- > 0; ) {       /* reverse postorder */
      uint32_t v = order[k];
      if (v <= 2) continue;
      HtDumpObj *o = &d->o[v - 1];
      uint32_t nd = UINT32_MAX;
      for (uint32_t p = 0; p < o->npred; p++) {
        uint32_t u = o->pred[p];
        if (!def[u] || !d->o[u - 1].rpo) continue;
        nd = nd == UINT32_MAX ? u : dump_meet(d, nd, u);
      }
      if (nd == UINT32_MAX) nd = 0;
      if (!def[v] || o->idom != nd) { o->idom = nd; def[v] = 1; changed = 1; }
    }
  }
  free(def);
  for (uint32_t i = 0; i < d->n; i++) d->o[i].retained = d->o[i].rpo ? d->o[i].size : 0;
  for (uint32_t k = 0; k < no; k++) {        /* children before parents */
    HtDumpObj *o = &d->o[order[k] - 1];
    if (o->idom) d->o[o->idom - 1].retained += o->retained;
  }
  free(order); free(stk); free(pos); free(seen);
  return 0;
}

/* Release what d owns. */
void ht_luadump_free(HtLuaDump *d)
{
  for (uint32_t i = 0; i < d->n; i++) {
    for (uint32_t k = 0; k < d->o[i].nlink; k++) free(d->o[i].link[k].text);
    free(d->o[i].link); free(d->o[i].succ); free(d->o[i].pred);
  }
  free(d->o); free(d->hash);
  memset(d, 0, sizeof(*d));
}
