/* heaptape -- frames as the reports show them: names, inline levels, and the
** test for allocation plumbing that site attribution looks past. */
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "frames.h"

/* -- Levels --------------------------------------------------------------- */

/* Levels of a frame, innermost first; sym names what the tape does not. */
static size_t frames_info(const HtReader *r, uint64_t frame, HtFrameInfo *out,
                          size_t max, HtFramesSymFn sym, void *arg)
{
  if (!max) return 0;
  memset(out, 0, sizeof(*out));
  out->frame = frame;
  if (HT_FRAME_IS_LOC(frame)) {
    out->is_loc = 1;
    out->ip = HT_FRAME_LOC(frame);
    const HtLocation *l = ht_reader_location(r, out->ip);
    if (l) {
      out->known = 1;
      out->lkind = l->kind;
      out->func = l->name;
      out->file = l->file;
      out->line = l->line;
      out->aux = l->aux;
    } else {
      out->lkind = HT_L_OTHER;
    }
    return 1;
  }
  out->ip = HT_FRAME_IP(frame);
  uint64_t base = 0;
  out->module = ht_reader_module(r, out->ip, &base);
  if (out->module) out->off = out->ip - base;
  const HtSymbol *syms;
  size_t n = ht_reader_symbol(r, out->ip, &syms);
  if (n == 0 && sym) n = sym(arg, out->ip, &syms);
  if (n == 0) return 1;
  if (n > max) n = max;
  ht_frames_fill(out, syms, n);
  return n;
}

/* Levels of a frame, innermost first. */
size_t ht_frames_info(const HtReader *r, uint64_t frame, HtFrameInfo *out,
                      size_t max)
{
  return frames_info(r, frame, out, max, NULL, NULL);
}

/* Spread out[0] (a native frame) over n levels named by an inline chain. */
void ht_frames_fill(HtFrameInfo *out, const HtSymbol *sym, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    out[i] = out[0];
    out[i].known = 1;
    out[i].func = sym[i].func;
    out[i].file = sym[i].file;
    out[i].line = sym[i].line;
    out[i].inlined = i + 1 < n;
    out[i].level = (unsigned)i;
  }
}

/* -- Names ---------------------------------------------------------------- */

/* A key of a level for caches of its name. */
int ht_frames_level_key(const HtFrameInfo *fi, uint64_t *key)
{
  if (fi->frame >> 59 || fi->level >= 16) return 0;
  *key = fi->frame << 4 | fi->level;
  return 1;
}

/* "file:line", "file" or "" into buf. */
static void frames_fileline(const HtFrameInfo *fi, char *buf, size_t len)
{
  if (!fi->file) snprintf(buf, len, "%s", "");
  else if (fi->line) snprintf(buf, len, "%s:%" PRIu64, fi->file, fi->line);
  else snprintf(buf, len, "%s", fi->file);
}

/* Display name of a level. */
size_t ht_frames_format(const HtFrameInfo *fi, char *buf, size_t len)
{
  char fl[512];
  int n;
  frames_fileline(fi, fl, sizeof(fl));
  if (fi->is_loc) {
    if (!fi->known) {
      n = snprintf(buf, len, "LOC %" PRIu64, fi->ip);
    } else switch (fi->lkind) {
    case HT_L_INTERNAL: n = snprintf(buf, len, "INTERNAL"); break;
    case HT_L_LUA: n = snprintf(buf, len, "@%s", fl[0] ? fl : "?"); break;
    case HT_L_CFUNC:
      if (fi->func) n = snprintf(buf, len, "%s", fi->func);
      else n = snprintf(buf, len, "CFUNC 0x%" PRIx64, fi->aux);
      break;
    case HT_L_PYTHON:
    case HT_L_RUBY:
      n = snprintf(buf, len, "%s %s", fi->func ? fi->func : "?", fl[0] ? fl : "?");
      break;
    case HT_L_TRACE:
      n = snprintf(buf, len, "TRACE [%" PRIu64 "] started at %s", fi->aux,
                   fl[0] ? fl : "?");
      break;
    default:
      if (fi->func && fl[0]) n = snprintf(buf, len, "%s %s", fi->func, fl);
      else if (fi->func || fl[0]) n = snprintf(buf, len, "%s", fi->func ? fi->func : fl);
      else n = snprintf(buf, len, "LOC %" PRIu64, fi->ip);
      break;
    }
  } else if (fi->func || fl[0]) {
    if (fi->func && fl[0]) n = snprintf(buf, len, "%s %s", fi->func, fl);
    else n = snprintf(buf, len, "%s", fi->func ? fi->func : fl);
  } else if (fi->module) {
    const char *base = strrchr(fi->module, '/');
    n = snprintf(buf, len, "0x%" PRIx64 " (%s+0x%" PRIx64 ")", fi->ip,
                 base ? base + 1 : fi->module, fi->off);
  } else {
    n = snprintf(buf, len, "0x%" PRIx64, fi->ip);
  }
  if (n < 0) n = 0;
  return (size_t)n >= len ? (len ? len - 1 : 0) : (size_t)n;
}

/* -- Plumbing ------------------------------------------------------------- */

/* Allocator entry points: the frames that every allocation passes through. */
static const char *const frames_alloc_funcs[] = {
  "malloc", "calloc", "realloc", "reallocarray", "free", "cfree",
  "posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc",
  "free_sized", "free_aligned_sized", "strdup", "strndup",
  "__libc_malloc", "__libc_calloc", "__libc_realloc", "__libc_free",
  "__libc_memalign", "__libc_valloc", "__libc_pvalloc", "__strdup", "__strndup",
};

/* Whether name (possibly with a parameter list) is func or func(...). */
static int frames_is(const char *name, const char *func)
{
  size_t n = strlen(func);
  return !strncmp(name, func, n) && (name[n] == 0 || name[n] == '(');
}

/* The qualified name of a demangled C++ function: past a leading return
** type ("void std::vector<...>::f(...)" gives "std::vector<...>::f(...)"). */
static const char *frames_qualified(const char *f)
{
  const char *start = f;
  int depth = 0;
  for (const char *p = f; *p && !(depth == 0 && *p == '('); p++) {
    if (*p == '<') depth++;
    else if (*p == '>' && depth) depth--;
    else if (*p == ' ' && depth == 0) start = p + 1;
  }
  return start;
}

/* Whether a level is C++ standard-library allocation plumbing: a function
** in namespace std (or __gnu_cxx) whose code is in libstdc++'s headers
** (".../c++/<version>/...") or in libstdc++.so itself. */
static int frames_stdlib(const HtFrameInfo *fi)
{
  const char *q = frames_qualified(fi->func);
  if (strncmp(q, "std::", 5) && strncmp(q, "__gnu_cxx::", 11)) return 0;
  if (fi->file && strstr(fi->file, "/c++/")) return 1;
  if (fi->module) {
    const char *base = strrchr(fi->module, '/');
    base = base ? base + 1 : fi->module;
    if (!strncmp(base, "libstdc++", 9)) return 1;
  }
  return 0;
}

/* Whether a level is plumbing. */
int ht_frames_plumbing(const HtFrameInfo *fi, const char *const *wrappers,
                       size_t nwrappers)
{
  if (fi->is_loc) return 0;  /* runtimes name their own meaningful frames */
  if (fi->module) {
    const char *base = strrchr(fi->module, '/');
    base = base ? base + 1 : fi->module;
    if (!strncmp(base, "libheaptape", 11)) return 1;
  }
  const char *f = fi->func;
  if (!f) return 0;
  if (!strncmp(f, "heaptape_", 9)) return 1;
  if (!strncmp(f, "operator new", 12) || !strncmp(f, "operator delete", 15))
    return 1;
  for (size_t i = 0; i < HT_COUNTOF(frames_alloc_funcs); i++)
    if (frames_is(f, frames_alloc_funcs[i])) return 1;
  if (frames_stdlib(fi)) return 1;
  for (size_t i = 0; i < nwrappers; i++) {
    if (!fnmatch(wrappers[i], f, 0)) return 1;
    /* A pattern without parameters also matches a demangled name with them. */
    const char *paren = strchr(f, '(');
    if (paren) {
      char base[256];
      size_t n = (size_t)(paren - f);
      if (n >= sizeof(base)) n = sizeof(base) - 1;
      memcpy(base, f, n);
      base[n] = 0;
      if (!fnmatch(wrappers[i], base, 0)) return 1;
    }
  }
  return 0;
}

/* -- Sites merged by location --------------------------------------------- */

/* Levels of stack node `node` and all its callers (the reader's 256
** frames at most), below[node] = count + 1 once known. */
static size_t frames_below(const HtReader *r, uint32_t node, uint32_t *below)
{
  uint32_t chain[256];
  size_t k = 0;
  for (; node && !below[node] && k < HT_COUNTOF(chain); node = ht_reader_stack_parent(r, node))
    chain[k++] = node;
  size_t total = node ? below[node] - 1 : 0;
  while (k-- > 0) {  /* counted as frames_info gives them (16 at most), not named */
    uint64_t frame = ht_reader_stack_frame(r, chain[k]);
    const HtSymbol *sym;
    size_t n = HT_FRAME_IS_LOC(frame) ? 1 : ht_reader_symbol(r, HT_FRAME_IP(frame), &sym);
    total += n == 0 ? 1 : n < 16 ? n : 16;
    below[chain[k]] = (uint32_t)total + 1;
  }
  return total;
}

/* Levels of a node and its callers, through the memo. */
size_t ht_frames_below(const HtReader *r, uint32_t node, uint32_t *below)
{
  return frames_below(r, node, below);
}

/* Levels of a stack as every list shows them: inner plumbing dropped. With
** all == 0 the walk stops once out[max] is full (the count is then max).
** With below (a memo, ht_frames_levels_counted) the levels past out[max]
** are counted from it instead of looked up. */
static size_t frames_levels(const HtReader *r, uint32_t stack, const char *const *wrappers,
                            size_t nwrappers, HtFrameInfo *out, size_t max, int all,
                            HtFramesSymFn sym, void *arg, uint32_t *below)
{
  uint64_t frames[256];
  size_t n = ht_reader_stack_frames(r, stack, frames, HT_COUNTOF(frames));
  size_t got = 0, total = 0;
  int inner = 1;
  uint32_t node = stack;
  if (n == HT_COUNTOF(frames)) below = NULL;  /* maybe cut: count the long way */
  for (size_t i = 0; i < n; i++, node = ht_reader_stack_parent(r, node)) {
    if (below && !inner && got == max)
      return total + frames_below(r, node, below);
    HtFrameInfo fi[16];
    size_t k = frames_info(r, frames[i], fi, HT_COUNTOF(fi), sym, arg);
    for (size_t j = 0; j < k; j++) {
      if (inner && ht_frames_plumbing(&fi[j], wrappers, nwrappers)) continue;
      inner = 0;
      if (got < max) out[got++] = fi[j];
      total++;
      if (!all && got == max) return total;
    }
  }
  if (inner && n) {  /* all plumbing: the stack as it is, one level a frame */
    for (size_t i = 0; i < n && got < max; i++)
      got += frames_info(r, frames[i], out + got, 1, sym, arg);
    total = n;
  }
  return total;
}

/* Levels of a stack as every list shows them. */
size_t ht_frames_levels(const HtReader *r, uint32_t stack, const char *const *wrappers,
                        size_t nwrappers, HtFrameInfo *out, size_t max)
{
  return frames_levels(r, stack, wrappers, nwrappers, out, max, 1, NULL, NULL, NULL);
}

/* Levels of a stack, the levels past max counted through a memo. */
size_t ht_frames_levels_counted(const HtReader *r, uint32_t stack, const char *const *wrappers,
                                size_t nwrappers, HtFrameInfo *out, size_t max,
                                uint32_t *below)
{
  return frames_levels(r, stack, wrappers, nwrappers, out, max, 1, NULL, NULL, below);
}

/* Levels of a stack from a node's level outward, those past max counted
** through the memo. */
size_t ht_frames_levels_at(const HtReader *r, uint32_t node, unsigned level, HtFrameInfo *out,
                           size_t max, uint32_t *below)
{
  size_t got = 0, total = 0;
  for (; node; node = ht_reader_stack_parent(r, node), level = 0) {
    if (got == max && total) return total + frames_below(r, node, below);
    HtFrameInfo fi[16];
    size_t k = frames_info(r, ht_reader_stack_frame(r, node), fi, HT_COUNTOF(fi), NULL, NULL);
    for (size_t j = level; j < k; j++) {
      if (got < max) out[got++] = fi[j];
      total++;
    }
  }
  return total;
}

/* Levels of a stack, with fallback symbols. */
size_t ht_frames_levels_sym(const HtReader *r, uint32_t stack, const char *const *wrappers,
                            size_t nwrappers, HtFramesSymFn sym, void *arg,
                            HtFrameInfo *out, size_t max)
{
  return frames_levels(r, stack, wrappers, nwrappers, out, max, 1, sym, arg, NULL);
}

/* The merge key of a stack: the display name of its first level. */
size_t ht_frames_site_name(const HtReader *r, uint32_t stack,
                           const char *const *wrappers, size_t nwrappers,
                           char *buf, size_t len, uint64_t *frame)
{
  return ht_frames_site_name_sym(r, stack, wrappers, nwrappers, NULL, NULL, buf, len,
                                 frame);
}

/* The merge key of a stack, with fallback symbols. */
size_t ht_frames_site_name_sym(const HtReader *r, uint32_t stack,
                               const char *const *wrappers, size_t nwrappers,
                               HtFramesSymFn sym, void *arg, char *buf, size_t len,
                               uint64_t *frame)
{
  HtFrameInfo first;
  if (!frames_levels(r, stack, wrappers, nwrappers, &first, 1, 0, sym, arg, NULL)) {
    if (frame) *frame = 0;
    int w = snprintf(buf, len, "(no stack)");
    return w < 0 ? 0 : (size_t)w >= len ? (len ? len - 1 : 0) : (size_t)w;
  }
  if (frame) *frame = first.frame;
  return ht_frames_format(&first, buf, len);
}
