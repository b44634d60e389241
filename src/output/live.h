/* heaptape -- the live view's screen: heap chart, top sites, a site's stack,
** drawn with curses from a follower (src/analyze/follow.h). */
#ifndef HT_OUTPUT_LIVE_H
#define HT_OUTPUT_LIVE_H

#include "../analyze/follow.h"

/* What the table is sorted by. */
enum { HT_LIVE_BY_LIVE, HT_LIVE_BY_RATE, HT_LIVE_BY_TOTAL, HT_LIVE_BY__COUNT };

/* The view's state: what the keys changed. */
typedef struct HtLiveView {
  int sort;                  /* HT_LIVE_BY_* */
  int calls;                 /* figures in calls (blocks), not bytes */
  int stack;                 /* the selected site's stack is open */
  int paused;                /* not following the tape */
  int moment;                /* -1: now; else index in the follower's history */
  int sel;                   /* selected row (0 = first) */
  int top;                   /* first row shown (scrolling) */
  uint32_t sel_site;         /* site of the selected row (for the stack view) */
  const char *title;         /* program or tape shown in the first line */
  const char *state;         /* the program's state: "running", "killed by SIGSEGV" */
} HtLiveView;

/* Draw the whole screen (curses must be set up) and refresh it. */
void ht_live_draw(HtFollow *f, HtLiveView *v) HT_HIDDEN;

#endif
