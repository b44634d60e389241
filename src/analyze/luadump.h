/* heaptape -- a Lua universe dump (written by the Lua module's heaptape.dump,
** format in docs/LUA.md) read into objects and links, and the bytes each
** object keeps alive alone (dominators). */
#ifndef HT_LUADUMP_H
#define HT_LUADUMP_H

#include <stddef.h>
#include <stdint.h>
#include "../base/ht_def.h"

/* One reference of an object. */
typedef struct HtDumpLink {
  char sect;               /* 'A' array, 'H' hash, 'R' other */
  char *text;              /* the link as printed */
  uint64_t target;         /* address of the referenced object, 0 = none */
} HtDumpLink;

/* One object of the dump. */
typedef struct HtDumpObj {
  char type[16];           /* LJ_T* name */
  uint64_t addr;           /* address */
  uint64_t size;           /* bytes */
  uint64_t mt;             /* metatable address, 0 = none */
  char preview[48];        /* string contents (strings only) */
  HtDumpLink *link;             /* references */
  uint32_t nlink;          /* used */
  size_t clink;            /* allocated */
  uint32_t *succ;          /* referenced object indexes + 1 (computed) */
  uint32_t nsucc;          /* used */
  uint32_t *pred;          /* referencing object indexes + 1 (computed) */
  uint32_t npred;          /* used */
  size_t cpred;            /* allocated */
  uint32_t rpo;            /* reverse postorder number, 0 = unreachable */
  uint32_t idom;           /* immediate dominator index + 1 (0 = root) */
  uint64_t retained;       /* bytes this object keeps alive alone */
} HtDumpObj;

/* The whole dump. */
typedef struct HtLuaDump HtLuaDump;
struct HtLuaDump {
  HtDumpObj *o;                 /* objects in file order */
  uint32_t n;              /* used */
  size_t c;                /* allocated */
  uint32_t *hash;          /* address -> index + 1 */
  uint32_t mask;           /* hash slots - 1 */
  char vm[32];             /* VM name from the header */
  int truncated;           /* no end record */
};

/* Read the dump at path into d; 0, or -1 with why in err (d then holds
** what was read: free it). d->truncated: the end record is missing. */
int ht_luadump_read(HtLuaDump *d, const char *path, char *err, size_t errlen) HT_HIDDEN;
/* Compute every object's retained bytes (roots: the first two objects);
** 0, or -1 when out of memory (the figures are then incomplete). */
int ht_luadump_retained(HtLuaDump *d) HT_HIDDEN;
/* Release what d owns. */
void ht_luadump_free(HtLuaDump *d) HT_HIDDEN;

#endif
