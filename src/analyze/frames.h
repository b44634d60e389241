/* heaptape -- frames as the reports show them: names of native addresses and
** runtime locations, and which frames are allocation plumbing to look past. */
#ifndef HT_FRAMES_H
#define HT_FRAMES_H

#include "../format/reader.h"

/* One printable level of a frame (a native frame has one per inline level). */
typedef struct HtFrameInfo {
  uint64_t frame;            /* frame value (ip << 1, or loc id << 1 | 1) */
  int is_loc;                /* a runtime location */
  unsigned lkind;            /* HT_L_* of a runtime location */
  uint64_t ip;               /* native address, or location id */
  const char *func;          /* function or location name, or NULL */
  const char *file;          /* source file or chunk, or NULL */
  uint64_t line;             /* line, 0 if unknown */
  uint64_t aux;              /* location aux (trace number, C address) */
  const char *module;        /* module containing ip, or NULL */
  uint64_t off;              /* offset of ip in module */
  int inlined;               /* not the outermost level of its frame */
  unsigned level;            /* its place in the frame's inline chain (0 innermost) */
  int known;                 /* the tape names it (symbol or declared loc) */
} HtFrameInfo;

/* Levels of a frame, innermost first, into out[max]; returns how many (>= 1). */
size_t ht_frames_info(const HtReader *r, uint64_t frame, HtFrameInfo *out,
                      size_t max) HT_HIDDEN;
/* Spread out[0] (a native frame) over n levels named by sym[0..n-1],
** innermost first: the shape ht_frames_info gives a symbolised frame. */
void ht_frames_fill(HtFrameInfo *out, const HtSymbol *sym, size_t n) HT_HIDDEN;
/* Display name of a level: `func file:line`, `@chunk:line`, `INTERNAL`,
** `TRACE [N] started at chunk:line`, `0x... (module+0x...)`. Returns length. */
size_t ht_frames_format(const HtFrameInfo *fi, char *buf, size_t len) HT_HIDDEN;
/* A key of a level for caches of its name (equal keys, equal levels): its
** frame and place in the frame's inline chain. Returns 0 when it has none. */
int ht_frames_level_key(const HtFrameInfo *fi, uint64_t *key) HT_HIDDEN;
/* Whether a level is plumbing: heaptape's own code, an allocator entry point
** (malloc & co., operator new/delete), C++ standard-library code (namespace
** std or __gnu_cxx inside libstdc++'s headers or libstdc++.so: allocators,
** vector and string growth) or matches a wrapper pattern. */
int ht_frames_plumbing(const HtFrameInfo *fi, const char *const *wrappers,
                       size_t nwrappers) HT_HIDDEN;
/* Levels of a stack as every list shows them, innermost first: the levels
** of its frames with the plumbing at the inner end dropped (every frame's
** innermost level when all are plumbing). Fills out[max]; returns how many
** levels the stack has (more than max when cut). */
size_t ht_frames_levels(const HtReader *r, uint32_t stack, const char *const *wrappers,
                        size_t nwrappers, HtFrameInfo *out, size_t max) HT_HIDDEN;
/* The same, for callers naming many stacks: below (zeroed, one entry per
** stack node, ht_reader_stack_count + 1) memoises the levels of a node and
** its callers, so the levels past out[max] are counted once a node. */
size_t ht_frames_levels_counted(const HtReader *r, uint32_t stack, const char *const *wrappers,
                                size_t nwrappers, HtFrameInfo *out, size_t max,
                                uint32_t *below) HT_HIDDEN;
/* The site key of a stack, by which every list merges its rows: the display
** name (ht_frames_format) of its first level (ht_frames_levels) --
** function and file:line of the first frame that is not plumbing; the
** innermost frame's name when all are plumbing; "(no stack)" for the
** empty stack. The one way every list names a site. Into buf[len]; returns its length. *frame (if not
** NULL) gets the frame value the name comes from. */
size_t ht_frames_site_name(const HtReader *r, uint32_t stack,
                           const char *const *wrappers, size_t nwrappers,
                           char *buf, size_t len, uint64_t *frame) HT_HIDDEN;

/* Levels of stack node `node` and all its callers, memoised in below as
** ht_frames_levels_counted keeps it (the stack shorter than 256 frames). */
size_t ht_frames_below(const HtReader *r, uint32_t node, uint32_t *below) HT_HIDDEN;
/* The same from level `level` of node `node` outward, when the levels before
** it are the plumbing ht_frames_levels drops (the stack shorter than 256
** frames): the levels every list shows of the stacks through that node. */
size_t ht_frames_levels_at(const HtReader *r, uint32_t node, unsigned level, HtFrameInfo *out,
                           size_t max, uint32_t *below) HT_HIDDEN;

/* -- A tape being written: symbols not on the tape yet --------------------- */

/* Names a native address the tape does not: its inline chain, innermost
** first, in *out (valid until the next call); returns its length, 0 if
** unknown. */
typedef size_t (*HtFramesSymFn)(void *arg, uint64_t ip, const HtSymbol **out);
/* ht_frames_levels, asking sym(arg, ...) for addresses the tape does not name. */
size_t ht_frames_levels_sym(const HtReader *r, uint32_t stack, const char *const *wrappers,
                            size_t nwrappers, HtFramesSymFn sym, void *arg,
                            HtFrameInfo *out, size_t max) HT_HIDDEN;
/* ht_frames_site_name, likewise. */
size_t ht_frames_site_name_sym(const HtReader *r, uint32_t stack,
                               const char *const *wrappers, size_t nwrappers,
                               HtFramesSymFn sym, void *arg, char *buf, size_t len,
                               uint64_t *frame) HT_HIDDEN;

#endif
