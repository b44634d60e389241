/* heaptape -- the live view's screen, drawn with curses: a status line, the
** heap over time, the top sites, and a site's whole stack. */
#include <curses.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live.h"

/* One row of the table. */
typedef struct LiveRow {
  uint32_t site;             /* index in the follower's sites */
  uint64_t live, live_n;     /* bytes and blocks live */
  uint64_t allocs, bytes;    /* calls and bytes since the start */
  uint64_t rate_n, rate_b;   /* per second */
  uint64_t key;              /* sort key */
} LiveRow;

/* -- Figures ------------------------------------------------------------------ */

/* A size with a binary unit: "512B", "12.3K", "4.0M". */
static void live_bytes(char *b, size_t n, uint64_t v)
{
  static const char u[] = "BKMGTP";
  double d = (double)v;
  int i = 0;
  while (d >= 1024 && i < 5) { d /= 1024; i++; }
  if (i == 0) snprintf(b, n, "%" PRIu64 "B", v);
  else snprintf(b, n, "%.1f%c", d, u[i]);
}

/* A count with a decimal unit: "999", "12.3k", "4.0M". */
static void live_count(char *b, size_t n, uint64_t v)
{
  if (v < 10000) snprintf(b, n, "%" PRIu64, v);
  else if (v < 10000000) snprintf(b, n, "%.1fk", (double)v / 1e3);
  else snprintf(b, n, "%.1fM", (double)v / 1e6);
}

/* The figure a column shows: bytes or a count, by the view's unit. */
static void live_fig(char *b, size_t n, uint64_t v, int count)
{
  if (count) live_count(b, n, v);
  else live_bytes(b, n, v);
}

/* name cut to w columns into b. A site "FUNC /a/long/path/file.c:12" keeps
** its function and the end of its path ("FUNC ...path/file.c:12"): the head
** of a long path (a build directory) tells nothing, its file and line do. */
static const char *live_fit(char *b, size_t n, const char *name, int w)
{
  size_t len = strlen(name), cap = w > 0 ? (size_t)w : 1;
  if (cap >= n) cap = n - 1;
  if (len <= cap) return name;
  const char *sp = strrchr(name, ' ');
  const char *path = sp && strchr(sp, '/') ? sp + 1 : name;  /* a title is all path */
  size_t head = (size_t)(path - name);
  if (head + 3 + 8 > cap) { snprintf(b, n, "%.*s", (int)cap, name); return b; }
  size_t tail = cap - head - 3;
  snprintf(b, n, "%.*s...%s", (int)head, name, name + len - tail);
  return b;
}

/* Order of rows: larger key first, then site index. */
static int live_row_cmp(const void *a, const void *b)
{
  const LiveRow *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? 1 : -1;
  return (x->site > y->site) - (x->site < y->site);
}

/* The rows of the table, now or at a moment of the history; *n rows. */
static LiveRow *live_rows(const HtFollow *f, const HtLiveView *v, size_t *n)
{
  size_t ns = ht_follow_nsite(f), k = 0;
  LiveRow *rows = calloc(ns ? ns : 1, sizeof(LiveRow));
  if (!rows) { *n = 0; return NULL; }
  if (v->moment < 0) {
    for (size_t i = 0; i < ns; i++) {
      const HtFollowSite *s = &f->site[i];
      if (!s->live && !s->allocs) continue;
      rows[k++] = (LiveRow){(uint32_t)i, s->live, s->live_n, s->allocs, s->bytes,
                            s->rate_n, s->rate_b, 0};
    }
  } else {  /* rates: against the moment before (the site's figures there) */
    const HtFollowMoment *mo = &f->mom[v->moment];
    const HtFollowMoment *pm = v->moment > 0 ? &f->mom[v->moment - 1] : NULL;
    double dt = pm && mo->ts > pm->ts ? (double)(mo->ts - pm->ts) / 1e9 : 0;
    for (uint32_t i = 0; i < mo->n; i++) {
      const HtFollowFig *g = &mo->top[i];
      LiveRow r = {g->site, g->live, g->live_n, g->allocs, g->bytes, 0, 0, 0};
      for (uint32_t j = 0; pm && dt > 0 && j < pm->n; j++)
        if (pm->top[j].site == g->site) {
          r.rate_n = (uint64_t)((double)(g->allocs - pm->top[j].allocs) / dt);
          r.rate_b = (uint64_t)((double)(g->bytes - pm->top[j].bytes) / dt);
        }
      rows[k++] = r;
    }
  }
  for (size_t i = 0; i < k; i++) {
    LiveRow *r = &rows[i];
    r->key = v->sort == HT_LIVE_BY_LIVE ? (v->calls ? r->live_n : r->live)
           : v->sort == HT_LIVE_BY_RATE ? (v->calls ? r->rate_n : r->rate_b)
           : (v->calls ? r->allocs : r->bytes);
  }
  qsort(rows, k, sizeof(LiveRow), live_row_cmp);
  *n = k;
  return rows;
}

/* -- Parts of the screen -------------------------------------------------------- */

/* Heap and time at the moment shown. */
static void live_status(const HtFollow *f, const HtLiveView *v, int cols)
{
  char heap[32], peak[32], calls[32], when[64];
  uint64_t h = f->m.heap, hn = f->m.heap_n, a = f->m.allocs, ts = f->ts;
  if (v->moment >= 0) {
    const HtFollowMoment *mo = &f->mom[v->moment];
    h = mo->heap; hn = mo->heap_n; a = mo->allocs; ts = mo->ts;
  }
  live_bytes(heap, sizeof(heap), h);
  live_bytes(peak, sizeof(peak), f->m.peak);
  live_count(calls, sizeof(calls), a);
  if (v->moment >= 0)
    snprintf(when, sizeof(when), "at %.2fs of %.2fs", (double)ts / 1e9, (double)f->ts / 1e9);
  else
    snprintf(when, sizeof(when), "at %.2fs (now)", (double)ts / 1e9);
  attron(A_BOLD);
  /* the title (the tape's path) gets what the state leaves of the line */
  const char *state = v->state ? v->state : "";
  int room = cols - 16 - (int)strlen(state) - 4 - (v->paused ? 8 : 0) - 1;
  char fit[512];
  mvprintw(0, 0, "heaptape live  %s",
           live_fit(fit, sizeof(fit), v->title ? v->title : "", room > 10 ? room : 10));
  attroff(A_BOLD);
  printw("  [%s]%s", state, v->paused ? "  PAUSED" : "");
  mvprintw(1, 0, "heap %s in %" PRIu64 " blocks  peak %s  calls %s  %s", heap, hn, peak,
           calls, when);
  if (f->late) printw("  (%" PRIu64 " late events)", f->late);
}

/* The heap over time: one column per slice of the run, the moment marked. */
static void live_chart(const HtFollow *f, const HtLiveView *v, int y, int h, int cols)
{
  int x0 = 8, w = cols - x0 - 1;
  if (w < 8 || h < 2) return;
  uint64_t end = f->ts ? f->ts : 1, top = 1;
  uint64_t *col = calloc((size_t)w, sizeof(uint64_t));
  if (!col) return;
  for (uint32_t i = 0; i <= f->nmom; i++) {  /* the moments, then now */
    uint64_t t = i < f->nmom ? f->mom[i].ts : f->ts;
    uint64_t hp = i < f->nmom ? f->mom[i].heap : f->m.heap;
    int c = (int)((double)t / (double)end * (w - 1));
    if (c < 0) c = 0;
    if (c >= w) c = w - 1;
    if (hp > col[c]) col[c] = hp;
    if (hp > top) top = hp;
  }
  for (int c = 1; c < w; c++)  /* a column no moment fell in: the one before */
    if (!col[c]) col[c] = col[c - 1];
  int mark = -1;
  if (v->moment >= 0) {
    mark = (int)((double)f->mom[v->moment].ts / (double)end * (w - 1));
    if (mark >= w) mark = w - 1;
  }
  char lab[32];
  live_bytes(lab, sizeof(lab), top);
  mvprintw(y, 0, "%7s", lab);
  mvprintw(y + h - 1, 0, "%7s", "0");
  for (int c = 0; c < w; c++) {
    int bar = (int)((double)col[c] / (double)top * h + 0.5);
    if (col[c] && !bar) bar = 1;
    for (int r = 0; r < h; r++) {
      int on = h - r <= bar;
      chtype ch = on ? (chtype)'#' : c == mark ? (chtype)'|' : (chtype)' ';
      if (c == mark) ch |= A_REVERSE;
      mvaddch(y + r, x0 + c, ch);
    }
  }
  mvprintw(y + h, x0, "0s");
  char t[32];
  snprintf(t, sizeof(t), "%.1fs", (double)end / 1e9);
  mvprintw(y + h, x0 + w - (int)strlen(t), "%s", t);
  free(col);
}

/* The table of sites from row y to y + h - 1. */
static void live_table(const HtFollow *f, HtLiveView *v, int y, int h, int cols)
{
  static const char *const by[] = {"live", "rate", "total"};
  const char *u = v->calls ? "blocks/calls" : "bytes";
  attron(A_BOLD);
  mvprintw(y, 0, "%10s %10s %10s %10s  SITE   (sorted by %s, %s)",
           v->calls ? "LIVE BLK" : "LIVE", v->calls ? "CALLS/S" : "BYTES/S",
           v->calls ? "CALLS" : "ALLOCATED", v->calls ? "LIVE" : "LIVE BLK",
           by[v->sort], u);
  attroff(A_BOLD);
  size_t n;
  LiveRow *rows = live_rows(f, v, &n);
  if (!rows) return;
  int shown = h - 1;
  if (v->sel >= (int)n) v->sel = n ? (int)n - 1 : 0;
  if (v->sel < v->top) v->top = v->sel;
  if (v->sel >= v->top + shown) v->top = v->sel - shown + 1;
  if (v->top < 0) v->top = 0;
  for (int i = 0; i < shown && v->top + i < (int)n; i++) {
    const LiveRow *r = &rows[v->top + i];
    char a[32], b[32], c[32], d[32];
    live_fig(a, sizeof(a), v->calls ? r->live_n : r->live, v->calls);
    live_fig(b, sizeof(b), v->calls ? r->rate_n : r->rate_b, v->calls);
    live_fig(c, sizeof(c), v->calls ? r->allocs : r->bytes, v->calls);
    live_fig(d, sizeof(d), v->calls ? r->live : r->live_n, !v->calls);
    int selr = v->top + i == v->sel;
    if (selr) { attron(A_REVERSE); v->sel_site = r->site; }
    char fit[512];
    mvprintw(y + 1 + i, 0, "%10s %10s %10s %10s  %s", a, b, c, d,
             live_fit(fit, sizeof(fit), f->site[r->site].name, cols > 46 ? cols - 46 : 1));
    if (selr) { clrtoeol(); attroff(A_REVERSE); }
  }
  free(rows);
}

/* The selected site's whole stack, innermost first. */
static void live_stack(HtFollow *f, const HtLiveView *v, int y, int h, int cols)
{
  attron(A_BOLD);
  char fit[512];
  mvprintw(y, 0, "STACK of %s",
           live_fit(fit, sizeof(fit), v->sel_site < ht_follow_nsite(f) ? f->site[v->sel_site].name
                                                                       : "?", cols > 12 ? cols - 12 : 1));
  attroff(A_BOLD);
  HtFrameInfo fi[256];
  size_t n = ht_follow_stack(f, v->sel_site, fi, 256);
  for (size_t i = 0; i < n && (int)i < h - 1; i++) {
    char name[1024];
    ht_frames_format(&fi[i], name, sizeof(name));
    char fit[512];
    mvprintw(y + 1 + (int)i, 0, "%3zu %s%s", i, fi[i].inlined ? "(inlined) " : "",
             live_fit(fit, sizeof(fit), name, cols > 16 ? cols - 16 : 1));
  }
  if (!n) mvprintw(y + 1, 0, "(no frames)");
}

/* -- The screen --------------------------------------------------------------- */

/* Draw everything for the terminal's current size. */
void ht_live_draw(HtFollow *f, HtLiveView *v)
{
  int rows, cols;
  getmaxyx(stdscr, rows, cols);
  erase();
  if (rows < 12 || cols < 50) {
    mvprintw(0, 0, "heaptape live: terminal too small (%dx%d, need 50x12)", cols, rows);
    refresh();
    return;
  }
  live_status(f, v, cols);
  int ch = rows >= 30 ? 8 : rows >= 20 ? 5 : 3;  /* chart height */
  live_chart(f, v, 3, ch, cols);
  int ty = 3 + ch + 2, th = rows - ty - 1;
  if (v->stack) live_stack(f, v, ty, th, cols);
  else live_table(f, v, ty, th, cols);
  attron(A_REVERSE);
  mvprintw(rows - 1, 0, "%-*.*s", cols - 1, cols - 1,
           v->stack ? " enter/esc back  q quit"
                    : " q quit  s sort  b bytes/calls  enter stack  p pause  "
                      "left/right moment  n now  up/down select");
  attroff(A_REVERSE);
  refresh();
}
