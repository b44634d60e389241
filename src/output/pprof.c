/* heaptape -- the pprof export: tallies of one or more tapes into a gzipped
** perftools.profiles.Profile (protobuf-c code generated from proto/). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "outfile.h"
#include "pprof.h"
#include "../base/grow.h"
#include "profile.pb-c.h"
#include "../analyze/frames.h"
#include "../base/strtab.h"
#include "../../include/heaptape.h"

/* Sample types, in the order go tool pprof expects of a heap profile. */
enum { V_ALLOC_N, V_ALLOC_B, V_INUSE_N, V_INUSE_B, V_COUNT };

/* One sample before serialisation: its message is made only as it is
** written (70k of cc1plus's, with their labels, were 15 MiB). */
typedef struct PSample {
  size_t loc0;               /* its location ids, innermost first: ids[loc0 ..] */
  uint32_t nlocs;            /* ids */
  uint32_t tid;              /* label "tid" */
  int64_t thread;            /* label "thread": the name's string index */
  int64_t domain;            /* label "domain": its value's string index, 0 = none */
  int64_t v[V_COUNT];        /* values */
} PSample;

/* One location before serialisation. */
typedef struct PLoc {
  uint64_t mapping;          /* mapping id, 0 if none */
  uint64_t addr;             /* address, 0 for runtime locations */
  Perftools__Profiles__Line *line; /* inline chain, innermost first (owned) */
  size_t nline;              /* levels */
} PLoc;

/* A frame's pprof locations within one tape: whole, and with its inner
** plumbing levels trimmed (when it is the innermost frame shown). */
typedef struct FrameC {
  uint64_t loc_full;         /* location id of all levels */
  uint64_t loc_trim;         /* location id without inner plumbing, 0 = none yet */
  uint32_t nplumb;           /* inner plumbing levels */
  uint32_t nlev;             /* levels */
} FrameC;

struct HtPprof {
  HtStrtab str;              /* string table ("" first, as pprof wants) */
  Perftools__Profiles__Function *fn; /* functions (id = index + 1) */
  size_t nfn, cfn;           /* used, allocated */
  HtMap fn_of;               /* (name, file) -> index + 1 */
  PLoc *loc;                 /* locations (id = index + 1) */
  size_t nloc, cloc;         /* used, allocated */
  Perftools__Profiles__Mapping *map; /* mappings (id = index + 1) */
  size_t nmap, cmap;         /* used, allocated */
  PSample *smp;              /* samples */
  size_t nsmp, csmp;         /* used, allocated */
  uint32_t *ids;             /* the samples' location ids, one after another
                                (one block: 70k samples of cc1plus made 70k) */
  size_t nids, cids;         /* used, allocated */
  int64_t *comment;          /* comment string indices */
  size_t ncomment, ccomment; /* used, allocated */
  uint64_t time_ns;          /* earliest profile time */
  uint64_t duration_ns;      /* longest span */
  uint64_t period;           /* sampling interval of the first sampled tape */
  HtPprofTotals tot;         /* totals */
  int oom;                   /* out of memory */
};

/* -- Tables --------------------------------------------------------------- */

/* Make room for one more element of size sz in *v (void ** as void *): the
** capacity doubles, the new slots are not zeroed (every table's entries
** are set up as they are added; zeroing cc1plus's 70k samples and 10^5
** locations at each doubling was a quarter of the command). */
static int pprof_grow(HtPprof *p, void *v, size_t used, size_t *cap, size_t sz)
{
  if (used < *cap) return 0;
  size_t c = *cap ? *cap * 2 : 16;
  void *q = c <= SIZE_MAX / 2 / sz ? realloc(*(void **)v, c * sz) : NULL;
  if (!q) {
    p->oom = 1;
    return -1;
  }
  *(void **)v = q;
  *cap = c;
  return 0;
}

/* Index of s in the string table, added if new (0 on OOM, which is ""). */
static int64_t pprof_str(HtPprof *p, const char *s)
{
  if (!s || !*s) return 0;
  int64_t id = ht_strtab_intern(&p->str, s, NULL);
  if (id < 0) { p->oom = 1; return 0; }
  return id;
}

/* Id of the function (name, file), added if new; 0 on OOM. */
static uint64_t pprof_func(HtPprof *p, const char *name, const char *file)
{
  int64_t n = pprof_str(p, name), f = pprof_str(p, file);
  uint64_t key = ((uint64_t)n << 32) | (uint64_t)f, *v = ht_map_get(&p->fn_of, key);
  if (v) return *v;
  if (pprof_grow(p, &p->fn, p->nfn, &p->cfn, sizeof(*p->fn))) return 0;
  Perftools__Profiles__Function *fn = &p->fn[p->nfn++];
  perftools__profiles__function__init(fn);
  fn->id = p->nfn;
  fn->name = n;
  fn->system_name = n;
  fn->filename = f;
  if (ht_map_put(&p->fn_of, key, fn->id)) p->oom = 1;
  return fn->id;
}

/* -- Building ------------------------------------------------------------- */

/* A new, empty profile. */
HtPprof *ht_pprof_new(void)
{
  HtPprof *p = calloc(1, sizeof(*p));
  if (!p) return NULL;
  /* Entry 0 must be the empty string. */
  if (ht_strtab_init(&p->str, 1024) || ht_map_init(&p->fn_of, 1024) ||
      ht_strtab_intern(&p->str, "", NULL) != 0) {
    ht_pprof_destroy(p);
    return NULL;
  }
  return p;
}

/* Release everything. */
void ht_pprof_destroy(HtPprof *p)
{
  if (!p) return;
  for (size_t i = 0; i < p->nloc; i++) free(p->loc[i].line);
  ht_strtab_free(&p->str);
  free(p->fn); free(p->loc); free(p->map);
  free(p->smp); free(p->ids); free(p->comment);
  ht_map_free(&p->fn_of);
  free(p);
}

/* Add a free-text comment. */
int ht_pprof_comment(HtPprof *p, const char *text)
{
  if (pprof_grow(p, &p->comment, p->ncomment, &p->ccomment, sizeof(int64_t)))
    return HEAPTAPE_E_NOMEM;
  p->comment[p->ncomment++] = pprof_str(p, text);
  return 0;
}

/* Per-tape state of ht_pprof_add. */
typedef struct AddCtx {
  HtPprof *p;                /* the profile */
  const HtPprofSrc *src;     /* the tape */
  HtMap frame_of;            /* frame value -> FrameC index */
  FrameC *fc;                /* frame cache */
  size_t nfc, cfc;           /* used, allocated */
  uint64_t *map_of_mod;      /* tally module index -> mapping id */
  uint32_t *node_loc;        /* stack node -> its frame's whole location id
                                (0 = not yet), or NULL (out of memory) */
} AddCtx;

/* Levels of a frame, innermost first, with fallback symbols; returns how many. */
static size_t pprof_levels(AddCtx *c, uint64_t frame, HtFrameInfo *fi, size_t max,
                           HtSymbol *syms)
{
  size_t n = ht_frames_info(c->src->r, frame, fi, max);
  if (n == 1 && !fi[0].known && !fi[0].is_loc && c->src->sym) {
    const HtTallyMod *mod = ht_tally_module(c->src->t, fi[0].ip);
    size_t k = c->src->sym(c->src->sym_arg, mod, fi[0].ip, syms, max);
    ht_frames_fill(fi, syms, k);
    if (k) n = k;
  }
  return n;
}

/* Function name of a level: the function, a Lua chunk, or the display name. */
static const char *pprof_fname(const HtFrameInfo *fi, char *buf, size_t len)
{
  if (fi->func && fi->known) return fi->func;
  if (fi->is_loc && fi->known && fi->lkind == HT_L_LUA) {
    snprintf(buf, len, "@%s", fi->file ? fi->file : "?");
    return buf;
  }
  ht_frames_format(fi, buf, len);
  return buf;
}

/* Id of a new location made of levels fi[0..n); 0 on OOM. */
static uint64_t pprof_loc_new(AddCtx *c, const HtFrameInfo *fi, size_t n)
{
  HtPprof *p = c->p;
  if (pprof_grow(p, &p->loc, p->nloc, &p->cloc, sizeof(PLoc))) return 0;
  PLoc *l = &p->loc[p->nloc];
  memset(l, 0, sizeof(*l));
  l->line = calloc(n ? n : 1, sizeof(*l->line));
  if (!l->line) { p->oom = 1; return 0; }
  p->nloc++;
  l->nline = n;
  for (size_t i = 0; i < n; i++) {
    char buf[1024];
    perftools__profiles__line__init(&l->line[i]);
    l->line[i].function_id = pprof_func(p, pprof_fname(&fi[i], buf, sizeof(buf)),
                                        fi[i].file);
    l->line[i].line = (int64_t)fi[i].line;
  }
  if (n && !fi[0].is_loc) {
    l->addr = fi[0].ip;
    const HtTallyMod *mod = ht_tally_module(c->src->t, fi[0].ip);
    if (mod) l->mapping = c->map_of_mod[mod - c->src->t->mod];
  }
  return p->nloc;
}

/* Cache entry of a frame value, created if new; NULL on OOM. */
static FrameC *pprof_frame(AddCtx *c, uint64_t frame)
{
  uint64_t *v = ht_map_get(&c->frame_of, frame);
  if (v) return &c->fc[*v];
  HtFrameInfo fi[16];
  HtSymbol syms[16];
  size_t n = pprof_levels(c, frame, fi, HT_COUNTOF(fi), syms);
  size_t k = 0;
  while (k < n && ht_frames_plumbing(&fi[k], c->src->wrappers, c->src->nwrappers)) k++;
  if (pprof_grow(c->p, &c->fc, c->nfc, &c->cfc, sizeof(FrameC))) return NULL;
  FrameC *f = &c->fc[c->nfc];
  f->nplumb = (uint32_t)k;
  f->nlev = (uint32_t)n;
  f->loc_full = pprof_loc_new(c, fi, n);
  f->loc_trim = k && k < n ? pprof_loc_new(c, fi + k, n - k) : f->loc_full;
  if (!f->loc_full || !f->loc_trim || ht_map_put(&c->frame_of, frame, c->nfc)) {
    c->p->oom = 1;
    return NULL;
  }
  return &c->fc[c->nfc++];
}

/* Location ids of a stack, innermost first, inner plumbing dropped (the way
** the report shows stacks); returns how many, or -1 on OOM. Past the first
** kept frame a node's location is the same in every stack through it:
** c->node_loc keeps it (70k stacks of cc1plus, 35 frames each, looked
** each frame up in a map by value). */
static int pprof_stack(AddCtx *c, uint32_t stack, uint64_t *out, size_t max)
{
  const HtReader *r = c->src->r;
  size_t n = ht_reader_stack_depth(r, stack), got = 0, i = 0;
  if (n > max) n = max;
  uint32_t node = stack;
  for (; i < n && !got; i++, node = ht_reader_stack_parent(r, node)) {
    FrameC *f = pprof_frame(c, ht_reader_stack_frame(r, node));
    if (!f) return -1;
    if (f->nplumb < f->nlev) out[got++] = f->loc_trim;
  }
  if (!got) {  /* all plumbing: the stack as it is */
    for (i = 0, node = stack; i < n; i++, node = ht_reader_stack_parent(r, node)) {
      FrameC *f = pprof_frame(c, ht_reader_stack_frame(r, node));
      if (!f) return -1;
      out[got++] = f->loc_full;
    }
    return (int)got;
  }
  for (; i < n; i++, node = ht_reader_stack_parent(r, node)) {
    uint64_t id = c->node_loc ? c->node_loc[node] : 0;
    if (!id) {
      FrameC *f = pprof_frame(c, ht_reader_stack_frame(r, node));
      if (!f) return -1;
      id = f->loc_full;
      if (c->node_loc && id <= UINT32_MAX) c->node_loc[node] = (uint32_t)id;
    }
    out[got++] = id;
  }
  return (int)got;
}

/* Mappings of the tape's modules. */
static int pprof_mappings(AddCtx *c)
{
  HtPprof *p = c->p;
  const HtTally *t = c->src->t;
  c->map_of_mod = calloc(t->nmod ? t->nmod : 1, sizeof(uint64_t));
  if (!c->map_of_mod) return -1;
  for (uint32_t i = 0; i < t->nmod; i++) {
    if (pprof_grow(p, &p->map, p->nmap, &p->cmap, sizeof(*p->map))) return -1;
    Perftools__Profiles__Mapping *m = &p->map[p->nmap++];
    perftools__profiles__mapping__init(m);
    m->id = p->nmap;
    m->memory_start = t->mod[i].start;
    m->memory_limit = t->mod[i].limit;
    m->file_offset = 0;
    m->filename = pprof_str(p, t->mod[i].path);
    m->build_id = pprof_str(p, t->mod[i].build_id);
    m->has_functions = m->has_filenames = m->has_line_numbers = 1;
    m->has_inline_frames = 1;
    c->map_of_mod[i] = m->id;
  }
  return 0;
}

/* Add every (stack, thread) of one tape. */
int ht_pprof_add(HtPprof *p, const HtPprofSrc *src)
{
  AddCtx c = {.p = p, .src = src};
  const HtTally *t = src->t;
  const HtHeader *h = ht_reader_header(src->r);
  if (ht_map_init(&c.frame_of, 1024) || pprof_mappings(&c)) {
    ht_map_free(&c.frame_of);
    free(c.map_of_mod);
    return HEAPTAPE_E_NOMEM;
  }
  c.node_loc = calloc((size_t)ht_reader_stack_count(src->r) + 1, sizeof(uint32_t));
  int has_rt = 0;
  for (uint32_t i = 0; i < t->nent; i++) has_rt |= t->ent[i].rt;
  /* The labels' keys, in the string table before their values, as
  ** before (the writer looks them up again). */
  pprof_str(p, "thread");
  pprof_str(p, "tid");
  pprof_str(p, "domain");
  int64_t v_rt = pprof_str(p, "runtime"), v_nat = pprof_str(p, "native");
  uint64_t locs[256];
  /* Room for every sample at once (no copy at each doubling: 70k samples
  ** of cc1plus). */
  if (p->nsmp + t->nent > p->csmp) {
    PSample *v = ht_huge_realloc(p->smp, p->nsmp * sizeof(PSample),
                                 (p->nsmp + t->nent) * sizeof(PSample));
    if (!v) p->oom = 1;
    else {
      p->smp = v;
      p->csmp = p->nsmp + t->nent;
    }
  }
  size_t nids = p->nids;  /* and for their location ids: at most a frame each */
  for (uint32_t i = 0; i < t->nent; i++) {
    uint32_t d = ht_reader_stack_depth(src->r, t->ent[i].stack);
    nids += d < HT_COUNTOF(locs) ? d : HT_COUNTOF(locs);
  }
  if (nids > p->cids) {
    uint32_t *v = ht_huge_realloc(p->ids, p->nids * sizeof(uint32_t), nids * sizeof(uint32_t));
    if (!v) p->oom = 1;
    else {
      p->ids = v;
      p->cids = nids;
    }
  }
  for (uint32_t i = 0; i < t->nent && !p->oom; i++) {
    const HtTallyEnt *e = &t->ent[i];
    if (!e->allocs && !e->bytes && !e->inuse && !e->inuse_n) continue;
    int n = pprof_stack(&c, e->stack, locs, HT_COUNTOF(locs));
    if (n < 0 || pprof_grow(p, &p->smp, p->nsmp, &p->csmp, sizeof(PSample))) break;
    PSample *s = &p->smp[p->nsmp];
    memset(s, 0, sizeof(*s));
    if (p->nids + (size_t)n > p->cids) {
      size_t c = p->cids ? p->cids * 2 : 4096;
      while (c < p->nids + (size_t)n) c *= 2;
      uint32_t *v = realloc(p->ids, c * sizeof(uint32_t));
      if (!v) { p->oom = 1; break; }
      p->ids = v;
      p->cids = c;
    }
    p->nsmp++;
    for (int j = 0; j < n; j++) {
      if (locs[j] > UINT32_MAX) p->oom = 1;  /* 4 G locations: not in memory */
      p->ids[p->nids + (size_t)j] = (uint32_t)locs[j];
    }
    s->loc0 = p->nids;
    p->nids += (size_t)n;
    s->nlocs = (uint32_t)n;
    s->v[V_ALLOC_N] = (int64_t)e->allocs;
    s->v[V_ALLOC_B] = (int64_t)e->bytes;
    s->v[V_INUSE_N] = (int64_t)e->inuse_n;
    s->v[V_INUSE_B] = (int64_t)e->inuse;
    char tname[80];
    const char *nm = ht_tally_thread(t, e->tid);
    if (nm) snprintf(tname, sizeof(tname), "%s", nm);
    else snprintf(tname, sizeof(tname), "%" PRIu32, e->tid);
    s->thread = pprof_str(p, tname);
    s->tid = e->tid;
    s->domain = has_rt ? (e->rt ? v_rt : v_nat) : 0;
    p->tot.alloc_objects += e->allocs;
    p->tot.alloc_space += e->bytes;
    p->tot.inuse_objects += e->inuse_n;
    p->tot.inuse_space += e->inuse;
    p->tot.samples++;
  }
  if (src->time_ns && (!p->time_ns || src->time_ns < p->time_ns)) p->time_ns = src->time_ns;
  if (src->duration_ns > p->duration_ns) p->duration_ns = src->duration_ns;
  if (!p->period && h->sample) p->period = h->sample;
  ht_map_free(&c.frame_of);
  free(c.fc);
  free(c.map_of_mod);
  free(c.node_loc);
  return p->oom ? HEAPTAPE_E_NOMEM : 0;
}

/* Totals of what was added so far. */
void ht_pprof_totals(const HtPprof *p, HtPprofTotals *out)
{
  *out = p->tot;
}

/* -- Writing -------------------------------------------------------------- */

/* A gzip member deflated as its pieces come: the profile is never whole in
** memory (cc1plus's is 7 MB packed). */
typedef struct GzOut {
  z_stream z;
  FILE *f;
  int bad;                   /* zlib or write error */
  uint8_t out[65536];
} GzOut;

static int gz_open(GzOut *g, FILE *f)
{
  memset(&g->z, 0, sizeof(g->z));
  g->f = f;
  g->bad = 0;
  /* Level 1: three times faster than the default 6 (a third of pprof on a
  ** large tape), the file a fifth larger. */
  return deflateInit2(&g->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK ? 0 : -1;
}

/* Deflate buf[len] (flush: Z_NO_FLUSH, or Z_FINISH with nothing after). */
static void gz_put(GzOut *g, const uint8_t *buf, size_t len, int flush)
{
  if (g->bad) return;
  g->z.next_in = (Bytef *)buf;
  g->z.avail_in = (uInt)len;  /* pieces stay far below 4 GiB */
  int rc;
  do {
    g->z.next_out = g->out;
    g->z.avail_out = sizeof(g->out);
    rc = deflate(&g->z, flush);
    if (rc == Z_STREAM_ERROR) { g->bad = 1; return; }
    size_t have = sizeof(g->out) - g->z.avail_out;
    if (have && fwrite(g->out, 1, have, g->f) != have) { g->bad = 1; return; }
  } while (g->z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
}

/* End the member; 0 or -1. */
static int gz_close(GzOut *g)
{
  gz_put(g, NULL, 0, Z_FINISH);
  deflateEnd(&g->z);
  return g->bad ? -1 : 0;
}

/* A protobuf varint at b; returns its length. */
static size_t pb_varint(uint8_t *b, uint64_t v)
{
  size_t n = 0;
  for (; v >= 0x80; v >>= 7) b[n++] = (uint8_t)(v | 0x80);
  b[n++] = (uint8_t)v;
  return n;
}

/* Message m packed into *buf (grown as needed) and deflated; 0 or -1. */
static int gz_message(GzOut *g, const ProtobufCMessage *m, uint8_t **buf, size_t *cap,
                      uint8_t tag)
{
  size_t len = protobuf_c_message_get_packed_size(m), at = 0;
  if (len + 11 > *cap) {
    uint8_t *b = realloc(*buf, len + 11);
    if (!b) return -1;
    *buf = b;
    *cap = len + 11;
  }
  if (tag) {  /* as a field of the profile: its tag and length first */
    (*buf)[at++] = tag;
    at += pb_varint(*buf + at, len);
  }
  protobuf_c_message_pack(m, *buf + at);
  gz_put(g, *buf, at + len, Z_NO_FLUSH);
  return 0;
}

/* The samples, each packed as the profile's field 2 (repeated Sample):
** a profile's bytes are its fields' in turn, so this is what packing the
** whole profile would give. */
static int pprof_samples(HtPprof *p, GzOut *g, uint8_t **buf, size_t *cap)
{
  int64_t keys[3] = {pprof_str(p, "thread"), pprof_str(p, "tid"), pprof_str(p, "domain")};
  Perftools__Profiles__Label lab[3], *labp[3] = {&lab[0], &lab[1], &lab[2]};
  uint64_t *ids = NULL;
  size_t cids = 0;
  for (size_t i = 0; i < p->nsmp; i++) {
    const PSample *s = &p->smp[i];
    if (s->nlocs > cids) {
      uint64_t *v = realloc(ids, s->nlocs * sizeof(uint64_t));
      if (!v) { free(ids); return -1; }
      ids = v;
      cids = s->nlocs;
    }
    for (uint32_t j = 0; j < s->nlocs; j++) ids[j] = p->ids[s->loc0 + j];
    for (size_t j = 0; j < 3; j++) {
      perftools__profiles__label__init(&lab[j]);
      lab[j].key = keys[j];
    }
    lab[0].str = s->thread;
    lab[1].num = s->tid;
    lab[2].str = s->domain;
    Perftools__Profiles__Sample m;
    perftools__profiles__sample__init(&m);
    m.n_location_id = s->nlocs;
    m.location_id = ids;
    m.n_value = V_COUNT;
    m.value = (int64_t *)s->v;
    m.n_label = s->domain ? 3 : 2;
    m.label = labp;
    if (gz_message(g, &m.base, buf, cap, 0x12)) { free(ids); return -1; }
  }
  free(ids);
  return 0;
}

/* Serialise, gzip and write to path. */
int ht_pprof_write(HtPprof *p, const char *path, char *err, size_t errlen)
{
  static const char *const types[V_COUNT][2] = {
    {"alloc_objects", "count"}, {"alloc_space", "bytes"},
    {"inuse_objects", "count"}, {"inuse_space", "bytes"},
  };
  Perftools__Profiles__Profile pr;
  perftools__profiles__profile__init(&pr);
  Perftools__Profiles__ValueType vt[V_COUNT], *vtp[V_COUNT], period;
  for (int i = 0; i < V_COUNT; i++) {
    perftools__profiles__value_type__init(&vt[i]);
    vt[i].type = pprof_str(p, types[i][0]);
    vt[i].unit = pprof_str(p, types[i][1]);
    vtp[i] = &vt[i];
  }
  perftools__profiles__value_type__init(&period);
  period.type = pprof_str(p, "space");
  period.unit = pprof_str(p, "bytes");
  if (p->oom) { snprintf(err, errlen, "%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM)); return -1; }

  Perftools__Profiles__Location *loc = calloc(p->nloc + 1, sizeof(*loc));
  Perftools__Profiles__Location **locp = calloc(p->nloc + 1, sizeof(*locp));
  Perftools__Profiles__Line **linep = NULL;
  Perftools__Profiles__Function **fnp = calloc(p->nfn + 1, sizeof(*fnp));
  Perftools__Profiles__Mapping **mapp = calloc(p->nmap + 1, sizeof(*mapp));
  size_t nlines = 0;
  for (size_t i = 0; i < p->nloc; i++) nlines += p->loc[i].nline;
  linep = calloc(nlines + 1, sizeof(*linep));
  uint8_t *buf = NULL;
  size_t cap = 0;
  int rc = -1;
  if (!loc || !locp || !linep || !fnp || !mapp) {
    snprintf(err, errlen, "%s: %s", path, heaptape_strerror(HEAPTAPE_E_NOMEM));
    goto done;
  }
  for (size_t i = 0, li = 0; i < p->nloc; i++) {
    perftools__profiles__location__init(&loc[i]);
    loc[i].id = i + 1;
    loc[i].mapping_id = p->loc[i].mapping;
    loc[i].address = p->loc[i].addr;
    loc[i].n_line = p->loc[i].nline;
    loc[i].line = &linep[li];
    for (size_t j = 0; j < p->loc[i].nline; j++) linep[li++] = &p->loc[i].line[j];
    locp[i] = &loc[i];
  }
  for (size_t i = 0; i < p->nfn; i++) fnp[i] = &p->fn[i];
  for (size_t i = 0; i < p->nmap; i++) mapp[i] = &p->map[i];

  HtOutFile of;
  FILE *f = ht_outfile_open(&of, path, "wb");
  if (!f) {
    snprintf(err, errlen, "%s: cannot write: %m", path);
    goto done;
  }
  GzOut *g = malloc(sizeof(*g));
  int bad = !g || gz_open(g, f);
  if (!bad) {
    /* Field 1 (sample_type), field 2 (the samples), then the rest, in the
    ** order protobuf-c packs a whole profile. */
    pr.n_sample_type = V_COUNT;
    pr.sample_type = vtp;
    bad |= gz_message(g, &pr.base, &buf, &cap, 0);
    pr.n_sample_type = 0;
    pr.sample_type = NULL;
    bad |= pprof_samples(p, g, &buf, &cap);
    pr.n_mapping = p->nmap;
    pr.mapping = mapp;
    pr.n_location = p->nloc;
    pr.location = locp;
    pr.n_function = p->nfn;
    pr.function = fnp;
    pr.n_string_table = p->str.n;
    pr.string_table = p->str.str;
    pr.time_nanos = (int64_t)p->time_ns;
    pr.duration_nanos = (int64_t)p->duration_ns;
    pr.period_type = &period;
    pr.period = p->period ? (int64_t)p->period : 1;
    pr.n_comment = p->ncomment;
    pr.comment = p->comment;
    pr.default_sample_type = vt[V_INUSE_B].type;
    bad |= gz_message(g, &pr.base, &buf, &cap, 0);
    bad |= gz_close(g);
  }
  free(g);
  if (ht_outfile_close(&of, path, bad ? -1 : 0))
    snprintf(err, errlen, "%s: cannot write: %m", path);
  else
    rc = 0;
done:
  free(buf); free(loc); free(locp); free(linep); free(fnp); free(mapp);
  return rc;
}
