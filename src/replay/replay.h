/* heaptape -- the replay engine: a tape to an operations file, one runner
** process per allocator driver, and their results (text, JSON, SVG). */
#ifndef HT_REPLAY_H
#define HT_REPLAY_H

#include <stdio.h>
#include "opfile.h"
#include "../format/reader.h"

/* What the operations file holds. */
typedef struct HtReplayPrep {
  uint64_t nops;             /* operations */
  uint64_t nhandles;         /* blocks */
  uint64_t peak;             /* largest live bytes */
  uint64_t peak_index;       /* op where it is first reached */
  uint64_t unknown_frees;    /* frees of blocks from before the recording */
  uint64_t locks, unlocks;   /* Lock and Unlock records of the locking model */
  int model;                 /* HtLockModel of --locks, or -1 */
  unsigned global_pct;       /* its coarse threshold */
} HtReplayPrep;


/* Killpercent rounds (docs/ALLOCATORS.md): after each pass over the ops,
** free pct% of the live blocks at random (seeded), then replay the ops again
** with new blocks; rounds such kills and passes after the first. */
typedef struct HtReplayKill {
  unsigned pct;              /* 0..100 */
  uint64_t rounds;           /* >= 1 */
  uint64_t seed;             /* of the splitmix64 stream choosing the blocks */
} HtReplayKill;

#define HT_REPLAY_KILL_SEED 1  /* the default seed */
#define HT_REPLAY_MAX_ROUNDS_SHOWN 64  /* rounds whose kill counts are reported */

/* One allocator's replay. */
typedef struct HtReplayResult {
  char name[64];             /* driver name */
  char problem[200];         /* why it did not finish, "" if it did */
  uint64_t ops;              /* ops replayed */
  uint64_t fails;            /* failed allocations */
  uint64_t corrupt;          /* blocks with a wrong stamp, alignment or zeroing */
  uint64_t oom_calls;        /* out-of-memory hook calls */
  uint64_t live_blocks;      /* blocks live at the end */
  uint64_t live_peak;        /* largest live bytes (over all rounds) */
  uint64_t kills[HT_REPLAY_MAX_ROUNDS_SHOWN]; /* blocks freed after each pass */
  size_t nkills;             /* rounds in kills */
  int64_t peak_rss;          /* largest sampled RSS above the baseline */
  int64_t peak_mapped;       /* largest virtual size above the baseline */
  int64_t held_at_peak;      /* RSS above the baseline when live bytes peaked */
  double frag_mean;          /* mean of (rss - used) / rss over the samples */
  uint64_t ns_total;         /* time inside the allocator */
  uint64_t ns_max;           /* slowest call */
  uint64_t wall_ns;          /* the whole replay loop (touching included) */
  uint64_t n_by[4], ns_by[4]; /* calls and time: malloc, free, realloc, other */
  uint64_t n_lock, ns_lock;  /* lock() and unlock() calls of the locking model, time */
  uint64_t compactions;      /* the driver's compaction passes (stats, 0 = none) */
  uint64_t moved;            /* bytes they moved */
  HtReplaySample *s;         /* series (owned) */
  size_t ns;                 /* samples */
} HtReplayResult;

struct HtLocks;
/* Write the operations file of a tape r, or of the operations log (text,
** src/analyze/opsread.h) at opslog when r is NULL, with the Lock and Unlock
** records of locks (a model fresh from ht_locks_init) unless it is NULL --
** a log's own K and U lines are replayed when locks is NULL and give way to
** the model's otherwise. Returns 0, or -1 with err set (for a log, err
** names the file, and the line of a bad one). */
int ht_replay_prepare(HtReader *r, const char *opslog, struct HtLocks *locks,
                      const char *opfile, HtReplayPrep *p, char *err, size_t errlen) HT_HIDDEN;
/* Run one driver (path[:args]) over opfile in a child process; touch is
** "page", "all" or "none"; kill the rounds or NULL; tmp a directory for the
** result files. Returns 0 when the runner finished, -1 with res->problem set
** otherwise. */
int ht_replay_run(const char *runner, const char *opfile, const char *driver,
                  const char *touch, uint64_t interval, const HtReplayKill *kill,
                  const char *tmp, HtReplayResult *res) HT_HIDDEN;
/* Release a result's series. */
void ht_replay_result_free(HtReplayResult *res) HT_HIDDEN;
/* Results as a table. */
void ht_replay_text(FILE *f, const char *tape, const HtReplayPrep *p,
                    const HtReplayKill *kill, const HtReplayResult *res, size_t n) HT_HIDDEN;
/* Results and series as JSON (--allocstats). */
void ht_replay_json(FILE *f, const char *tape, const HtReplayPrep *p,
                    const HtReplayKill *kill, const HtReplayResult *res, size_t n) HT_HIDDEN;
/* The allocators side by side as SVG (--plot). */
void ht_replay_svg(FILE *f, const char *tape, const HtReplayPrep *p,
                   const HtReplayResult *res, size_t n) HT_HIDDEN;

#endif
