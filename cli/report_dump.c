/* heaptape -- `heaptape report --dump FILE`: a Lua universe dump (lua/, format
** in docs/LUA.md) in the memprof layout, the largest objects and retainers. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"

/* One reference of an object. */
typedef struct DLink {
  char sect;               /* 'A' array, 'H' hash, 'R' other */
  char *text;              /* the link as printed */
  uint64_t target;         /* address of the referenced object, 0 = none */
} DLink;

/* One object of the dump. */
typedef struct DObj {
  char type[16];           /* LJ_T* name */
  uint64_t addr;           /* address */
  uint64_t size;           /* bytes */
  uint64_t mt;             /* metatable address, 0 = none */
  char preview[48];        /* string contents (strings only) */
  DLink *link;             /* references */
  uint32_t nlink, clink;   /* used, allocated */
  uint32_t *succ;          /* referenced object indexes + 1 (computed) */
  uint32_t nsucc;          /* used */
  uint32_t *pred;          /* referencing object indexes + 1 (computed) */
  uint32_t npred, cpred;   /* used, allocated */
  uint32_t rpo;            /* reverse postorder number, 0 = unreachable */
  uint32_t idom;           /* immediate dominator index + 1 (0 = root) */
  uint64_t retained;       /* bytes this object keeps alive alone */
} DObj;

/* The whole dump. */
typedef struct Dump {
  DObj *o;                 /* objects in file order */
  uint32_t n, c;           /* used, allocated */
  uint32_t *hash;          /* address -> index + 1 */
  uint32_t mask;           /* hash slots - 1 */
  char vm[32];             /* VM name from the header */
} Dump;

/* Index + 1 of the object at addr, 0 if none. */
static uint32_t dump_find(const Dump *d, uint64_t addr)
{
  if (!addr) return 0;
  uint32_t i = (uint32_t)((addr * 0x9e3779b97f4a7c15ULL) >> 40) & d->mask;
  for (; d->hash[i]; i = (i + 1) & d->mask)
    if (d->o[d->hash[i] - 1].addr == addr) return d->hash[i];
  return 0;
}

/* Parse an address field ("0x..."). */
static uint64_t dump_addr(const char *s) { return s ? strtoull(s, NULL, 16) : 0; }

/* Read the dump at path; 0 or -1 with a message printed. */
static int dump_read(Dump *d, const char *path)
{
  FILE *f = fopen(path, "r");
  if (!f) { ht_cli_error("%s: cannot open", path); return -1; }
  char line[4096];
  if (!fgets(line, sizeof(line), f) || strncmp(line, "HTLUADUMP\t1\t", 12)) {
    ht_cli_error("%s: not a heaptape Lua dump (version 1)", path);
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
      if (d->n == d->c) {
        d->c = d->c ? d->c * 2 : 1024;
        DObj *no = realloc(d->o, d->c * sizeof(DObj));
        if (!no) { fclose(f); ht_cli_error("out of memory"); return -1; }
        d->o = no;
      }
      DObj *o = &d->o[d->n++];
      memset(o, 0, sizeof(*o));
      snprintf(o->type, sizeof(o->type), "%s", fld[1]);
      o->addr = dump_addr(fld[2]);
      o->size = strtoull(fld[3], NULL, 10);
      o->mt = dump_addr(fld[4]);
      if (nf > 5) snprintf(o->preview, sizeof(o->preview), "%s", fld[5]);
    } else if ((!strcmp(fld[0], "A") || !strcmp(fld[0], "H") || !strcmp(fld[0], "R")) &&
               d->n && nf >= 3) {
      DObj *o = &d->o[d->n - 1];
      if (o->nlink == o->clink) {
        o->clink = o->clink ? o->clink * 2 : 4;
        DLink *nl = realloc(o->link, o->clink * sizeof(DLink));
        if (!nl) { fclose(f); ht_cli_error("out of memory"); return -1; }
        o->link = nl;
      }
      DLink *l = &o->link[o->nlink++];
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
      if (l->sect == 'H' && !strncmp(fld[1], "LJ_T", 4) && o->nlink < UINT32_MAX) {
        if (o->nlink == o->clink) {
          o->clink *= 2;
          DLink *nl = realloc(o->link, o->clink * sizeof(DLink));
          if (!nl) { fclose(f); return -1; }
          o->link = nl;
        }
        o->link[o->nlink++] = (DLink){'K', NULL, dump_addr(fld[2])};
      }
    } else if (!strcmp(fld[0], "E")) {
      ended = 1;
    }
  }
  fclose(f);
  if (!ended) ht_cli_error("warning: %s: dump is truncated (no end record)", path);
  uint32_t slots = 1024;
  while (slots < d->n * 2) slots *= 2;
  d->mask = slots - 1;
  d->hash = calloc(slots, sizeof(uint32_t));
  if (!d->hash) return -1;
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
static uint32_t dump_meet(const Dump *d, uint32_t a, uint32_t b)
{
  while (a != b) {
    while (a && b && d->o[a - 1].rpo > d->o[b - 1].rpo) a = d->o[a - 1].idom;
    while (a && b && d->o[b - 1].rpo > d->o[a - 1].rpo) b = d->o[b - 1].idom;
    if (!a || !b) return 0;
  }
  return a;
}

/* Compute every object's retained bytes; roots are the first two objects. */
static int dump_retained(Dump *d)
{
  for (uint32_t i = 0; i < d->n; i++) {       /* successors and predecessors */
    DObj *o = &d->o[i];
    o->succ = malloc((o->nlink + 1) * sizeof(uint32_t));
    if (!o->succ) return -1;
    uint32_t m = dump_find(d, o->mt);
    if (m) o->succ[o->nsucc++] = m;
    for (uint32_t k = 0; k < o->nlink; k++)
      if ((m = dump_find(d, o->link[k].target))) o->succ[o->nsucc++] = m;
    for (uint32_t k = 0; k < o->nsucc; k++) {
      DObj *t = &d->o[o->succ[k] - 1];
      if (t->npred == t->cpred) {
        t->cpred = t->cpred ? t->cpred * 2 : 2;
        uint32_t *np = realloc(t->pred, t->cpred * sizeof(uint32_t));
        if (!np) return -1;
        t->pred = np;
      }
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
      DObj *o = &d->o[v - 1];
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
      DObj *o = &d->o[v - 1];
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
    DObj *o = &d->o[order[k] - 1];
    if (o->idom) d->o[o->idom - 1].retained += o->retained;
  }
  free(order); free(stk); free(pos); free(seen);
  return 0;
}

/* -- Output ------------------------------------------------------------------ */

/* The memprof layout: every object with its links. */
static void dump_print_objects(const Dump *d)
{
  printf("===== MEMORY SNAPSHOT\n");
  for (uint32_t i = 0; i < d->n; i++) {
    const DObj *o = &d->o[i];
    printf("@%s 0x%" PRIx64 " holds %" PRIu64 " bytes and linked with\n", o->type, o->addr, o->size);
    if (o->mt) printf("\tmetatable => LJ_TTAB 0x%" PRIx64 "\n", o->mt);
    else printf("\tmetatable => NULL\n");
    if (!strcmp(o->type, "LJ_TTAB")) {
      printf("===== ARRAY PART\n");
      for (uint32_t k = 0; k < o->nlink; k++)
        if (o->link[k].sect == 'A') printf("\t%s\n", o->link[k].text);
      printf("===== HASH PART\n");
      for (uint32_t k = 0; k < o->nlink; k++)
        if (o->link[k].sect == 'H') printf("\t%s\n", o->link[k].text);
    } else {
      for (uint32_t k = 0; k < o->nlink; k++)
        if (o->link[k].sect == 'R') printf("\t%s\n", o->link[k].text);
    }
  }
  printf("\n");
}

/* Sort context: which figure orders the objects. */
static int dump_by_retained;
static const Dump *dump_cur;

/* Larger first, then by address. */
static int dump_cmp(const void *a, const void *b)
{
  const DObj *x = &dump_cur->o[*(const uint32_t *)a], *y = &dump_cur->o[*(const uint32_t *)b];
  uint64_t kx = dump_by_retained ? x->retained : x->size;
  uint64_t ky = dump_by_retained ? y->retained : y->size;
  if (kx != ky) return kx > ky ? -1 : 1;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The top objects by size, then by retained bytes. */
static void dump_print_tops(const Dump *d, unsigned top)
{
  uint32_t *v = malloc((d->n + 1) * sizeof(uint32_t));
  if (!v) return;
  uint64_t total = 0;
  for (uint32_t i = 0; i < d->n; i++) { v[i] = i; total += d->o[i].size; }
  printf("===== SUMMARY\n%" PRIu32 " objects, %" PRIu64 " bytes (%s)\n\n", d->n, total, d->vm);
  dump_cur = d;
  for (int pass = 0; pass < 2; pass++) {
    dump_by_retained = pass;
    qsort(v, d->n, sizeof(uint32_t), dump_cmp);
    printf(pass ? "===== RETAINED (bytes kept alive by the object alone)\n"
                : "===== LARGEST OBJECTS\n");
    for (uint32_t i = 0; i < d->n && i < top; i++) {
      const DObj *o = &d->o[v[i]];
      printf("@%s 0x%" PRIx64 " %s %" PRIu64 " bytes%s%s\n", o->type, o->addr,
             pass ? "retains" : "holds", pass ? o->retained : o->size,
             o->preview[0] ? " " : "", o->preview);
    }
    printf("\n");
  }
  free(v);
}

/* `heaptape report --dump FILE [--top N]`. */
int ht_report_dump(int argc, char **argv)
{
  const char *path = NULL;
  unsigned top = 10;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--dump")) continue;
    if (!strcmp(argv[i], "--top") && i + 1 < argc) { top = (unsigned)strtoul(argv[++i], NULL, 10); continue; }
    if (argv[i][0] == '-') { ht_cli_error("report --dump: unknown option '%s'", argv[i]); return HT_EXIT_USAGE; }
    if (path) { ht_cli_error("report --dump: one dump at a time"); return HT_EXIT_USAGE; }
    path = argv[i];
  }
  if (!path) { ht_cli_error("report --dump: no dump given"); return HT_EXIT_USAGE; }
  Dump d;
  memset(&d, 0, sizeof(d));
  if (dump_read(&d, path)) return HT_EXIT_FAIL;
  int rc = dump_retained(&d);
  dump_print_objects(&d);
  dump_print_tops(&d, top ? top : 10);
  if (rc) ht_cli_error("out of memory: retained sizes are incomplete");
  for (uint32_t i = 0; i < d.n; i++) {
    for (uint32_t k = 0; k < d.o[i].nlink; k++) free(d.o[i].link[k].text);
    free(d.o[i].link); free(d.o[i].succ); free(d.o[i].pred);
  }
  free(d.o); free(d.hash);
  return fflush(stdout) ? HT_EXIT_FAIL : HT_EXIT_OK;
}
