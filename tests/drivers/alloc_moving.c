/* heaptape tests -- a handle-based replay driver over glibc malloc that moves
** every unlocked block each Nth allocation (--driver alloc_moving.so:N[:lose]).
** With "lose" a move drops the contents, which the runner must report as
** corrupt. Version 1 on purpose: the runner still takes version 1 drivers. */
#include <stdlib.h>
#include <string.h>

#include "heaptape_driver.h"

typedef struct Blk {
  unsigned char *p;          /* the block (NULL: free entry) */
  size_t size;               /* bytes */
  unsigned locks;            /* lock() calls not yet unlocked */
} Blk;

typedef struct Mov {
  unsigned long every;       /* move everything every Nth allocation */
  int lose;                  /* moves lose the contents */
  unsigned long n;           /* allocations */
  Blk *b;                    /* handle - 1 -> block */
  size_t nb, cap;            /* entries used, allocated */
} Mov;

static Mov mov_st;

/* Parse N[:lose]. */
static int mov_init(void **st, const char *args)
{
  char *end;
  mov_st.every = strtoul(args, &end, 10);
  mov_st.lose = !strcmp(end, ":lose");
  if (!mov_st.every) mov_st.every = 100;
  *st = &mov_st;
  return 0;
}

/* Move every unlocked block to new memory. */
static void mov_all(Mov *m)
{
  for (size_t i = 0; i < m->nb; i++) {
    Blk *b = &m->b[i];
    if (!b->p || b->locks) continue;
    unsigned char *q = malloc(b->size ? b->size : 1);
    if (!q) continue;
    if (m->lose) memset(q, 0, b->size);
    else memcpy(q, b->p, b->size);
    free(b->p);
    b->p = q;
  }
}

/* A new block; every Nth allocation first moves all the others. */
static void *mov_malloc(void *st, size_t size, uint64_t handle)
{
  Mov *m = st;
  (void)handle;
  if (++m->n % m->every == 0) mov_all(m);
  if (m->nb == m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 1024;
    Blk *t = realloc(m->b, cap * sizeof(*t));
    if (!t) return NULL;
    m->b = t;
    m->cap = cap;
  }
  unsigned char *p = malloc(size ? size : 1);
  if (!p) return NULL;
  m->b[m->nb] = (Blk){.p = p, .size = size};
  return (void *)(uintptr_t)++m->nb;
}

/* Release a block (its entry is not reused: handles stay unique). */
static void mov_free(void *st, void *h, size_t size, uint64_t handle)
{
  Mov *m = st;
  (void)size; (void)handle;
  Blk *b = &m->b[(uintptr_t)h - 1];
  free(b->p);
  b->p = NULL;
}

/* Pin and address. */
static void *mov_lock(void *st, void *h)
{
  Blk *b = &((Mov *)st)->b[(uintptr_t)h - 1];
  b->locks++;
  return b->p;
}

/* Unpin. */
static void mov_unlock(void *st, void *h)
{
  Blk *b = &((Mov *)st)->b[(uintptr_t)h - 1];
  if (b->locks) b->locks--;
}

static const heaptape_driver mov_driver = {
  .version = 1, .name = "moving", .init = mov_init,
  .malloc = mov_malloc, .free = mov_free, .lock = mov_lock, .unlock = mov_unlock,
};

/* The driver table. */
const heaptape_driver *heaptape_driver_get(void)
{
  return &mov_driver;
}
