/* heaptape -- the heap map's layout: noted by the sealer, encoded as the
** AGG field HT_A_LAYOUT, loaded by `heaptape heapmap` (docs/FORMAT.md). */
#include <stdlib.h>
#include <string.h>

#include "maplayout.h"
#include "../base/grow.h"
#include "../base/varint.h"
#include "../format/format.h"
#include "../../include/heaptape.h"

/* -- Kept while sealing --------------------------------------------------- */

int ht_layoutw_init(HtLayoutW *l)
{
  memset(l, 0, sizeof(*l));
  l->last = UINT64_MAX;
  return ht_map_init(&l->g, 256);
}

void ht_layoutw_free(HtLayoutW *l)
{
  ht_map_free(&l->g);
  free(l->ended);
  l->ended = NULL;
}

/* Note that the block of allocation index i ended. */
static void layoutw_ended(HtLayoutW *l, uint64_t i)
{
  if (i / 64 >= l->nended) {
    size_t cap = l->nended;
    if (ht_grow(&l->ended, &cap, (size_t)(i / 64) + 1, sizeof(uint64_t))) { l->oom = 1; return; }
    memset(l->ended + l->nended, 0, (cap - l->nended) * sizeof(uint64_t));
    l->nended = cap;
  }
  l->ended[i / 64] |= 1ull << (i % 64);
}

/* Whether the block of allocation index i ended. */
static int layoutw_is_ended(const HtLayoutW *l, uint64_t i)
{
  return i / 64 < l->nended && (l->ended[i / 64] >> (i % 64) & 1);
}

void ht_layoutw_res(HtLayoutW *l, const HtRes *res)
{
  const HtEvent *ev = res->ev;
  if (ev->type == HT_EV_FREE && res->known) layoutw_ended(l, res->blk.index);
  if (ev->type != HT_EV_ALLOC) return;
  if (res->dup) layoutw_ended(l, res->old.index);
  l->nallocs = res->blk.index + 1;
  uint64_t last = (ev->addr + (ev->size ? ev->size - 1 : 0)) >> HT_GRAN_SHIFT;
  for (uint64_t k = ev->addr >> HT_GRAN_SHIFT; k <= last && !l->oom; k++) {
    if (k == l->last) continue;
    if (!ht_map_get(&l->g, k) && ht_map_put(&l->g, k, 1)) l->oom = 1;
    l->last = k;
  }
}

static int u64_cmp(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Append the rising values v as a count and differences. */
static uint8_t *put_rising(uint8_t *p, const uint64_t *v, size_t n)
{
  p = ht_wuleb128(p, n);
  for (size_t i = 0; i < n; i++) p = ht_wuleb128(p, v[i] - (i ? v[i - 1] : 0));
  return p;
}

int ht_layoutw_encode(HtLayoutW *l, uint8_t **out, size_t *len)
{
  size_t ng = l->g.count, nl = 0, it = 0, n = 0;
  for (uint64_t i = 0; i < l->nallocs; i++) nl += !layoutw_is_ended(l, i);
  uint64_t *g = malloc((ng ? ng : 1) * sizeof(uint64_t));
  uint64_t *never = malloc((nl ? nl : 1) * sizeof(uint64_t));
  uint8_t *p = malloc(10 * (ng + nl + 2));
  if (l->oom || !g || !never || !p) {
    free(g); free(never); free(p);
    return -1;
  }
  uint64_t k, v;
  while (ht_map_next(&l->g, &it, &k, &v)) g[n++] = k;
  qsort(g, n, sizeof(uint64_t), u64_cmp);
  size_t nn = 0;
  for (uint64_t i = 0; i < l->nallocs; i++)
    if (!layoutw_is_ended(l, i)) never[nn++] = i;
  uint8_t *e = put_rising(put_rising(p, g, n), never, nn);
  free(g);
  free(never);
  *out = p;
  *len = (size_t)(e - p);
  return 0;
}

/* -- Read by the heap map ----------------------------------------------- */

/* The field's payload in the section [p, end), or NULL. */
static const uint8_t *layout_field(const uint8_t *p, const uint8_t *end, size_t *n)
{
  while (p < end) {
    uint64_t tag, len;
    if (ht_ruleb128(&p, end, &tag) || ht_ruleb128(&p, end, &len) ||
        len > (uint64_t)(end - p))
      return NULL;
    if (tag == HT_A_LAYOUT) { *n = (size_t)len; return p; }
    p += len;
  }
  return NULL;
}

/* The next never-freed index into l->next (UINT64_MAX after the last): 0,
** or -1 when the field is malformed. */
static int layout_step(HtLayout *l)
{
  uint64_t d;
  if (!l->left) { l->next = UINT64_MAX; return 0; }
  if (ht_ruleb128(&l->np, l->ne, &d)) return -1;
  uint64_t first = l->next == UINT64_MAX;
  if (!first && (!d || l->next + d < l->next)) return -1;  /* strictly rising */
  l->next = first ? d : l->next + d;
  l->left--;
  return 0;
}

int ht_layout_load(HtReader *r, HtLayout *l)
{
  memset(l, 0, sizeof(*l));
  l->next = UINT64_MAX;
  size_t len, n;
  const uint8_t *sec;
  if (!ht_reader_sealed(r) || ht_reader_header(r)->version < HT_VERSION_SEALED_LAYOUT ||
      !ht_reader_sealed_ops(r, &l->nops) || !(sec = ht_reader_agg_snaps(r, &len)))
    return 0;
  const uint8_t *p = layout_field(sec, sec + len, &n);
  if (!p) return 0;
  const uint8_t *end = p + n;
  uint64_t ng, v, prev = 0;
  if (ht_ruleb128(&p, end, &ng) || ng > (uint64_t)(end - p)) return 0;
  if (!(l->gran = malloc((ng ? ng : 1) * sizeof(uint64_t)))) return HEAPTAPE_E_NOMEM;
  for (; l->ngran < ng; l->ngran++) {
    if (ht_ruleb128(&p, end, &v) || (l->ngran && !v) || prev + v < prev) goto bad;
    l->gran[l->ngran] = prev += v;
  }
  if (ht_ruleb128(&p, end, &l->left) || l->left > (uint64_t)(end - p)) goto bad;
  if (!(l->own = malloc(end > p ? (size_t)(end - p) : 1))) {
    ht_layout_free(l);
    return HEAPTAPE_E_NOMEM;
  }
  if (end > p) memcpy(l->own, p, (size_t)(end - p));
  l->np = l->own;
  l->ne = l->own + (end - p);
  HtLayout walk = *l;  /* the whole list checked now, taken as drawing goes */
  while (walk.left)
    if (layout_step(&walk)) goto bad;
  if (layout_step(l)) goto bad;
  return 1;
bad:
  ht_layout_free(l);
  return 0;
}

int ht_layout_never(HtLayout *l, uint64_t i)
{
  while (l->next < i && !layout_step(l)) {}  /* (checked at load: never fails) */
  return l->next == i;
}

void ht_layout_free(HtLayout *l)
{
  free(l->gran);
  free(l->own);
  l->gran = NULL;
  l->own = NULL;
  l->ngran = 0;
}
