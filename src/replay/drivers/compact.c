/* heaptape -- a handle-based compacting allocator, as a replay driver: handles
** index a table of block addresses, blocks lie in address order in one
** region, and unlocked blocks slide down over the holes when enough of the
** region is holes; a lock pins a block where it is. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "heaptape_driver.h"

/*
** The heap is one reserved region [base, end): blocks from base to top, each
** a 16-byte header and the payload rounded up to 16 bytes; new blocks go at
** top (a bump pointer). A free turns its block into a hole (a header with
** no handle); freeing the block just below top lowers top instead.
**
** Compaction walks the blocks in address order and slides every unlocked
** live block down to the lowest free address, updating its table entry; a
** locked block stays, and the gap below it becomes a "gap": a hole the
** slide cannot close. A block that has to move goes into a gap it fits if
** there is one (the gaps met so far in the walk, by size class), else it
** slides; and later allocations are carved out of the gaps before the top.
** Without that, every gap below a pinned block stayed empty until a later
** compaction found the block unlocked (the locking models' peaks doubled
** and tripled). The pages above the new top go back to the kernel
** (MADV_DONTNEED), so RSS follows.
**
** When: before an allocation, if the holes a compaction could reclaim
** (holes - stuck) are more than threshold % of the heap (top - base) and at
** least MIN_RECLAIM bytes; and from oom() when the region is full.
**
** Handles: the pointer the runner gets is table index + 1, never an address;
** lock(h) returns the payload's address and pins the block until unlock(h)
** (locks nest). Alignment beyond 16 is not kept (blocks move), so there is
** no aligned(): the runner falls back to malloc and does not check the
** alignment of a handle-based driver's blocks. args: "threshold=PCT,heap=BYTES"
** (defaults 25 and 4 GiB of address space, reserved, not committed).
*/

#define ALIGN 16
#define MIN_RECLAIM (64u << 10)     /* never compact for less than 64 KiB */
#define DEF_THRESHOLD 25            /* % of the heap in reclaimable holes */
#define DEF_HEAP (4ull << 30)       /* address space reserved */
#define PAGE 4096
#define CLASSES 64                  /* gap size classes: floor(log2(bytes)) */

typedef struct Hdr {
  uint32_t idx;              /* table index + 1 of the block's entry; 0 = hole */
  uint32_t pad;              /* zero */
  uint64_t size;             /* bytes of the block, this header included */
} Hdr;

typedef struct Entry {
  unsigned char *p;          /* the block's header; NULL when the entry is free */
  uint32_t locks;            /* lock() calls not yet unlocked */
  uint32_t next;             /* free entry: index + 1 of the next free one */
} Entry;

/* A gap: a hole below a pinned block, left by a compaction; blocks are
** carved from its start. */
typedef struct Gap {
  unsigned char *p;          /* its first byte (a hole header) */
  uint64_t size;             /* its bytes (0: used up) */
} Gap;

/* The gaps of a size class, as a stack of indexes into Heap.gap; entries
** of gaps that shrank into a lower class are stale, dropped when met. */
typedef struct GapList {
  uint32_t *ix;
  uint32_t n, cap;
} GapList;

typedef struct Heap {
  unsigned char *base;       /* start of the region */
  unsigned char *top;        /* first byte above the last block */
  unsigned char *end;        /* end of the reservation */
  size_t reserved;           /* bytes reserved */
  Entry *tab;                /* handle table */
  uint32_t ntab, captab;     /* entries used, allocated */
  uint32_t freeent;          /* index + 1 of the first free entry */
  uint64_t holes;            /* hole bytes below top */
  uint64_t stuck;            /* of which the last compaction could not remove
                             ** (the gaps' bytes not carved since) */
  Gap *gap;                  /* the gaps of the last compaction */
  uint32_t ngap, capgap;
  GapList cls[CLASSES];      /* gap indexes by size class */
  uint64_t clsmask;          /* bit k: cls[k] may have a gap */
  unsigned threshold;        /* % of the heap in reclaimable holes that compacts */
  uint64_t compactions;      /* compaction passes */
  uint64_t moved;            /* bytes moved by them */
} Heap;

/* -- Gaps ------------------------------------------------------------------ */

static unsigned size_class(uint64_t n)
{
  return 63u - (unsigned)__builtin_clzll(n);
}

/* Room for one more element of sz bytes in *arr (n used of *cap; first
** the first capacity): 0, or -1 when out of memory (nothing changed). The
** driver is a standalone library: no heaptape code links in. */
static int grow_one(void *arr, uint32_t n, uint32_t *cap, size_t sz, uint32_t first)
{
  if (n < *cap) return 0;
  uint32_t c = *cap ? *cap * 2 : first;
  void *p = realloc(*(void **)arr, (size_t)c * sz);
  if (!p) return -1;
  *(void **)arr = p;
  *cap = c;
  return 0;
}

/* Put gap i on the list of its size class (a failed allocation only loses
** the gap for reuse: it stays a stuck hole). */
static void gap_list(Heap *H, uint32_t i)
{
  GapList *l = &H->cls[size_class(H->gap[i].size)];
  if (grow_one(&l->ix, l->n, &l->cap, sizeof(*l->ix), 64)) return;
  l->ix[l->n++] = i;
  H->clsmask |= 1ull << size_class(H->gap[i].size);
}

/* Forget every gap (a compaction finds them again). */
static void gaps_reset(Heap *H)
{
  H->ngap = 0;
  for (unsigned k = 0; k < CLASSES; k++) H->cls[k].n = 0;
  H->clsmask = 0;
}

/* A new gap of size bytes at p (a hole header is already there). */
static void gap_add(Heap *H, unsigned char *p, uint64_t size)
{
  if (grow_one(&H->gap, H->ngap, &H->capgap, sizeof(*H->gap), 256)) return;
  H->gap[H->ngap] = (Gap){.p = p, .size = size};
  gap_list(H, H->ngap++);
}

/* Carve need bytes from the start of a gap that holds them: their address,
** or NULL. The smallest size class whose every gap fits is searched, the
** gap last listed there taken (no scan: a class is a stack). */
static unsigned char *gap_take(Heap *H, uint64_t need)
{
  unsigned k0 = need <= 1 ? 0 : 64u - (unsigned)__builtin_clzll(need - 1);
  if (k0 >= CLASSES) return NULL;
  for (uint64_t m = H->clsmask & (~0ull << k0); m; m &= m - 1) {
    unsigned k = (unsigned)__builtin_ctzll(m);
    GapList *l = &H->cls[k];
    while (l->n) {
      Gap *g = &H->gap[l->ix[l->n - 1]];
      if (g->size < need || size_class(g->size) != k) { l->n--; continue; }  /* stale */
      unsigned char *p = g->p;
      g->p += need;
      g->size -= need;
      if (g->size) {
        *(Hdr *)g->p = (Hdr){.idx = 0, .size = g->size};
        if (size_class(g->size) != k) { l->n--; gap_list(H, (uint32_t)(g - H->gap)); }
      } else {
        l->n--;
      }
      H->holes -= need;
      H->stuck -= need;
      return p;
    }
    H->clsmask &= ~(1ull << k);
  }
  return NULL;
}

/* -- Compaction ------------------------------------------------------------ */

/* Slide every unlocked block down over the holes, or into a gap below a
** pinned block met before it; returns the bytes reclaimed. */
static uint64_t compact_run(Heap *H)
{
  unsigned char *dst = H->base, *q = H->base, *old_top = H->top;
  gaps_reset(H);
  H->holes -= H->stuck;  /* the walk finds the old gaps again */
  H->stuck = 0;
  while (q < H->top) {
    Hdr *b = (Hdr *)q;
    uint64_t sz = b->size;
    if (b->idx) {
      Entry *e = &H->tab[b->idx - 1];
      if (e->locks) {  /* pinned: the space below it is a gap */
        if (dst < q) {
          *(Hdr *)dst = (Hdr){.idx = 0, .size = (uint64_t)(q - dst)};
          H->holes += (uint64_t)(q - dst);
          H->stuck += (uint64_t)(q - dst);
          gap_add(H, dst, (uint64_t)(q - dst));
        }
        dst = q + sz;
      } else if (dst != q) {  /* it moves: into a gap it fits, else down */
        unsigned char *to = gap_take(H, sz);
        memmove(to ? to : dst, q, sz);
        e->p = to ? to : dst;
        H->moved += sz;
        if (!to) dst += sz;
      } else {
        dst += sz;
      }
    }
    q += sz;
  }
  uint64_t reclaimed = (uint64_t)(old_top - dst);  /* the old holes less the new gaps */
  H->top = dst;
  H->holes = H->stuck;
  H->compactions++;
  unsigned char *from = H->base + (((size_t)(dst - H->base) + PAGE - 1) & ~(size_t)(PAGE - 1));
  if (old_top > from) madvise(from, (size_t)(old_top - from), MADV_DONTNEED);
  return reclaimed;
}

/* Compact if enough of the heap is reclaimable holes. */
static void compact_maybe(Heap *H)
{
  uint64_t can = H->holes - H->stuck, span = (uint64_t)(H->top - H->base);
  if (can >= MIN_RECLAIM && can * 100 > (uint64_t)H->threshold * span) compact_run(H);
}

/* -- Blocks and handles ----------------------------------------------------- */

/* A free table entry's index, or UINT32_MAX when out of memory. */
static uint32_t compact_entry(Heap *H)
{
  if (H->freeent) {
    uint32_t i = H->freeent - 1;
    H->freeent = H->tab[i].next;
    return i;
  }
  if (grow_one(&H->tab, H->ntab, &H->captab, sizeof(*H->tab), 4096)) return UINT32_MAX;
  return H->ntab++;
}

/* A new block of size bytes at top: its handle, or NULL when the region is full. */
static void *compact_malloc(void *st, size_t size, uint64_t handle)
{
  (void)handle;
  Heap *H = st;
  compact_maybe(H);
  uint64_t need = (sizeof(Hdr) + (uint64_t)size + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
  if (size > H->reserved || need > (uint64_t)(H->end - H->top)) return NULL;
  uint32_t i = compact_entry(H);
  if (i == UINT32_MAX) return NULL;
  unsigned char *p = H->ngap ? gap_take(H, need) : NULL;
  if (!p) {
    p = H->top;
    H->top += need;
  }
  *(Hdr *)p = (Hdr){.idx = i + 1, .size = need};
  H->tab[i] = (Entry){.p = p};
  return (void *)(uintptr_t)(i + 1);
}

/* The table entry of handle h. */
static Entry *compact_get(Heap *H, void *h)
{
  return &H->tab[(uintptr_t)h - 1];
}

/* Free a block: a hole, or a lower top if it was the last one. */
static void compact_free(void *st, void *h, size_t size, uint64_t handle)
{
  (void)size; (void)handle;
  Heap *H = st;
  uint32_t i = (uint32_t)((uintptr_t)h - 1);
  Entry *e = compact_get(H, h);
  Hdr *b = (Hdr *)e->p;
  if (e->p + b->size == H->top) H->top = e->p;
  else { b->idx = 0; H->holes += b->size; }
  *e = (Entry){.p = NULL, .next = H->freeent};
  H->freeent = i + 1;
}

/* Resize: in place when the block shrinks (the rest becomes a hole) or is
** the last one, else a new block, copied. */
static void *compact_realloc(void *st, void *h, size_t old_size, size_t size, uint64_t handle)
{
  Heap *H = st;
  Entry *e = compact_get(H, h);
  Hdr *b = (Hdr *)e->p;
  uint64_t need = (sizeof(Hdr) + (uint64_t)size + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
  if (e->p + b->size == H->top && need <= (uint64_t)(H->end - e->p)) {
    H->top = e->p + need;
    b->size = need;
    return h;
  }
  if (need <= b->size) {
    if (need < b->size) {
      *(Hdr *)(e->p + need) = (Hdr){.idx = 0, .size = b->size - need};
      H->holes += b->size - need;
      b->size = need;
    }
    return h;
  }
  void *n = compact_malloc(st, size, handle);  /* may compact: e->p may move */
  if (!n) return NULL;
  memcpy(compact_get(H, n)->p + sizeof(Hdr), compact_get(H, h)->p + sizeof(Hdr),
         old_size < size ? old_size : size);
  compact_free(st, h, old_size, handle);
  return n;
}

/* Pin a block and return its payload's address. */
static void *compact_lock(void *st, void *h)
{
  Entry *e = compact_get(st, h);
  e->locks++;
  return e->p + sizeof(Hdr);
}

/* Unpin a block (one lock). */
static void compact_unlock(void *st, void *h)
{
  Entry *e = compact_get(st, h);
  if (e->locks) e->locks--;
}

/* Out of room: compact whatever can move; retry if that made room. */
static int compact_oom(void *st, size_t size)
{
  (void)size;
  Heap *H = st;
  return H->holes > H->stuck && compact_run(H) > 0;
}

/* -- Set-up and figures ----------------------------------------------------- */

/* Parse "threshold=PCT,heap=BYTES" and reserve the region. */
static int compact_init(void **state, const char *args)
{
  Heap *H = calloc(1, sizeof(*H));
  if (!H) return -1;
  H->threshold = DEF_THRESHOLD;
  H->reserved = DEF_HEAP;
  for (const char *a = args; a && *a;) {
    char *endp;
    if (!strncmp(a, "threshold=", 10)) {
      unsigned long v = strtoul(a + 10, &endp, 10);
      if (endp == a + 10 || v > 100) { free(H); return -1; }
      H->threshold = (unsigned)v;
    } else if (!strncmp(a, "heap=", 5)) {
      unsigned long long v = strtoull(a + 5, &endp, 10);
      if (endp == a + 5) { free(H); return -1; }
      if (*endp == 'K' || *endp == 'k') { v <<= 10; endp++; }
      else if (*endp == 'M' || *endp == 'm') { v <<= 20; endp++; }
      else if (*endp == 'G' || *endp == 'g') { v <<= 30; endp++; }
      H->reserved = (size_t)v;
    } else { free(H); return -1; }
    a = *endp == ',' ? endp + 1 : endp;
    if (*endp && *endp != ',') { free(H); return -1; }
  }
  void *p = mmap(NULL, H->reserved, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) { free(H); return -1; }
  H->base = H->top = p;
  H->end = H->base + H->reserved;
  *state = H;
  return 0;
}

/* Give the region and the table back. */
static void compact_destroy(void *st)
{
  Heap *H = st;
  munmap(H->base, H->reserved);
  free(H->tab);
  free(H->gap);
  for (unsigned k = 0; k < CLASSES; k++) free(H->cls[k].ix);
  free(H);
}

/* In use: the heap minus its holes; mapped: the heap (base to top). */
static int compact_stats(void *st, heaptape_driver_stats *s)
{
  Heap *H = st;
  s->mapped = (uint64_t)(H->top - H->base);
  s->in_use = s->mapped - H->holes;
  s->highest = (uint64_t)(uintptr_t)H->top;
  s->compactions = H->compactions;
  s->moved = H->moved;
  return 0;
}

static const heaptape_driver compact_driver = {
  .version = HEAPTAPE_DRIVER_VERSION, .name = "compact",
  .init = compact_init, .destroy = compact_destroy,
  .malloc = compact_malloc, .realloc = compact_realloc, .free = compact_free,
  .oom = compact_oom, .lock = compact_lock, .unlock = compact_unlock, .stats = compact_stats,
};

/* The driver's table. */
const heaptape_driver *heaptape_driver_get(void)
{
  return &compact_driver;
}
