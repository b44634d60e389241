/* heaptape -- text, JSON and memprof-layout reports of an analysis model.
** docs/REPORT.md describes every layout; outputs never read the tape. */
#ifndef HT_REPORT_H
#define HT_REPORT_H

#include <stdio.h>
#include "../analyze/model.h"

/* Sections of the default report. */
enum {
  HT_RS_SUMMARY = 1, HT_RS_PEAK = 2, HT_RS_CALLS = 4, HT_RS_BYTES = 8,
  HT_RS_LEAKS = 16, HT_RS_TEMP = 32, HT_RS_AT = 64,
  HT_RS_DEFAULT = HT_RS_SUMMARY | HT_RS_PEAK | HT_RS_CALLS | HT_RS_BYTES | HT_RS_LEAKS
};

typedef struct HtReportOpts {
  const char *path;          /* tape path shown in the title */
  unsigned sections;         /* HT_RS_* */
  unsigned top;              /* sites per list */
  unsigned depth;            /* frames shown per stack */
  uint64_t at_ns;            /* --at time (with HT_RS_AT) */
  int human;                 /* memprof: KiB/MiB/GiB */
  int leak_only;             /* memprof: the heap summary alone */
  int by_stack;              /* one row per stack, not per location */
  unsigned paths;            /* text: stacks shown per merged row (0 = all) */
  unsigned json_paths;       /* JSON: stacks listed per row (0 = all) */
  const char *warning;       /* damage warning to carry in JSON, or NULL */
} HtReportOpts;

/* The default text report. */
void ht_report_text(FILE *f, const HtModel *m, const HtReportOpts *o) HT_HIDDEN;
/* The same content as one JSON object. */
void ht_report_json(FILE *f, const HtModel *m, const HtReportOpts *o) HT_HIDDEN;
/* The LuaJIT memprof parser layout. */
void ht_report_memprof(FILE *f, const HtModel *m, const HtReportOpts *o) HT_HIDDEN;
/* A memprof heap snapshot; an HtSnapFn whose arg is the FILE *. */
void ht_report_memprof_snap(void *arg, const HtModel *m, uint64_t t_ns) HT_HIDDEN;

#endif
