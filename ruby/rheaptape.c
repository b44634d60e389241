/* heaptape -- `require "heaptape"` for Ruby 3.1: object allocations and frees
** through the VM's NEWOBJ/FREEOBJ events with Ruby stacks (docs/RUBY.md). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <ruby.h>
#include <ruby/debug.h>

#include "../include/heaptape.h"

/* Exported by libruby for objspace, not declared by its public headers. */
size_t rb_obj_memsize_of(VALUE obj);
int rb_objspace_marked_object_p(VALUE obj);
int rb_objspace_markable_object_p(VALUE obj);
size_t rb_obj_gc_flags(VALUE obj, ID *flags, size_t max);
void rb_objspace_each_objects_without_setup(int (*cb)(void *, void *, size_t, void *), void *data);
/* libruby's: NULL once a second Ractor has been made (vm_core.h); weak, so
** that a libruby without it still loads the extension. */
extern void *ruby_single_main_ractor __attribute__((weak));

#define RH_API __attribute__((visibility("default")))
#define RH_MAXDEPTH 128           /* Ruby frames read per event at most */
#define RH_LOCS (1u << 16)        /* location intern slots */
#define RH_ARENA (8u << 20)       /* bytes for interned names */
#define RH_FC_BITS 14             /* frame cache: 2^14 entries, direct-mapped */
#define RH_SLOT 40                /* an object's heap slot (sizeof(RVALUE), 3.1) */
#define RH_STACKS (1u << 20)      /* interned stacks of live objects */
#define RH_STACK_IDS (8u << 20)   /* location ids they hold */
#define RH_SLACK 512              /* objects a postponed arming may come late by */
#define RH_PAGE_SHIFT 14          /* heap pages are 16 KiB, aligned (HEAP_PAGE_ALIGN_LOG, 3.1) */
#define RH_AGE_SHIFT 5            /* an object's GC age: FL_PROMOTED0/1 of its flags (3.1) */

/* An interned runtime location. */
typedef struct RhLoc {
  uint64_t hash;           /* 0 = empty slot */
  const char *file;        /* path (arena) */
  const char *name;        /* label (arena) */
  uint32_t line;           /* current line */
} RhLoc;

/* A frame cache entry: the location of (frame, line). */
typedef struct RhFrame {
  VALUE frame;             /* iseq or method entry from rb_profile_frames */
  int line;                /* its line */
  uint64_t id;             /* interned location, 0 = a C method (skipped) */
  uint64_t gen;            /* rh.gen when stored; any other value = empty */
} RhFrame;

/* A recorded live object: what a compaction move and a size update need. */
typedef struct RhObj {
  VALUE obj;               /* 0 = empty, 1 = deleted */
  uint32_t stack;          /* interned stack (RhStack index) */
  uint32_t size;           /* bytes on the tape (a slot until measured) */
  uint64_t born;           /* rb_gc_count() when recorded (sampled deaths) */
} RhObj;

/* An interned stack: location ids, outermost first. */
typedef struct RhStack {
  uint64_t hash;           /* 0 = empty slot */
  uint32_t off, n;         /* ids at rh.ids[off .. off + n) */
} RhStack;

/* The one profiled VM of the process. */
static struct {
  VALUE tp;                /* every object: NEWOBJ/FREEOBJ/GC_START */
  VALUE tp_gc;             /* sampled: GC_START/END_MARK/ENTER/EXIT, on only near a sample point */
  int active;              /* a session runs */
  int own_tape;            /* we started the tape (vs. attached to a preload) */
  int maxdepth;            /* Ruby frames kept per event */
  int sampled;             /* the recording samples (heaptape_rt_gap > 0) */
  double keep;             /* sampled: 1 - exp(-slot / T), a slot's draw probability */
  int armed;               /* the NEWOBJ hook (rh_newobj, a raw event hook) is on */
  int gc_on;               /* tp_gc is enabled */
  int gc_asked;            /* the job after a GC is pending */
  size_t freed_pages;      /* total_freed_pages at the last check of deaths */
  size_t cycle_end;        /* total_allocated_objects the next GC comes by at the latest */
  int arm_asked;           /* a postponed arming is pending */
  int64_t left;            /* bytes past `due` to the sample point after it */
  size_t due;              /* total_allocated_objects of the next sampled object */
  size_t skip;             /* armed: NEWOBJ events to let pass before it */
  size_t page_objs;        /* objects in a heap page (GC::INTERNAL_CONSTANTS) */
  VALUE k_alloc, k_free, k_pages;   /* rb_gc_stat keys */
  VALUE k_avail, k_marked, k_freed; /* more of them */
  VALUE k_state, s_marking, s_sweeping;   /* rb_gc_latest_gc_info's :state and two of its values */
  ID id_wb_protected;               /* rb_obj_gc_flags' name for a write-barrier-protected object */
  uint64_t sizes_ns;       /* sizes brought up to date at most this often (0: at stop) */
  uint64_t sizes_last;     /* when they last were (CLOCK_MONOTONIC ns) */
  int sizes_asked;         /* a postponed update is pending */
  int off;                 /* objects no longer followed: a second Ractor (rh_off) */
  uint64_t gen;            /* frame cache generation (GC start, a freed iseq) */
  RhFrame *fc;             /* frame cache (mmap) */
  RhLoc *loc;              /* intern table (mmap) */
  char *arena;             /* interned names (mmap) */
  size_t arena_used;       /* bytes used */
  uint32_t nloc;           /* locations interned */
  uint64_t internal_id;    /* INTERNAL: no Ruby frame */
  RhObj *obj;              /* live recorded objects (mmap), open addressing */
  size_t ocap, oused;      /* slots (power of 2), used incl. deleted */
  RhStack *stk;            /* interned stacks (mmap) */
  heaptape_loc_t *ids;     /* their ids (mmap) */
  size_t ids_used;         /* ids used */
  RhObj *moves;            /* scratch of a compaction (mmap, ocap entries) */
  VALUE holder;            /* a data object whose dcompact sees the moves */
} rh;

/* -- Interned locations ------------------------------------------------------ */

/* FNV-1a of n bytes into h. */
static uint64_t rh_fnv(uint64_t h, const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  return (h ^ 0xff) * 0x100000001b3ull;
}

/* Copy n bytes of s into the arena as a C string; NULL when full. */
static const char *rh_keep(const char *s, size_t n)
{
  if (rh.arena_used + n + 1 > RH_ARENA) return NULL;
  char *d = rh.arena + rh.arena_used;
  memcpy(d, s, n);
  d[n] = 0;
  rh.arena_used += n + 1;
  return d;
}

/* The bytes of a String (no allocation: RSTRING_PTR of an existing string). */
static const char *rh_str(VALUE s, size_t *n)
{
  if (!RB_TYPE_P(s, T_STRING)) { *n = 1; return "?"; }
  *n = (size_t)RSTRING_LEN(s);
  return RSTRING_PTR(s);
}

/* Id of (path, label, line), declared on first sight; the slot + 1. */
static uint64_t rh_intern(VALUE path, VALUE label, uint32_t line)
{
  size_t fn, nn;
  const char *f = rh_str(path, &fn), *nm = rh_str(label, &nn);
  uint64_t h = rh_fnv(rh_fnv(0xcbf29ce484222325ull, f, fn), nm, nn);
  h = (h ^ line) * 0x100000001b3ull;
  if (!h) h = 1;
  uint32_t mask = RH_LOCS - 1, i = (uint32_t)(h ^ h >> 32) & mask;
  for (uint32_t k = 0; k < RH_LOCS; k++, i = (i + 1) & mask) {
    RhLoc *l = &rh.loc[i];
    if (!l->hash) {
      if (rh.nloc + 1 >= RH_LOCS - RH_LOCS / 8) return rh.internal_id;
      const char *kf = rh_keep(f, fn), *kn = rh_keep(nm, nn);
      if (!kf || !kn) return rh.internal_id;
      l->hash = h; l->file = kf; l->name = kn; l->line = line;
      rh.nloc++;
      heaptape_loc_declare(i + 1, HEAPTAPE_LOC_RUBY, kn, kf, line, 0);
      return i + 1;
    }
    if (l->hash == h && l->line == line && strlen(l->file) == fn && strlen(l->name) == nn &&
        !memcmp(l->file, f, fn) && !memcmp(l->name, nm, nn))
      return i + 1;
  }
  return rh.internal_id;
}

/* Location id of a frame at a line; 0 for a C method (charged to its caller). */
static uint64_t rh_frame_loc(VALUE frame, int line)
{
  uint64_t k = ((uint64_t)frame >> 3) * 0x9e3779b97f4a7c15ull ^ (uint64_t)line * 0xff51afd7ed558ccdull;
  RhFrame *e = &rh.fc[(k >> 20) & ((1u << RH_FC_BITS) - 1)];
  if (e->gen == rh.gen && e->frame == frame && e->line == line) return e->id;
  /* both return strings the iseq holds (nil for C methods): nothing allocates */
  VALUE path = rb_profile_frame_path(frame);
  uint64_t id = 0;
  if (!NIL_P(path)) id = rh_intern(path, rb_profile_frame_label(frame), line > 0 ? (uint32_t)line : 0);
  e->frame = frame; e->line = line; e->id = id; e->gen = rh.gen;
  return id;
}

/* -- Live objects (compaction) ----------------------------------------------- */

/*
** GC.compact moves objects and Ruby 3.1 reports no move event. The objects
** on the tape are kept in a table (address -> interned stack); the dcompact
** callback of a data object, called while every moved object's old slot
** still holds its forwarding address, asks rb_gc_location for each and puts
** the moves on the tape as reallocations.
*/

/* Slot of obj in the table (its entry, or the empty slot where it would go). */
static RhObj *rh_obj_slot(VALUE obj)
{
  size_t mask = rh.ocap - 1, i = ((uint64_t)obj >> 3) * 0x9e3779b97f4a7c15ull >> 20 & mask;
  RhObj *tomb = NULL;
  for (;; i = (i + 1) & mask) {
    RhObj *e = &rh.obj[i];
    if (e->obj == obj) return e;
    if (e->obj == 1 && !tomb) tomb = e;
    if (!e->obj) return tomb ? tomb : e;
  }
}

/* Map n bytes of zeroes; NULL on failure. */
static void *rh_map(size_t n)
{
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* Double the table (rehash the live entries); -1 when out of memory. */
static int rh_obj_grow(void)
{
  RhObj *old = rh.obj;
  size_t ocap = rh.ocap, cap = ocap ? ocap * 2 : 1u << 12;
  RhObj *t = rh_map(cap * sizeof(RhObj)), *mv = rh_map(cap * sizeof(RhObj));
  if (!t || !mv) { if (t) munmap(t, cap * sizeof(RhObj)); if (mv) munmap(mv, cap * sizeof(RhObj)); return -1; }
  rh.obj = t; rh.ocap = cap; rh.oused = 0;
  for (size_t i = 0; i < ocap; i++)
    if (old[i].obj > 1) { *rh_obj_slot(old[i].obj) = old[i]; rh.oused++; }
  if (old) munmap(old, ocap * sizeof(RhObj));
  if (rh.moves) munmap(rh.moves, ocap * sizeof(RhObj));
  rh.moves = mv;
  return 0;
}

/* Remember a recorded object of size bytes, recorded after `born` GCs began. */
static void rh_obj_put(VALUE obj, uint32_t stack, uint32_t size, uint64_t born)
{
  if ((rh.oused + 1) * 4 > rh.ocap * 3 && rh_obj_grow()) return;
  RhObj *e = rh_obj_slot(obj);
  if (e->obj <= 1) { if (!e->obj) rh.oused++; e->obj = obj; }
  e->stack = stack;
  e->size = size;
  e->born = born;
}

/* Sampled: the next reallocation on the tape is taken as a sample point that
** stands for what the object's draw gave (its size / a slot's probability),
** not drawn again. */
static void rh_take(size_t size)
{
  if (rh.sampled) heaptape_rt_take((uint64_t)llround((double)size / rh.keep));
}

/* Forget an object; 1 if it was recorded. */
static int rh_obj_del(VALUE obj)
{
  if (!rh.ocap) return 0;
  RhObj *e = rh_obj_slot(obj);
  if (e->obj != obj) return 0;
  e->obj = 1;
  return 1;
}

/* Index of the interned stack ids[0..n); 0 (the empty stack) when full. */
static uint32_t rh_stack(const heaptape_loc_t *ids, int n)
{
  uint64_t h = 0xcbf29ce484222325ull;
  for (int i = 0; i < n; i++) h = (h ^ ids[i]) * 0x100000001b3ull;
  if (!h) h = 1;
  uint32_t mask = RH_STACKS - 1, i = (uint32_t)(h ^ h >> 32) & mask;
  for (uint32_t k = 0; k < 64; k++, i = (i + 1) & mask) {
    RhStack *s = &rh.stk[i];
    if (!s->hash) {
      if (rh.ids_used + (size_t)n > RH_STACK_IDS) return 0;
      s->hash = h; s->off = (uint32_t)rh.ids_used; s->n = (uint32_t)n;
      memcpy(rh.ids + rh.ids_used, ids, (size_t)n * sizeof(*ids));
      rh.ids_used += (size_t)n;
      return i;
    }
    if (s->hash == h && s->n == (uint32_t)n && !memcmp(rh.ids + s->off, ids, (size_t)n * sizeof(*ids)))
      return i;
  }
  return 0;
}

/* dcompact of the holder: the moves of recorded objects onto the tape, each
** a reallocation (FREE and ALLOC of the realloc family) with the object's
** stack. A move's destination was a free slot, never another moved object's
** old one (the compactor fills free slots from one end of the heap with
** objects from the other), so the moves can go on the tape one by one; the
** table is updated after the scan. */
static void rh_compact(void *unused)
{
  (void)unused;
  if (!rh.active || !rh.ocap || !heaptape_is_running()) return;
  size_t nm = 0;
  for (size_t i = 0; i < rh.ocap; i++) {
    RhObj *e = &rh.obj[i];
    if (e->obj <= 1) continue;
    VALUE to = rb_gc_location(e->obj);
    if (to == e->obj) continue;
    const RhStack *st = &rh.stk[e->stack];
    rh_take(e->size);
    heaptape_rt_realloc(rh.ids + st->off, st->n, (void *)e->obj, (void *)to, e->size);
    rh.moves[nm] = *e;
    rh.moves[nm].obj = to;
    e->obj = 1;
    nm++;
  }
  for (size_t j = 0; j < nm; j++)
    rh_obj_put(rh.moves[j].obj, rh.moves[j].stack, rh.moves[j].size, rh.moves[j].born);
}

static void rh_gc_mark(void *unused);

/* The holder: a root whose dmark sees every GC (sampled) and whose dcompact
** sees every compaction. */
static const rb_data_type_t rh_holder_type = {
  "heaptape.holder", { rh_gc_mark, NULL, NULL, rh_compact, { 0 } }, NULL, NULL, 0
};

/* -- Sizes ------------------------------------------------------------------- */

/* The sizes of the live recorded objects brought up to date: a NEWOBJ event
** comes before the object holds anything, so it is recorded as one slot;
** here each whose rb_obj_memsize_of (slot + what it owns: string and array
** buffers, tables) differs from what the tape has gets a reallocation to that
** size, in place, with its stack (sampled, standing for what its draw gave). */
static void rh_sizes(void)
{
  if (!rh.ocap || !heaptape_is_running()) return;
  for (size_t i = 0; i < rh.ocap; i++) {
    RhObj *e = &rh.obj[i];
    if (e->obj <= 1) continue;
    int t = RB_BUILTIN_TYPE(e->obj);
    if (t == T_NONE || t == T_MOVED || t == T_ZOMBIE) continue;
    size_t sz = rb_obj_memsize_of(e->obj);
    uint32_t kept = sz > UINT32_MAX ? UINT32_MAX : (uint32_t)sz;
    if (!sz || kept == e->size) continue;
    const RhStack *st = &rh.stk[e->stack];
    rh_take(sz);
    heaptape_rt_realloc(rh.ids + st->off, st->n, (void *)e->obj, (void *)e->obj, sz);
    e->size = kept;
  }
}

/* CLOCK_MONOTONIC in ns. */
static uint64_t rh_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Postponed job: the sizes brought up to date (outside any hook: Ruby code
** may run between objects' reads, nothing else). */
static void rh_sizes_job(void *unused)
{
  (void)unused;
  rh.sizes_asked = 0;
  if (!rh.active || rh.off) return;
  rh_sizes();
  rh.sizes_last = rh_now();
}

/* At a GC start: ask for the sizes once HEAPTAPE_RUBY_SIZES seconds have
** passed (a program whose objects change allocates, and so collects). */
static void rh_sizes_due(void)
{
  if (!rh.sizes_ns || rh.sizes_asked || rh_now() - rh.sizes_last < rh.sizes_ns) return;
  rh.sizes_asked = 1;
  rb_postponed_job_register_one(0, rh_sizes_job, NULL);
}

/* -- The tracepoints --------------------------------------------------------- */

/* Put obj on the tape (a slot, its Ruby stack) and in the table. */
static void rh_put(VALUE obj)
{
  VALUE frames[RH_MAXDEPTH];
  int lines[RH_MAXDEPTH];
  int n = rb_profile_frames(0, rh.maxdepth, frames, lines), m = 0;
  heaptape_loc_t in[RH_MAXDEPTH], out[RH_MAXDEPTH];
  for (int i = 0; i < n; i++) {
    uint64_t id = rh_frame_loc(frames[i], lines[i]);
    if (id) in[m++] = id;
  }
  if (!m) in[m++] = rh.internal_id;
  for (int i = 0; i < m; i++) out[i] = in[m - 1 - i];
  if (rh_obj_del(obj)) heaptape_rt_free((void *)obj);   /* freed unseen (another Ractor's GC) */
  heaptape_rt_alloc(out, (size_t)m, (void *)obj, RH_SLOT);
  rh_obj_put(obj, rh_stack(out, m), RH_SLOT, rb_gc_count());
}

/* Every object: NEWOBJ records the object with its stack; FREEOBJ its free;
** GC_START empties the frame cache (iseqs may move or die). Allocates no
** Ruby object. */
static void rh_event(VALUE tpval, void *data)
{
  (void)data;
  if (!rh.active) return;               /* the recorder's own calls check it runs */
  rb_trace_arg_t *ta = rb_tracearg_from_tracepoint(tpval);
  rb_event_flag_t ev = rb_tracearg_event_flag(ta);
  if (ev == RUBY_INTERNAL_EVENT_GC_START) { rh.gen++; rh_sizes_due(); return; }
  VALUE obj = rb_tracearg_object(ta);
  if (ev == RUBY_INTERNAL_EVENT_FREEOBJ) {
    if (RB_BUILTIN_TYPE(obj) == T_IMEMO) rh.gen++;   /* maybe an iseq: its keys go */
    if (rh_obj_del(obj)) heaptape_rt_free((void *)obj);
    return;
  }
  if (!heaptape_rt_due(RH_SLOT)) return;
  rh_put(obj);
}

/*
** Sampled, no hook runs on every object, and most of the time none at all.
** The VM's NEWOBJ and FREEOBJ hooks cost ~1.4x on an allocation-bound script
** however little they do, and any enabled internal GC event hook puts every
** allocation on the VM's slow path (gc.c newobj_of: has_hook, the VM lock
** each time; +14% of trees.rb's instructions). So:
** - Every GC is seen without a hook: the holder's dmark runs in each
**   marking (a root, wb-unprotected: traversed by minor GCs too), bumps the
**   frame cache and asks for a postponed job (rh_gc_job).
** - Sample points are counted in the VM's own total_allocated_objects (every
**   object is one 40-byte slot at NEWOBJ: the recorder's gaps in bytes, in
**   slots). The job turns the GC events (tp_gc) on only when the next point
**   may come before the next GC (rh_cycle: the slots not marked by the last
**   one, the pages the heap may add, RH_SLACK). Those events (a sweep step,
**   a GC start; a few thousand objects apart) ask for the NEWOBJ hook (a postponed
**   job: enabling a hook allocates) once the point is closer than every
**   object the VM can hand out before the next such event (rh_horizon) plus
**   RH_SLACK. Armed, NEWOBJ counts down to the point, records that object,
**   draws the next point and stays on only if it is as close; tp_gc goes
**   off when the next point is beyond the next GC.
** - Deaths: while tp_gc is on, at the end of marking (a sampled object left
**   unmarked is freed by that sweep); and after every GC (rh_deaths), with
**   no hook: a recorded slot now free, or not yet swept and unmarked, or
**   holding a write-barrier-protected object younger than the recorded one
**   must be by then (the slot was freed and taken again), is dead.
*/

/* rb_gc_stat of a key: reads counters, allocates nothing (keys made at start). */
static size_t rh_stat(VALUE key) { return rb_gc_stat(key); }

/* Objects the VM may hand out before its next GC event, and the slack for a
** postponed job: at most its free slots (heap_free_slots: those of swept
** pages, and more); lazily sweeping, a sweep step comes first when they run
** out and stops past 2048 free slots (gc.c, gc_sweep_step: one page more at
** most, and a page pooled for incremental marking); otherwise the pages it
** may add without a GC too (heap_increment). */
static size_t rh_horizon(void)
{
  size_t free = rh_stat(rh.k_free), step = 2048 + 2 * rh.page_objs;
  if (rb_gc_latest_gc_info(rh.k_state) == rh.s_sweeping) return (step < free ? step : free) + RH_SLACK;
  return free + rh_stat(rh.k_pages) * rh.page_objs + RH_SLACK;
}

/* Objects the VM may hand out before its next GC: every slot the last one
** did not mark (during a marking, more) and the pages it may add, plus the
** slack of the job after it. */
static size_t rh_cycle(void)
{
  size_t avail = rh_stat(rh.k_avail), marked = rh_stat(rh.k_marked);
  return (avail > marked ? avail - marked : 0) + rh_stat(rh.k_pages) * rh.page_objs + RH_SLACK;
}

/* The sample point after the object numbered `from` (rh.left carries the
** bytes past the last point, as the recorder's own countdown would). */
static void rh_draw(size_t from)
{
  while (rh.left <= 0) {
    uint64_t g = heaptape_rt_gap();
    rh.left += g ? (int64_t)g : INT64_MAX / 2;   /* not recording: never */
  }
  uint64_t k = ((uint64_t)rh.left + RH_SLOT - 1) / RH_SLOT;
  rh.due = from + k;
  rh.left -= (int64_t)(k * RH_SLOT);
}

static void rh_newobj(VALUE data, const rb_trace_arg_t *ta);
/* rh_newobj as the event hook type (a raw hook takes its own arguments). */
#define RH_NEWOBJ_HOOK ((rb_event_hook_func_t)(void (*)(void))rh_newobj)

/* Postponed job: the NEWOBJ hook on, counting down to the sample point (the
** next object if the point has passed: the job came late). A raw event hook
** rather than a tracepoint: ~50 instructions less per object while on. */
static void rh_arm(void *unused)
{
  (void)unused;
  rh.arm_asked = 0;
  if (!rh.active || !rh.sampled || rh.armed || rh.off) return;
  size_t now = rh_stat(rh.k_alloc);
  rh.skip = rh.due > now ? rh.due - now - 1 : 0;
  rh.armed = 1;
  rb_add_event_hook2(RH_NEWOBJ_HOOK, RUBY_INTERNAL_EVENT_NEWOBJ, Qnil,
                     RUBY_EVENT_HOOK_FLAG_SAFE | RUBY_EVENT_HOOK_FLAG_RAW_ARG);
}

/* Outside any hook: tp_gc on if the sample point may come before the next
** GC (off if not), the NEWOBJ hook too if it is nearer than the next GC event. */
static void rh_plan(void)
{
  size_t now = rh_stat(rh.k_alloc);
  rh.cycle_end = now + rh_cycle();
  if (!rh.gc_on && rh.due <= rh.cycle_end) {
    rh.gc_on = 1;
    rb_tracepoint_enable(rh.tp_gc);
  } else if (rh.gc_on && !rh.armed && !rh.arm_asked && rh.due > rh.cycle_end) {
    rh.gc_on = 0;
    rb_tracepoint_disable(rh.tp_gc);
  }
  if (rh.gc_on && !rh.armed && rh.due <= now + rh_horizon()) rh_arm(NULL);
}

/* Sampled NEWOBJ: count down; at the sample point record the object. */
static void rh_newobj(VALUE data, const rb_trace_arg_t *ta)
{
  (void)data;
  if (!rh.active || !rh.armed) return;
  if (rh.skip) { rh.skip--; return; }
  rh_take(RH_SLOT);
  rh_put(rb_tracearg_object((rb_trace_arg_t *)ta));
  size_t now = rh_stat(rh.k_alloc);
  rh_draw(now);
  if (rh.due - now <= rh_horizon()) { rh.skip = rh.due - now - 1; return; }
  rh.armed = 0;                          /* takes effect when this hook returns */
  rb_remove_event_hook(RH_NEWOBJ_HOOK);
  if (rh.gc_on && rh.due > rh.cycle_end) { rh.gc_on = 0; rb_tracepoint_disable(rh.tp_gc); }
}

/* Sampled GC events: deaths at the end of marking; the frame cache empties
** at a start; every event asks for the NEWOBJ hook if the sample point is near. */
static void rh_gc_event(VALUE tpval, void *data)
{
  (void)data;
  if (!rh.active || !rh.gc_on) return;
  rb_event_flag_t ev = rb_tracearg_event_flag(rb_tracearg_from_tracepoint(tpval));
  if (ev == RUBY_INTERNAL_EVENT_GC_START || ev == RUBY_INTERNAL_EVENT_GC_END_MARK) rh.gen++;
  if (ev == RUBY_INTERNAL_EVENT_GC_END_MARK) {
    for (size_t i = 0; i < rh.ocap; i++) {
      RhObj *e = &rh.obj[i];
      if (e->obj > 1 && !rb_objspace_marked_object_p(e->obj)) {
        heaptape_rt_free((void *)e->obj);
        e->obj = 1;
      }
    }
  }
  if (rh.armed || rh.arm_asked) return;
  if (rh.due > rh_stat(rh.k_alloc) + rh_horizon()) return;
  rh.arm_asked = 1;
  rb_postponed_job_register_one(0, rh_arm, NULL);
}

/* The heap pages (their addresses >> RH_PAGE_SHIFT), sorted; scratch. */
static uintptr_t *rh_pages;
static size_t rh_npages, rh_pages_cap;
static int rh_pages_oom;

/* rb_objspace_each_objects_without_setup callback: a page's slots. */
static int rh_page_add(void *start, void *end, size_t stride, void *data)
{
  (void)end; (void)stride; (void)data;
  if (rh_npages == rh_pages_cap) {
    size_t cap = rh_pages_cap ? rh_pages_cap * 2 : 1024;
    uintptr_t *p = realloc(rh_pages, cap * sizeof(*p));
    if (!p) { rh_pages_oom = 1; return 1; }
    rh_pages = p; rh_pages_cap = cap;
  }
  rh_pages[rh_npages++] = (uintptr_t)start >> RH_PAGE_SHIFT;
  return 0;
}

static int rh_page_cmp(const void *a, const void *b)
{
  uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
  return x < y ? -1 : x > y;
}

/* Whether the object in a recorded slot is a newer one: write-barrier
** protected (its age was never reset) and younger than `n` completed
** markings since the recorded object was made would have left it (each
** marking ages a protected object, up to old at 3; an old parent only
** ages its children faster). */
static int rh_newer(VALUE obj, uint64_t n)
{
  unsigned age = (unsigned)(RBASIC(obj)->flags >> RH_AGE_SHIFT) & 3;
  if (age >= (n < 3 ? n : 3)) return 0;
  ID f[8];
  size_t k = rb_obj_gc_flags(obj, f, 8);
  for (size_t j = 0; j < k; j++)
    if (f[j] == rh.id_wb_protected) return 1;
  return 0;
}

/* Sampled deaths without a hook (after each GC, at stop): a recorded object
** whose page was freed, whose slot is free (or a zombie), not yet swept and
** unmarked, or taken by a newer object (rh_newer) is dead. Never reads a
** page that has been freed: the pages are listed again whenever
** total_freed_pages moved. A slot taken again by a write-barrier-unprotected
** object keeps the recorded one live until that one dies. */
static void rh_deaths(void)
{
  if (!rh.ocap || !heaptape_is_running()) return;
  uint64_t g = rb_gc_count();
  uint64_t done = rb_gc_latest_gc_info(rh.k_state) == rh.s_marking ? g - 1 : g;
  size_t freed = rh_stat(rh.k_freed);
  int listed = 0;
  if (freed != rh.freed_pages) {
    rh_npages = 0;
    rh_pages_oom = 0;
    rb_objspace_each_objects_without_setup(rh_page_add, NULL);
    if (rh_pages_oom || !rh_npages) return;   /* out of memory: next time */
    qsort(rh_pages, rh_npages, sizeof(*rh_pages), rh_page_cmp);
    listed = 1;
  }
  for (size_t i = 0; i < rh.ocap; i++) {
    RhObj *e = &rh.obj[i];
    if (e->obj <= 1) continue;
    int dead;
    uintptr_t pg = (uintptr_t)e->obj >> RH_PAGE_SHIFT;
    if (listed && !bsearch(&pg, rh_pages, rh_npages, sizeof(*rh_pages), rh_page_cmp)) {
      dead = 1;
    } else {
      int t = RB_BUILTIN_TYPE(e->obj);
      if (t == T_MOVED) continue;          /* mid-compaction: its dcompact follows */
      dead = t == T_NONE || t == T_ZOMBIE || !rb_objspace_markable_object_p(e->obj) ||
             (done > e->born && rh_newer(e->obj, done - e->born));
    }
    if (dead) {
      heaptape_rt_free((void *)e->obj);
      e->obj = 1;
    }
  }
  rh.freed_pages = freed;
}

/* Postponed job after each GC (asked by the holder's dmark): deaths, sizes,
** and the hooks the next sample point needs. */
static void rh_gc_job(void *unused)
{
  (void)unused;
  rh.gc_asked = 0;
  if (!rh.active || !rh.sampled || rh.off) return;
  rh_sizes_due();
  rh_deaths();
  rh_plan();
}

/* dmark of the holder: runs in every GC's marking (nothing but counters and
** a postponed job here). */
static void rh_gc_mark(void *unused)
{
  (void)unused;
  if (!rh.active || !rh.sampled || rh.off) return;
  rh.gen++;                               /* iseqs may move or die */
  if (rh.gc_asked) return;
  rh.gc_asked = 1;
  rb_postponed_job_register_one(0, rh_gc_job, NULL);
}

/* -- Other Ractors ----------------------------------------------------------- */

/* Whether the VM has had a second Ractor: libruby's ruby_single_main_ractor
** is NULL from then on (vm_core.h); unknown (0) without that symbol. */
static int rh_multi_ractor(void)
{
  return &ruby_single_main_ractor && !ruby_single_main_ractor;
}

/* Every hook of the session off; sampled, the deaths brought up to date. */
static void rh_hooks_off(void)
{
  if (!rh.sampled) {
    rb_tracepoint_disable(rh.tp);
    return;
  }
  if (rh.gc_on) rb_tracepoint_disable(rh.tp_gc);
  if (rh.armed) rb_remove_event_hook(RH_NEWOBJ_HOOK);
  rh.armed = rh.gc_on = 0;
  rh_deaths();
}

/* Said once a session, on stderr and as a mark on the tape, when objects are
** followed no more (rh_off). */
static void rh_say_off(void)
{
  static const char msg[] = "heaptape: a Ractor other than the main one runs: its objects are "
    "not recorded, nor any object from now on (Ruby 3.1 cannot start a Ractor while object "
    "hooks are on: Ruby bug #18464; docs/RUBY.md)\n";
  if (write(2, msg, sizeof(msg) - 1) < 0) { /* nothing more to say it with */ }
  heaptape_mark("ruby: other Ractors ran (not recorded)");
}

/* Objects followed no more for the rest of the session. Ruby 3.1.2 crashes a
** Ractor that starts while any internal event hook is on (bug #18464: the
** objects it makes before its first frame fire the hook, which reads that
** frame), and its hooks are per Ractor anyway: another Ractor's objects, and
** the frees its GCs make, would never reach ours. So every hook goes off,
** the deaths and sizes are brought up to date, and what was recorded stays
** on the tape as it is; said once on stderr and as a mark on the tape. */
static void rh_off(void)
{
  if (!rh.active || rh.off) return;
  rh_hooks_off();
  rh_sizes();
  rh.off = 1;
  rh_say_off();
}

/* Ractor.new, prepended: the session's hooks off before the first other
** Ractor starts (only the main Ractor can be running then), then the VM's
** own Ractor.new with the same arguments and block. Ractor-safe: any Ractor
** may call it, and past the first one it only reads two words. */
static VALUE rh_ractor_new(int argc, VALUE *argv, VALUE self)
{
  (void)self;
  if (rh.active && !rh.off && !rh_multi_ractor()) rh_off();
  return rb_call_super_kw(argc, argv, RB_PASS_CALLED_KEYWORDS);
}

/* -- Sessions ---------------------------------------------------------------- */

/* on_stop of a tape file: close it. */
static int rh_fd_close(void *arg) { return close((int)(intptr_t)arg) ? -1 : 0; }

/* Fresh tables for a session; 0 or -1. */
static int rh_tables(void)
{
  if (!rh.loc) {
    void *a = mmap(NULL, RH_LOCS * sizeof(RhLoc), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *b = mmap(NULL, RH_ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *c = mmap(NULL, sizeof(RhFrame) << RH_FC_BITS, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED || b == MAP_FAILED || c == MAP_FAILED) return -1;
    rh.loc = a; rh.arena = b; rh.fc = c;
  } else {
    memset(rh.loc, 0, RH_LOCS * sizeof(RhLoc));
  }
  if (!rh.stk) {
    rh.stk = rh_map(RH_STACKS * sizeof(RhStack));
    rh.ids = rh_map(RH_STACK_IDS * sizeof(heaptape_loc_t));
    if (!rh.stk || !rh.ids) return -1;
  } else {
    memset(rh.stk, 0, RH_STACKS * sizeof(RhStack));
  }
  rh.ids_used = 0;
  if (rh.ocap) memset(rh.obj, 0, rh.ocap * sizeof(RhObj));
  else if (rh_obj_grow()) return -1;
  rh.oused = 0;
  rh.gen++;
  rh.nloc = 0;
  rh.arena_used = 0;
  rh.internal_id = RH_LOCS + 1;
  heaptape_loc_declare(rh.internal_id, HEAPTAPE_LOC_INTERNAL, NULL, NULL, 0, 0);
  return 0;
}

/* Begin a session: into path (own tape) or attached to a running recording. */
static void rh_begin(const char *path, int frames, int attach)
{
  if (rh.active || (!attach && heaptape_is_running()))
    rb_raise(rb_eRuntimeError, "heaptape: profiler is running already");
  if (frames < 0 || frames > 256) rb_raise(rb_eArgError, "heaptape: frames must be from 1 to 256");
  if (!attach) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) rb_sys_fail(path);
    struct heaptape_options o = HEAPTAPE_OPTIONS_INIT;
    o.writer = heaptape_fd_writer;
    o.on_stop = rh_fd_close;
    o.arg = (void *)(intptr_t)fd;
    o.unwind = HEAPTAPE_UNWIND_NONE;
    o.frames = frames;
    o.frontend = "ruby3.1";
    o.loc_kinds = 1u << HEAPTAPE_LOC_RUBY | 1u << HEAPTAPE_LOC_INTERNAL;  /* version 6 */
    int rc = heaptape_start(&o);
    if (rc) {
      close(fd);
      rb_raise(rb_eRuntimeError, "heaptape: %s", heaptape_strerror(rc));
    }
    rh.own_tape = 1;
  } else {
    if (!heaptape_is_running()) rb_raise(rb_eRuntimeError, "heaptape: no recording to attach to");
    rh.own_tape = 0;
  }
  if (rh_tables()) {
    if (rh.own_tape) { heaptape_stop(); rh.own_tape = 0; }
    rb_raise(rb_eNoMemError, "heaptape: out of memory");
  }
  int nfr = frames ? frames : heaptape_frames();
  rh.maxdepth = nfr >= 1 && nfr < RH_MAXDEPTH ? nfr : RH_MAXDEPTH;
  uint64_t t = heaptape_sample_bytes();
  rh.sampled = t > 0;
  /* HEAPTAPE_RUBY_SIZES, else record --pprof-every's period, else 1 s */
  const char *se = getenv("HEAPTAPE_RUBY_SIZES");
  if (!se || !*se) se = getenv("HEAPTAPE_RUBY_SNAP");
  double sec = se && *se ? strtod(se, NULL) : 1.0;
  rh.sizes_ns = sec > 0 && sec < 1e9 ? (uint64_t)(sec * 1e9) : 0;
  rh.sizes_last = rh_now();
  rh.sizes_asked = 0;
  rh.off = 0;
  rh.active = 1;
  if (rh_multi_ractor()) {      /* never a hook once the VM had a second Ractor */
    rh.off = 1;
    rh_say_off();
    return;
  }
  if (!rh.sampled) { rb_tracepoint_enable(rh.tp); return; }
  rh.keep = -expm1(-(double)RH_SLOT / (double)t);
  rh.armed = rh.arm_asked = rh.gc_on = 0;
  rh.left = 0;
  rh.freed_pages = rh_stat(rh.k_freed);
  rh_draw(rh_stat(rh.k_alloc));
  rh_plan();
}

/* End the session; the stop rc. */
static int rh_finish(void)
{
  if (!rh.off) {  /* (else they went off with the second Ractor: rh_off) */
    rh_hooks_off();
    rh_sizes();
  }
  rh.active = 0;
  int rc = HEAPTAPE_OK;
  if (rh.own_tape) {
    rc = heaptape_stop();
    if (rc == HEAPTAPE_E_NOTRUNNING) rc = HEAPTAPE_OK;
    rh.own_tape = 0;
  }
  return rc;
}

/* -- Ruby API ----------------------------------------------------------------- */

/* Heaptape.stop -> true */
static VALUE rh_stop(VALUE self)
{
  (void)self;
  if (!rh.active) rb_raise(rb_eRuntimeError, "heaptape: profiler is not running");
  int rc = rh_finish();
  if (rc) rb_raise(rb_eIOError, "heaptape: %s", heaptape_strerror(rc));
  return Qtrue;
}

/* ensure of the block form. */
static VALUE rh_stop_ensure(VALUE unused)
{
  (void)unused;
  if (rh.active) rh_finish();
  return Qnil;
}

/* Heaptape.start(path, frames: 0) [{ block }] -> true, or the block's value */
static VALUE rh_start(int argc, VALUE *argv, VALUE self)
{
  (void)self;
  VALUE path, opts;
  rb_scan_args(argc, argv, "1:", &path, &opts);
  int frames = 0;
  if (!NIL_P(opts)) {
    VALUE f = rb_hash_aref(opts, ID2SYM(rb_intern("frames")));
    if (!NIL_P(f)) frames = NUM2INT(f);
  }
  path = rb_get_path(path);
  rh_begin(StringValueCStr(path), frames, 0);
  if (!rb_block_given_p()) return Qtrue;
  return rb_ensure(rb_yield, Qnil, rh_stop_ensure, Qnil);
}

/* Heaptape.running? -> bool */
static VALUE rh_running(VALUE self)
{
  (void)self;
  return rh.active && heaptape_is_running() ? Qtrue : Qfalse;
}

/* Heaptape._record: start for `heaptape record --ruby` (HEAPTAPE_RUBY_OUTPUT). */
static VALUE rh_record(VALUE self)
{
  (void)self;
  if (rh.active) return Qnil;
  const char *out = getenv("HEAPTAPE_RUBY_OUTPUT");
  if (heaptape_is_running()) rh_begin(NULL, 0, 1);
  else if (out) rh_begin(out, 0, 0);
  return Qnil;
}

/* at_exit: end a session still running. */
static void rh_at_exit(VALUE unused)
{
  (void)unused;
  if (rh.active) rh_finish();
}

/* require "heaptape" */
RH_API void Init_heaptape(void)
{
  VALUE m = rb_define_module("Heaptape");
  rb_define_module_function(m, "start", rh_start, -1);
  rb_define_module_function(m, "stop", rh_stop, 0);
  rb_define_module_function(m, "running?", rh_running, 0);
  rb_define_module_function(m, "_record", rh_record, 0);
  rh.tp = rb_tracepoint_new(0, RUBY_INTERNAL_EVENT_NEWOBJ | RUBY_INTERNAL_EVENT_FREEOBJ |
                            RUBY_INTERNAL_EVENT_GC_START, rh_event, NULL);
  rb_gc_register_address(&rh.tp);
  rh.tp_gc = rb_tracepoint_new(0, RUBY_INTERNAL_EVENT_GC_START | RUBY_INTERNAL_EVENT_GC_END_MARK |
                               RUBY_INTERNAL_EVENT_GC_END_SWEEP | RUBY_INTERNAL_EVENT_GC_ENTER |
                               RUBY_INTERNAL_EVENT_GC_EXIT,
                               rh_gc_event, NULL);
  rb_gc_register_address(&rh.tp_gc);
  rh.k_alloc = ID2SYM(rb_intern("total_allocated_objects"));
  rh.k_free = ID2SYM(rb_intern("heap_free_slots"));
  rh.k_pages = ID2SYM(rb_intern("heap_allocatable_pages"));
  rh.k_avail = ID2SYM(rb_intern("heap_available_slots"));
  rh.k_marked = ID2SYM(rb_intern("heap_marked_slots"));
  rh.k_freed = ID2SYM(rb_intern("total_freed_pages"));
  rh.k_state = ID2SYM(rb_intern("state"));
  rh.s_marking = ID2SYM(rb_intern("marking"));
  rh.s_sweeping = ID2SYM(rb_intern("sweeping"));
  rh.id_wb_protected = rb_intern("wb_protected");
  rb_gc_stat(rh.k_alloc);                 /* the VM makes its stat keys now, not in a hook */
  rb_gc_latest_gc_info(rh.k_state);       /* and its gc_info keys */
  {
    ID f[8];
    rb_obj_gc_flags(m, f, 8);                 /* and the names of the GC flags */
  }
  VALUE consts = rb_const_get(rb_const_get(rb_cObject, rb_intern("GC")), rb_intern("INTERNAL_CONSTANTS"));
  VALUE po = rb_hash_aref(consts, ID2SYM(rb_intern("HEAP_PAGE_OBJ_LIMIT")));
  rh.page_objs = NIL_P(po) ? 1024 : NUM2SIZET(po);
  /* dcompact is called only for a data object with a data pointer */
  rh.holder = TypedData_Wrap_Struct(rb_cObject, &rh_holder_type, &rh);
  rb_gc_register_mark_object(rh.holder);
  rb_set_end_proc(rh_at_exit, Qnil);
  /* Ractor.new wrapped (rh_ractor_new), callable from any Ractor */
  VALUE rw = rb_define_module_under(m, "RactorStart");
  rb_ext_ractor_safe(true);
  rb_define_method(rw, "new", rh_ractor_new, -1);
  rb_ext_ractor_safe(false);
  rb_prepend_module(rb_singleton_class(rb_const_get(rb_cObject, rb_intern("Ractor"))), rw);
}
