/* heaptape -- the Valgrind tool of `heaptape record --access`: replaces the
** allocator (replacemalloc), takes stacks from Valgrind's unwinder, and
** writes a tape (format version 4) whose ACCESS packets hold every load,
** store and modify that touches a live heap block.
**
** A Valgrind tool cannot use libc. It compiles src/format/stream.c and
** src/format/accessw.h as they are (they call no libc but memcpy/memset,
** which the Valgrind core provides) and writes the header, packet frames and
** trailer itself (tape.c's job in libheaptape.so, which needs libc). */
#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_replacemalloc.h"
#include "pub_tool_options.h"
#include "pub_tool_machine.h"
#include "pub_tool_stacktrace.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_wordfm.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_xarray.h"
#include "pub_tool_aspacemgr.h"
#include "libvex_guest_amd64.h"
#include "valgrind.h"

#include "../format/phead.h"
#include "../format/stream.h"
#include "../format/accessw.h"

/* stream.c's one libc call beyond memcpy/memset (MODULE paths). */
size_t strlen(const char *s);
size_t strlen(const char *s) { return VG_(strlen)(s); }

#define HV_FRAMES 64             /* frames per stack */
#define HV_INNER 8               /* inner frames walked (stack_walk), at least, where */
                                 /* the innermost alone found no walk to go on from */
#define HV_INNER_MAX 16          /* and at most */
#define HV_BODY (64u << 10)      /* packet body bytes */
#define HV_CLOCK_EVERY 4096      /* accesses between clock reads */
#define HV_SEG 64                /* --access-sample: accesses a segment (hv_segment) */
#define HV_CD_OFF (8 * HV_SEG)   /* the thread's countdown, in its shadow state, */
#define HV_TAB_OFF (HV_CD_OFF + 8) /* and the number of the segment's table */

/* -- Options -------------------------------------------------------------- */

static const HChar *clo_tape = NULL;  /* --tape=FILE */
static Long clo_sample = 1;           /* --access-sample=N */
static Long clo_pid = 0;              /* --tape-pid=PID: only this process writes
                                      ** (--trace-children=yes follows its execs;
                                      ** other processes run unrecorded) */
static Bool clo_stack_check;          /* --stack-check=yes: every stack reused from
                                      ** the last walk walked whole too and compared */

static Bool hv_process_cmd_line_option(const HChar *arg)
{
  if VG_STR_CLO(arg, "--tape", clo_tape) {}
  else if VG_BINT_CLO(arg, "--access-sample", clo_sample, 1, 1000000000) {}
  else if VG_BINT_CLO(arg, "--tape-pid", clo_pid, 0, 0x7fffffff) {}
  else if VG_BOOL_CLO(arg, "--stack-check", clo_stack_check) {}
  else return VG_(replacement_malloc_process_cmd_line_option)(arg);
  return True;
}

static void hv_print_usage(void)
{
  VG_(printf)("    --tape=FILE               write the tape to FILE\n"
              "    --tape-pid=PID            only process PID writes it [any]\n"
              "    --access-sample=N         keep 1 in N heap accesses [1]\n"
              "    --stack-check=yes         walk each stack reused from the last walk\n"
              "                              whole too, and count those that differ [no]\n");
}

static void hv_print_debug_usage(void) { VG_(printf)("    (none)\n"); }

/* -- The tape file -------------------------------------------------------- */

static Int tape_fd = -1;              /* -1: not recording (a forked child) */
static ULong tape_bytes;              /* bytes written */
static ULong tape_packets;            /* packets written */
static ULong t0_ns;                   /* monotonic clock at the start */
static ULong now_ns;                  /* the coarse clock: last reading */
static ULong g_seq;                   /* last sequence number handed out */
static UInt tape_pid;

/* CRC-32 (IEEE), eight bytes a step ("slicing by 8"): the tape's packets are
** checksummed as they are written, a byte-at-a-time table took a tenth of a
** full --access run. crc_table[k][b]: the CRC of byte b followed by k zeros. */
static UInt crc_table[8][256];

static void crc_init(void)
{
  for (UInt i = 0; i < 256; i++) {
    UInt c = i;
    for (Int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    crc_table[0][i] = c;
  }
  for (UInt i = 0; i < 256; i++)
    for (Int k = 1; k < 8; k++)
      crc_table[k][i] = (crc_table[k - 1][i] >> 8) ^ crc_table[0][crc_table[k - 1][i] & 0xff];
}

static UInt crc_add(UInt crc, const UChar *p, SizeT n)
{
  crc = ~crc;
  for (; n && ((Addr)p & 7); n--) crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  for (; n >= 8; n -= 8, p += 8) {
    ULong w = *(const ULong *)p;  /* little-endian: the first byte lowest */
    UInt lo = (UInt)w ^ crc, hi = (UInt)(w >> 32);
    crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
          crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
          crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
          crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
  }
  for (; n; n--) crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return ~crc;
}

static ULong clock_mono(void)
{
  struct vki_timespec ts;
  VG_(clock_gettime)(&ts, VKI_CLOCK_MONOTONIC);
  return (ULong)ts.tv_sec * 1000000000ull + (ULong)ts.tv_nsec;
}

/* The clock of events: the monotonic clock extrapolated by the CPU's time
** stamp counter between readings every HV_CLOCK_CALIBRATE events. Under
** Valgrind clock_gettime is a system call (no vDSO): one per allocation and
** free was a twentieth of lua5.4's run. Only where the kernel's own clock
** source is the TSC (so the two agree); elsewhere every event reads the
** clock. Never goes back. */
#define HV_CLOCK_CALIBRATE 256
static Bool tsc_ok;                   /* the kernel's clock source is "tsc" */
static ULong tsc_t0, tsc_ns0;         /* the first reading: tsc, ns */
static ULong tsc_base, tsc_nsbase;    /* the last reading */
static ULong tsc_mult;                /* ns per tick, 32.32 fixed point (0: not yet) */
static UInt tsc_events;               /* events since the last reading */
static ULong clock_last;              /* the last time handed out */

static inline ULong tsc_read(void)
{
  UInt lo, hi;
  __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
  return (ULong)hi << 32 | lo;
}

static void tsc_init(void)
{
  SysRes r = VG_(open)("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                       VKI_O_RDONLY, 0);
  if (sr_isError(r)) return;
  HChar buf[16] = { 0 };
  Int n = VG_(read)((Int)sr_Res(r), buf, sizeof(buf) - 1);
  VG_(close)((Int)sr_Res(r));
  tsc_ok = n >= 3 && !VG_(strncmp)(buf, "tsc", 3) && (n == 3 || buf[3] == '\n');
}

static ULong clock_now(void)
{
  ULong ns;
  if (!tsc_ok || !tsc_mult || ++tsc_events >= HV_CLOCK_CALIBRATE) {
    ns = clock_mono();
    if (tsc_ok) {
      ULong tsc = tsc_read();
      if (!tsc_t0) { tsc_t0 = tsc; tsc_ns0 = ns; }
      else if (ns - tsc_ns0 >= 1000000 && tsc > tsc_t0)  /* 1 ms or more since the first */
        tsc_mult = (ULong)(((unsigned __int128)(ns - tsc_ns0) << 32) / (tsc - tsc_t0));
      tsc_base = tsc; tsc_nsbase = ns; tsc_events = 0;
    }
  } else {
    ns = tsc_nsbase + (ULong)(((unsigned __int128)(tsc_read() - tsc_base) * tsc_mult) >> 32);
  }
  if (ns < clock_last) ns = clock_last;
  return clock_last = ns;
}

/* Write all of buf; a failed write stops the recording. */
static void tape_write(const void *buf, SizeT n)
{
  const UChar *p = buf;
  while (n && tape_fd >= 0) {
    Int w = VG_(write)(tape_fd, p, n > 0x40000000 ? 0x40000000 : (Int)n);
    if (w <= 0) {
      VG_(umsg)("heaptape: writing the tape failed; the tape ends here\n");
      VG_(close)(tape_fd);
      tape_fd = -1;
      return;
    }
    p += w; n -= (SizeT)w; tape_bytes += (ULong)w;
  }
}

/* One packet: header (with its checksum) and raw body. */
static void tape_packet(UInt kind, UInt gen, UInt tid, ULong seq0, ULong seq1, ULong ts0,
                        UInt nev, const UChar *body, SizeT len)
{
  UChar h[HT_PHEAD_SIZE];
  HtPhead f = {kind, 0, gen, (UInt)len, (UInt)len, tape_pid, tid, seq0, seq1, ts0, nev};
  UChar *p = ht_phead_put(h, &f);
  UInt crc = crc_add(crc_add(0, h, (SizeT)(p - h)), body, len);
  ht_wu32(p, crc);
  tape_write(h, sizeof(h));
  tape_write(body, len);
  tape_packets++;
}

static UChar *field_uleb(UChar *p, ULong tag, ULong v)
{
  UChar tmp[HT_ULEB_MAX];
  p = ht_wuleb128(p, tag);
  p = ht_wuleb128(p, (ULong)(ht_wuleb128(tmp, v) - tmp));
  return ht_wuleb128(p, v);
}

static UChar *field_bytes(UChar *p, ULong tag, const void *b, SizeT n)
{
  p = ht_wuleb128(p, tag);
  p = ht_wuleb128(p, n);
  return ht_wmem(p, b, n);
}

/* The file header: version 4, the process, its command line, the clock. */
static void tape_header(void)
{
  const HChar *exe = VG_(args_the_exename) ? VG_(args_the_exename) : "";
  SizeT exelen = VG_(strlen)(exe), cap = 512 + 2 * exelen;
  for (Word i = 0; i < VG_(sizeXA)(VG_(args_for_client)); i++)
    cap += VG_(strlen)(*(HChar **)VG_(indexXA)(VG_(args_for_client), i)) + 1;
  UChar *buf = VG_(malloc)("heaptape.header", cap), *argv = VG_(malloc)("heaptape.argv", cap);
  SizeT alen = 0;
  VG_(memcpy)(argv, exe, exelen + 1);
  alen = exelen + 1;
  for (Word i = 0; i < VG_(sizeXA)(VG_(args_for_client)); i++) {
    const HChar *a = *(HChar **)VG_(indexXA)(VG_(args_for_client), i);
    SizeT n = VG_(strlen)(a);
    VG_(memcpy)(argv + alen, a, n + 1);
    alen += n + 1;
  }
  struct vki_timeval tv;
  VG_(gettimeofday)(&tv, NULL);
  UChar *p = ht_wmem(buf, HT_MAGIC, HT_MAGIC_LEN);
  p[0] = HT_VERSION_ACCESS; p[1] = 0; p[2] = 0; p[3] = 0;
  p += 4;
  UChar *lenp = p;
  p += 4;
  p = field_uleb(p, HT_H_PID, tape_pid);
  p = field_bytes(p, HT_H_EXE, exe, exelen);
  p = field_bytes(p, HT_H_ARGV, argv, alen ? alen - 1 : 0);
  UChar clk[2 * HT_ULEB_MAX], *q = ht_wuleb128(ht_wuleb128(clk, HT_CLOCK_MONOTONIC), 1);
  p = field_bytes(p, HT_H_CLOCK, clk, (SizeT)(q - clk));
  p = field_uleb(p, HT_H_SAMPLE, 0);
  p = field_uleb(p, HT_H_START, (ULong)tv.tv_sec * 1000000000ull + (ULong)tv.tv_usec * 1000ull);
  p = field_uleb(p, HT_H_UNWIND, HT_UNWIND_LIBUNWIND);
  p = field_uleb(p, HT_H_FRAMES, HV_FRAMES);
  p = field_bytes(p, HT_H_FRONTEND, "native", 6);
  p = field_uleb(p, HT_H_T0, t0_ns);
  p = field_uleb(p, HT_H_ACCESS, (ULong)clo_sample);
  ht_wu32(lenp, (UInt)(p - lenp - 4));
  p = ht_wu32(p, crc_add(0, buf, (SizeT)(p - buf)));
  tape_write(buf, (SizeT)(p - buf));
  VG_(free)(buf);
  VG_(free)(argv);
}

/* -- Threads: an event stream and a stack tree each ------------------------ */

typedef struct StackSlot { ULong ip; UInt parent, id; } StackSlot;

/* A walk of a thread's stack (stack_walk), innermost frame first. */
#define HV_WALKS 4
typedef struct Walk {
  Addr ip[HV_FRAMES + 1];    /* each frame's ip, */
  Addr sp[HV_FRAMES + 1];    /* stack pointer */
  Addr fp[HV_FRAMES + 1];    /* and frame pointer */
  UInt n;                    /* frames (0: none to reuse) */
  UInt id;                   /* its stack's node (stack_of; 0: not yet) */
  ULong used;                /* when it last served (stack_walks) */
} Walk;

typedef struct ThreadTape {
  HtStream s;                /* its EVENTS stream */
  UChar *buf;                /* the stream's body */
  UInt lwp;                  /* its kernel thread id (the tape's tid) */
  Bool stale;                /* the slot may have a new thread: ask lwp again */
  Bool named;                /* its THREAD record is written */
  StackSlot *st;             /* stack nodes by (parent, ip) */
  UInt stmask, nst;          /* slots - 1, nodes */
  Addr last_ip[HV_FRAMES];   /* the last stack, outermost first, */
  UInt last_id[HV_FRAMES];   /* and its nodes: the next one shares a prefix */
  UInt last_n;               /* its frames */
  Walk walk[HV_WALKS];       /* the last walks, */
  UInt wlast;                /* the latest of them */
  UInt inner, inner_hits;    /* inner frames walked first; walks served since changed */
} ThreadTape;

static ThreadTape **threads;           /* by Valgrind thread id (VG_N_THREADS) */

static inline ULong hv_hash(ULong x)
{
  x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

static void stream_flush(HtStream *s, void *ctx)
{
  (void)ctx;
  if (s->p != s->buf && tape_fd >= 0)
    tape_packet(HT_P_EVENTS, s->gen0, s->tid, s->nev ? s->seq0 : s->seq_prev, s->seq_prev,
                s->ts0, s->nev, s->buf, (SizeT)(s->p - s->buf));
  ht_stream_reset(s);
}

static void thread_stacks_reset(ThreadTape *t)
{
  if (t->st) VG_(free)(t->st);
  t->stmask = 1023;
  t->nst = 0;
  t->last_n = 0;
  for (UInt i = 0; i < HV_WALKS; i++) t->walk[i].n = t->walk[i].id = 0;
  t->inner = HV_INNER;
  t->st = VG_(calloc)("heaptape.stacks", t->stmask + 1, sizeof(StackSlot));
}

/* The state of thread vtid (created, or renewed when the slot was reused). */
static ThreadTape *thread_get(ThreadId vtid)
{
  ThreadTape *t = threads[vtid];
  if (LIKELY(t && !t->stale)) return t;
  UInt lwp = (UInt)VG_(gettid)();
  if (t) {
    t->stale = False;
    if (t->lwp == lwp) return t;
    stream_flush(&t->s, NULL);  /* another thread now: a new stream */
  } else {
    t = threads[vtid] = VG_(calloc)("heaptape.thread", 1, sizeof(ThreadTape));
    t->buf = VG_(malloc)("heaptape.body", HV_BODY);
  }
  t->lwp = lwp;
  if (clo_sample > 1) {  /* its own countdown (a clone copies its parent's) */
    const UChar zero[8] = { 0 };
    VG_(set_shadow_regs_area)(vtid, 1, HV_CD_OFF, sizeof(zero), zero);
  }
  ht_stream_init(&t->s, t->buf, HV_BODY, tape_pid, lwp, stream_flush, NULL);
  t->named = False;
  t->s.ts0 = t->s.ts_prev = t0_ns;
  thread_stacks_reset(t);
  return t;
}

static void hv_thread_created(ThreadId parent, ThreadId child)
{
  (void)parent;
  if (child < VG_N_THREADS && threads[child]) threads[child]->stale = True;
}

/* Stack id of (parent, ip) in t's tree, 0 if new. */
static UInt stack_find(ThreadTape *t, UInt parent, ULong ip, UInt *slot)
{
  UInt i = (UInt)(hv_hash(ip * 31 + parent)) & t->stmask;
  for (;; i = (i + 1) & t->stmask) {
    if (!t->st[i].id) { *slot = i; return 0; }
    if (t->st[i].ip == ip && t->st[i].parent == parent) return t->st[i].id;
  }
}

static void stack_grow(ThreadTape *t)
{
  UInt old = t->stmask + 1;
  StackSlot *o = t->st;
  t->stmask = old * 2 - 1;
  t->st = VG_(calloc)("heaptape.stacks", old * 2, sizeof(StackSlot));
  for (UInt k = 0; k < old; k++)
    if (o[k].id) {
      UInt slot;
      stack_find(t, o[k].parent, o[k].ip, &slot);
      t->st[slot] = o[k];
    }
  VG_(free)(o);
}

/* The stack of thread vtid (ips, innermost first; HV_FRAMES + 1 at most):
** its HV_INNER or more innermost frames from Valgrind's unwinder and the
** rest from one of the thread's last HV_WALKS walks, when the innermost of
** those frames is one of that walk's (the same ip, stack pointer and frame
** pointer) and every frame outside it still has its return address where
** that walk found it. Unwinding from a frame is a function of its registers
** and of the stack memory of the frames outside it, which only those frames
** write (their return addresses, checked here, and saved registers): the
** frames are those a whole walk gives, for a fraction of its cost (a
** program allocates from deep in the same call chains: lua5.4's stacks are
** 30 frames deep, and unwinding them was a tenth of its run with
** --access-sample). Programs alternate among a few allocation paths: with
** the last four walks kept, 97% of lua5.4's and perl's allocations have
** the innermost frame (the replacement function's registers, no unwinding)
** of one of them, so that the stack is that walk's whole, and so is its node
** in the stack tree (stack_of). The outer frames' frame pointers must not
** lie between the two walks' lowest stack addresses (the unwinder's
** fallback for a frame without CFI tests them against it). A walk the
** cache cannot serve is a whole one. With --stack-check every stack is
** also walked whole and compared. */
static ULong stack_walks, stack_reused, stack_diffs;

/* Where walk w goes on from the n inner frames (ips, sps, fps) of a new one
** (the index of its first frame outside them), or 0 where it cannot serve.
** lo, top: the thread's stack pointer and stack top. */
static UInt stack_match(ThreadId vtid, const Walk *wk, const Addr *ips, const Addr *sps,
                        const Addr *fps, UInt n, Addr lo, Addr top)
{
  UInt w = wk->n, j = 0;
  if (w == 0 || w > HV_FRAMES) return 0;  /* none, or a truncated one */
  Addr sp = sps[n - 1];
  while (j < w && wk->sp[j] < sp) j++;
  if (j == w || wk->sp[j] != sp || wk->ip[j] != ips[n - 1] || wk->fp[j] != fps[n - 1] ||
      sp < lo || wk->sp[w - 1] >= top - sizeof(Addr) || top - lo >= VG_(thread_get_stack_size)(vtid))
    return 0;
  Addr fmin_new = sps[0] - VG_STACK_REDZONE_SZB, fmin_old = wk->sp[0] - VG_STACK_REDZONE_SZB;
  Addr flo = fmin_new < fmin_old ? fmin_new : fmin_old, fhi = fmin_new ^ fmin_old ^ flo;
  for (UInt m = j + 1; m < w; m++) {
    const Addr *ra = (const Addr *)wk->sp[m];  /* CFI, frame pointer: ra[-1]; the */
    if ((ra[-1] != wk->ip[m] + 1 && ra[0] != wk->ip[m] + 1) ||  /* last resort: ra[0] */
        (wk->fp[m] >= flo && wk->fp[m] < fhi))
      return 0;
  }
  return j + 1;
}

/* The first of t's last walks (latest first) that goes on from the n inner
** frames, into *r; where it goes on (stack_match), or 0 if none does. */
static UInt stack_match_any(ThreadId vtid, const ThreadTape *t, const Addr *ips, const Addr *sps,
                            const Addr *fps, UInt n, UInt *r)
{
  Addr lo = VG_(get_SP)(vtid), top = VG_(thread_get_stack_max)(vtid);
  for (UInt i = 0; i < HV_WALKS; i++) {
    *r = (t->wlast + HV_WALKS - i) % HV_WALKS;
    UInt j = stack_match(vtid, &t->walk[*r], ips, sps, fps, n, lo, top);
    if (j) return j;
  }
  return 0;
}

/* The frames of a walk (ips, n of them) less those at its outer end that
** are no code: beyond the program's first frame (_start) Valgrind's last
** resort takes the word at the stack pointer for a return address (a
** pointer into argv, a count). */
static UInt walk_trim(const Addr *ips, UInt n)
{
  while (n > 1) {
    const NSegment *seg = VG_(am_find_nsegment)(ips[n - 1]);
    if (seg && seg->hasX) break;
    n--;
  }
  return n;
}

/* Walk thread vtid's stack (HV_FRAMES + 1 frames at most) into one of t's
** walks, which becomes t->wlast: the one it equals (its node kept), or the
** one that served least recently. */
static const Walk *stack_walk(ThreadId vtid, ThreadTape *t)
{
  Addr ips[2 * HV_INNER_MAX], sps[2 * HV_INNER_MAX], fps[2 * HV_INNER_MAX];
  UInt k = 1, n = VG_(get_StackTrace)(vtid, ips, k, sps, fps, 0), j = 0, r = 0;
  stack_walks++;
  if (n == k && !(j = stack_match_any(vtid, t, ips, sps, fps, n, &r))) {
    k = t->inner;  /* the innermost frame (registers only) is no walk's */
    n = VG_(get_StackTrace)(vtid, ips, k, sps, fps, 0);
  }
  if (k > 1 && n == k && !(j = stack_match_any(vtid, t, ips, sps, fps, n, &r))) {
    /* a deeper call path than the last ones: twice as many inner frames */
    k *= 2;
    n = VG_(get_StackTrace)(vtid, ips, k, sps, fps, 0);
    if (n == k && (j = stack_match_any(vtid, t, ips, sps, fps, n, &r)) && t->inner < HV_INNER_MAX)
      t->inner += 2;  /* the next walk starts deeper */
  } else if (k > 1 && j && ++t->inner_hits == 1024) {  /* try fewer from time to time */
    t->inner_hits = 0;
    if (t->inner > HV_INNER) t->inner--;
  }
  Walk *wk;
  if (j == n && !VG_(memcmp)(t->walk[r].ip, ips, n * sizeof(Addr))) {
    wk = &t->walk[r];  /* the same frames as walk r: its inner ones from the */
    wk->used = stack_walks;
    for (UInt i = 0; i < n; i++) wk->sp[i] = sps[i], wk->fp[i] = fps[i];  /* new walk */
    t->wlast = r;
    stack_reused++;
  } else {
    UInt old = j && r == 0 ? 1 : 0;  /* not walk r: its frames are copied */
    for (UInt i = 0; i < HV_WALKS; i++)
      if (!(j && i == r) && t->walk[i].used < t->walk[old].used) old = i;
    t->wlast = old;
    wk = &t->walk[old];
    wk->id = 0;
    wk->used = stack_walks;
    if (!j && n == k) {  /* a whole walk */
      wk->n = walk_trim(wk->ip, VG_(get_StackTrace)(vtid, wk->ip, HV_FRAMES + 1, wk->sp, wk->fp, 0));
      return wk;
    }
    if (j) {  /* walk r's frames j.. follow the n inner ones */
      const Walk *from = &t->walk[r];
      UInt keep = from->n - j < HV_FRAMES + 1 - n ? from->n - j : HV_FRAMES + 1 - n;
      VG_(memcpy)(wk->ip + n, from->ip + j, keep * sizeof(Addr));
      VG_(memcpy)(wk->sp + n, from->sp + j, keep * sizeof(Addr));
      VG_(memcpy)(wk->fp + n, from->fp + j, keep * sizeof(Addr));
      wk->n = n + keep;
      stack_reused++;
    } else {
      wk->n = n = walk_trim(ips, n);  /* the whole stack */
    }
    for (UInt i = 0; i < n; i++) wk->ip[i] = ips[i], wk->sp[i] = sps[i], wk->fp[i] = fps[i];
  }
  if (j && clo_stack_check) {
    Addr full[HV_FRAMES + 1];
    UInt fn = walk_trim(full, VG_(get_StackTrace)(vtid, full, HV_FRAMES + 1, NULL, NULL, 0));
    if (fn != wk->n || VG_(memcmp)(full, wk->ip, fn * sizeof(Addr))) stack_diffs++;
  }
  return wk;
}

/* The stack of the allocation being made, as an id of t's tree (defining
** the nodes it lacks); the replacement function's own frame is left out.
** A walk equal to one of the last ones has its node already. The frames it
** shares with the thread's last stack from the outermost on take that
** stack's nodes without a look-up (a program allocates from the same few
** call paths: the look-ups were most of a stack's cost). */
static UInt stack_of(ThreadId vtid, ThreadTape *t)
{
  Walk *wk = (Walk *)stack_walk(vtid, t);
  if (wk->id) return wk->id;
  const Addr *ips = wk->ip;
  UInt n = wk->n;
  if (n <= 1) return 0;
  UInt depth = n - 1, j = 0, parent = 0;  /* frame j (outermost first) is ips[depth - j] */
  for (; j < depth && j < t->last_n && t->last_ip[j] == ips[depth - j]; j++) parent = t->last_id[j];
  for (; j < depth; j++) {
    UInt slot, id = stack_find(t, parent, ips[depth - j], &slot);
    if (!id) break;
    t->last_ip[j] = ips[depth - j];
    t->last_id[j] = parent = id;
  }
  if (j < depth) {  /* new from here on: nodes nst+1 .. in one STACK record */
    uint64_t vals[HV_FRAMES];
    UInt first = t->nst + 1, up = parent, k = 0;
    for (; j < depth; j++) {
      UInt slot;
      if ((t->nst + 2) * 2 > t->stmask + 1) stack_grow(t);
      stack_find(t, parent, ips[depth - j], &slot);
      t->st[slot] = (StackSlot){ .ip = ips[depth - j], .parent = parent, .id = ++t->nst };
      t->last_ip[j] = ips[depth - j];
      t->last_id[j] = parent = t->nst;
      vals[k++] = (ULong)ips[depth - j] << 1;
    }
    ht_stream_stack_define(&t->s, first, up, vals, k);
  }
  t->last_n = depth;
  return wk->id = parent;
}

/* -- Modules: MODULE records for the objects Valgrind read ---------------- */

#define HV_MODS 1024
static Addr mods_seen[HV_MODS];       /* text addresses of objects recorded */
static UInt mods_n;
static Bool mods_dirty = True;

static void hv_new_mem_mmap(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di)
{
  (void)a; (void)len; (void)rr; (void)ww; (void)di;
  if (xx) mods_dirty = True;
}

static void hv_new_mem_startup(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di)
{
  hv_new_mem_mmap(a, len, rr, ww, xx, di);
}

/* Record objects with code not yet recorded. */
static void mods_scan(ThreadTape *t)
{
  mods_dirty = False;
  for (const DebugInfo *di = VG_(next_DebugInfo)(NULL); di; di = VG_(next_DebugInfo)(di)) {
    Addr text = VG_(DebugInfo_get_text_avma)(di);
    SizeT tsize = VG_(DebugInfo_get_text_size)(di);
    const HChar *path = VG_(DebugInfo_get_filename)(di);
    if (!text || !tsize || !path) continue;
    Addr self = (Addr)&mods_scan;  /* the tool's own binary is not the program's */
    if (self >= text && self < text + tsize) continue;
    Bool seen = False;
    for (UInt i = 0; i < mods_n && !seen; i++) seen = mods_seen[i] == text;
    if (seen || mods_n >= HV_MODS) continue;
    mods_seen[mods_n++] = text;
    ULong bias = (ULong)VG_(DebugInfo_get_text_bias)(di);
    HtSegment seg = { .vaddr = text - bias, .memsz = tsize, .prot = 5 };
    ht_stream_module(&t->s, ++g_seq, 0, path, bias, NULL, 0, &seg, 1);
  }
}

/* -- Live blocks ---------------------------------------------------------- */

typedef struct Block {
  Addr payload;              /* its address */
  SizeT size;                /* requested bytes */
  SizeT isz;                 /* bytes it covers (>= 1) */
  ULong seq;                 /* sequence number of its ALLOC */
} Block;

/* The small blocks (up to HV_SMALL bytes, from the size classes below: most
** of them) are kept in a table indexed by address, as a shadow memory: one
** 8-byte slot per 16 bytes of heap, (sequence number << 9 | size + 1) of
** the block that starts there (0: none), in chunks for 1 MiB of heap each
** made on demand (a two-level directory by address). An allocation or
** a free is a store to its slot; an address inside one is found by trying
** the HV_SMALL / 16 slots below its own (neighbours: a cache line or two).
** Allocators hand out neighbouring addresses one after another, so the
** slots of successive allocations and frees share cache lines, where a hash
** table sent each to a random slot of tens of megabytes (a cache miss each:
** a tenth of lua5.4's run with --access-sample). Its memory is about half
** of the size classes' chunks (1 MiB pieces of Valgrind's arena, which
** keeps the client's heap together). The others (large or over-aligned blocks, few)
** are kept in an interval tree (DHAT's WordFM). */
#define HV_SMALL 256
#define HV_ALIGN 16
#define HV_SIZE_BITS 9                /* a small block's size + 1 (<= HV_SMALL + 1) */
#define HV_SEQ_MAX (~0ull >> HV_SIZE_BITS)  /* larger sequence numbers: the tree */
#define HV_CHUNK_SHIFT 20             /* 1 MiB of heap a chunk: 64 Ki slots */
#define HV_MID_BITS 14                /* chunks per directory page */
#define HV_TOP_SHIFT (HV_CHUNK_SHIFT + HV_MID_BITS)
#define HV_TOP 8192                   /* directory pages: 47-bit addresses */
static ULong **bdir[HV_TOP];          /* chunks by address >> HV_CHUNK_SHIFT */
static WordFM *bigs;                  /* the other blocks: Block* by interval */
static UWord nbigs;
static Addr heap_lo = ~(Addr)0, heap_hi;  /* bounds of every block so far */
static ULong heap_span;               /* heap_hi - heap_lo (0 before the first block):
                                      ** the generated code tests against it inline */

static Word block_cmp(UWord k1, UWord k2)
{
  const Block *a = (const Block *)k1, *b = (const Block *)k2;
  if (a->payload + a->isz <= b->payload) return -1;
  if (b->payload + b->isz <= a->payload) return 1;
  return 0;
}

/* The slot of the 16-byte aligned address p, or NULL where no chunk is
** (made when make). */
static inline ULong *bslot(Addr p, Bool make)
{
  UWord top = p >> HV_TOP_SHIFT, mid = (p >> HV_CHUNK_SHIFT) & ((1u << HV_MID_BITS) - 1);
  if (UNLIKELY(top >= HV_TOP)) return NULL;
  ULong **page = bdir[top];
  if (UNLIKELY(!page)) {
    if (!make) return NULL;
    page = bdir[top] = VG_(calloc)("heaptape.blockdir", 1u << HV_MID_BITS, sizeof(ULong *));
  }
  ULong *chunk = page[mid];
  if (UNLIKELY(!chunk)) {
    if (!make) return NULL;
    chunk = page[mid] = VG_(calloc)("heaptape.blocks", 1u << (HV_CHUNK_SHIFT - 4), sizeof(ULong));
  }
  return &chunk[(p >> 4) & ((1u << (HV_CHUNK_SHIFT - 4)) - 1)];
}

static inline Block bslot_block(Addr p, ULong v)
{
  SizeT size = (SizeT)(v & ((1u << HV_SIZE_BITS) - 1)) - 1;
  return (Block){ .payload = p, .size = size, .isz = size ? size : 1, .seq = v >> HV_SIZE_BITS };
}

/* -- The client's small blocks ------------------------------------------ */

/* Blocks of up to HV_SMALL bytes (at most 16-byte aligned) come from size
** classes of 16 bytes: a free list each (the freed blocks, last in first
** out) and chunks of Valgrind's client arena cut in turn, as a thread cache
** of glibc's malloc does. Valgrind's own allocator (VG_(cli_malloc), which
** the larger ones still use) unlinks and merges neighbours on every call: a
** twentieth of lua5.4's run with --access-sample and a tenth of perl's. A
** freed small block is kept for its class (never merged). These are the
** blocks of the table by address above. */
#define HV_POOL_CHUNK (1u << 20)
static void *pool_free_list[HV_SMALL / HV_ALIGN + 1];
static Addr pool_next, pool_end;      /* the chunk being cut */

static inline Bool pool_takes(SizeT size, SizeT align)
{
  return size <= HV_SMALL && align <= HV_ALIGN;
}

static inline UInt pool_class(SizeT size)
{
  return size ? (UInt)((size + HV_ALIGN - 1) / HV_ALIGN) : 1;
}

static void *pool_alloc(SizeT size)
{
  UInt c = pool_class(size);
  void *p = pool_free_list[c];
  if (p) {
    pool_free_list[c] = *(void **)p;
    return p;
  }
  SizeT n = (SizeT)c * HV_ALIGN;
  if (pool_end - pool_next < n) {
    void *chunk = VG_(cli_malloc)(HV_ALIGN, HV_POOL_CHUNK);
    if (!chunk) return NULL;
    if (((Addr)chunk + HV_POOL_CHUNK) >> HV_TOP_SHIFT >= HV_TOP)
      VG_(tool_panic)("heaptape: the client arena beyond 47-bit addresses");
    pool_next = (Addr)chunk;
    pool_end = pool_next + HV_POOL_CHUNK;
  }
  p = (void *)pool_next;
  pool_next += n;
  return p;
}

static void pool_free(void *p, SizeT size)
{
  UInt c = pool_class(size);
  *(void **)p = pool_free_list[c];
  pool_free_list[c] = p;
}

/* Memory for a block of size bytes: a small one's or Valgrind's. */
static void *mem_alloc(SizeT size, SizeT align, Bool *pooled)
{
  *pooled = pool_takes(size, align);
  return *pooled ? pool_alloc(size) : VG_(cli_malloc)(align, size);
}

static void mem_free(void *p, SizeT size, Bool pooled)
{
  if (pooled) pool_free(p, size);
  else VG_(cli_free)(p);
}

/* The live block at exactly p (a copy), or False. */
static Bool block_at(Addr p, Block *out)
{
  ULong *s = bslot(p, False);
  if (s && *s) { *out = bslot_block(p, *s); return True; }
  if (!nbigs) return False;
  Block fake = { .payload = p, .isz = 1 };
  UWord k, v;
  if (!VG_(lookupFM)(bigs, &k, &v, (UWord)&fake) || ((Block *)k)->payload != p) return False;
  *out = *(Block *)k;
  return True;
}

/* The live block containing a (a copy), or False: a small one starting at
** one of the aligned addresses below a (the nearest below a that is a block
** is the only one that may contain it), or a big one. */
static Bool block_containing(Addr a, Block *out)
{
  if (nbigs) {
    Block fake = { .payload = a, .isz = 1 };
    UWord k, v;
    if (VG_(lookupFM)(bigs, &k, &v, (UWord)&fake)) { *out = *(const Block *)k; return True; }
  }
  Addr p = a & ~(Addr)(HV_ALIGN - 1);
  for (UInt i = 0; i < HV_SMALL / HV_ALIGN && p >= heap_lo; i++, p -= HV_ALIGN) {
    const ULong *s = bslot(p, False);
    if (s && *s) {
      *out = bslot_block(p, *s);
      return a - p < out->isz;
    }
  }
  return False;
}

/* A direct-mapped cache of blocks found, by address / 32, before the table:
** programs alternate among a few blocks (a table and its strings), which a
** one-entry cache missed half the time on lua5.4 (the tree's compares then
** took a fifth of the run). A slot copies its block's bounds and sequence
** number, so a hit is one compare; a block's slots are cleared when it is
** freed. */
#define HV_BCACHE 4096
#define HV_BCACHE_SHIFT 5
typedef struct BlockSlot {
  Addr lo;                   /* the block's first byte */
  SizeT isz;                 /* its bytes (0: empty slot) */
  ULong seq;                 /* its ALLOC's sequence number */
} BlockSlot;
static BlockSlot bcache[HV_BCACHE];

static inline BlockSlot *bcache_slot(Addr a)
{
  return &bcache[(a >> HV_BCACHE_SHIFT) & (HV_BCACHE - 1)];
}

static const BlockSlot *block_find(Addr a)
{
  BlockSlot *s = bcache_slot(a);
  if (LIKELY(a - s->lo < s->isz)) return s;
  Block b;
  if (!block_containing(a, &b)) return NULL;
  *s = (BlockSlot){ .lo = b.payload, .isz = b.isz, .seq = b.seq };
  return s;
}

/* Clear the slots that may hold b (those of the addresses it covers). */
static void bcache_forget(const Block *b)
{
  Addr first = b->payload >> HV_BCACHE_SHIFT, last = (b->payload + b->isz - 1) >> HV_BCACHE_SHIFT;
  ULong n = last - first + 1 < HV_BCACHE ? last - first + 1 : HV_BCACHE;
  for (ULong i = 0; i < n; i++) {
    BlockSlot *s = &bcache[(first + i) & (HV_BCACHE - 1)];
    if (s->lo == b->payload) *s = (BlockSlot){ 0 };
  }
}

/* -- Events --------------------------------------------------------------- */

static HtAccessW accw;                /* the ACCESS packet being filled */
static UChar *accbuf;                 /* its body */
static ULong acc_countdown = 1;       /* --access-sample: the kernel's accesses until
                                      ** the next one kept (a thread's own: hv_segment) */
static ULong acc_rng = 0x9E3779B97F4A7C15ull;
static double acc_gap_scale;          /* 1 / ln(1 - 1/N) (negative) */
static UInt acc_since_clock;          /* kept accesses since the clock was read */
static UInt acc_lwp;                  /* the running thread's lwp (start_client_code) */

static void access_flush(void)
{
  ht_accessw_end_run(&accw);
  if (ht_accessw_len(&accw) && tape_fd >= 0)
    tape_packet(HT_P_ACCESS, 0, 0, accw.seq0, accw.seq1, accw.ts0, accw.nev, accbuf,
                ht_accessw_len(&accw));
  ht_accessw_init(&accw, accbuf, HV_BODY);
}

/* Start an event of thread vtid: modules first, the clock read. */
/* The THREAD record of t, at its first event (as the recorder writes it):
** the kernel's name of the thread (comm), or the program's name (as the
** kernel makes comm at exec) where comm is still the name of Valgrind's
** tool (heaptape-amd64-linux, exec'd by valgrind). */
static void thread_name(ThreadTape *t)
{
  HChar path[48], name[16];
  Int n = 0;
  VG_(sprintf)(path, "/proc/self/task/%u/comm", t->lwp);
  SysRes r = VG_(open)(path, VKI_O_RDONLY, 0);
  if (!sr_isError(r)) {
    n = VG_(read)((Int)sr_Res(r), name, 15);
    VG_(close)((Int)sr_Res(r));
  }
  if (n < 0) n = 0;
  while (n > 0 && name[n - 1] == '\n') n--;
  name[n] = 0;
  if (!n || !VG_(strncmp)(name, "heaptape-", 9)) {
    const HChar *exe = VG_(args_the_exename) ? VG_(args_the_exename) : "";
    const HChar *slash = VG_(strrchr)(exe, '/');
    if (slash) exe = slash + 1;
    for (n = 0; n < 15 && exe[n]; n++) name[n] = exe[n];
    name[n] = 0;
  }
  ht_stream_string(&t->s, HT_R_THREAD, ++g_seq, name, (SizeT)n);
  t->named = True;
}

static ThreadTape *event_begin(ThreadId vtid)
{
  ThreadTape *t = thread_get(vtid);
  if (UNLIKELY(mods_dirty)) mods_scan(t);
  if (UNLIKELY(!t->named)) thread_name(t);
  now_ns = clock_now();
  ht_stream_time(&t->s, now_ns);
  return t;
}

static inline void access_settle(void);

/* Keep the block just allocated at p (a small one when pooled) and write
** its ALLOC. */
static void block_keep(ThreadId vtid, void *p, SizeT size, SizeT align, UInt kind, Bool pooled)
{
  access_settle();  /* before the tables change */
  Block b = { .payload = (Addr)p, .size = size, .isz = size ? size : 1 };
  if ((Addr)p < heap_lo) heap_lo = (Addr)p;
  if ((Addr)p + b.isz > heap_hi) heap_hi = (Addr)p + b.isz;
  heap_span = heap_hi - heap_lo;
  if (tape_fd >= 0) {
    ThreadTape *t = event_begin(vtid);
    UInt stack = stack_of(vtid, t);
    b.seq = ++g_seq;
    ht_stream_alloc(&t->s, b.seq, kind, size, (Addr)p, stack,
                    HT_K_HAS_ALIGN(kind) ? align : 0, 0);
  }
  if (pooled) {
    if (UNLIKELY(b.seq > HV_SEQ_MAX)) VG_(tool_panic)("heaptape: 2^55 events");
    *bslot(b.payload, True) = b.seq << HV_SIZE_BITS | (b.size + 1);
  } else {
    Block *big = VG_(malloc)("heaptape.block", sizeof(Block));
    *big = b;
    VG_(addToFM)(bigs, (UWord)big, 0);
    nbigs++;
  }
}

static void *block_new(ThreadId vtid, SizeT size, SizeT align, UInt kind, Bool zero)
{
  Bool pooled;
  void *p = mem_alloc(size, align, &pooled);
  if (!p) return NULL;
  if (zero) VG_(memset)(p, 0, size);
  block_keep(vtid, p, size, align, kind, pooled);
  return p;
}

/* Forget the block at p (our allocation; its size into size, whether it
** is a small one into pooled); False if p is not one. */
static Bool block_drop(ThreadId vtid, void *p, UInt kind, SizeT *size, Bool *pooled)
{
  access_settle();  /* before the block goes */
  Block b;
  ULong *s = bslot((Addr)p, False);
  if ((*pooled = s && *s)) {
    b = bslot_block((Addr)p, *s);
    *s = 0;
  } else {
    Block fake = { .payload = (Addr)p, .isz = 1 };
    UWord k, v;
    if (!nbigs || !VG_(lookupFM)(bigs, &k, &v, (UWord)&fake) || ((Block *)k)->payload != (Addr)p)
      return False;
    b = *(Block *)k;
    VG_(delFromFM)(bigs, NULL, NULL, k);
    VG_(free)((Block *)k);
    nbigs--;
  }
  bcache_forget(&b);
  if (tape_fd >= 0) {
    ThreadTape *t = event_begin(vtid);
    ht_stream_free(&t->s, ++g_seq, kind, (Addr)p, b.size);
  }
  *size = b.size;
  return True;
}

static void block_free(ThreadId vtid, void *p, UInt kind)
{
  SizeT size;
  Bool pooled;
  if (p && block_drop(vtid, p, kind, &size, &pooled)) mem_free(p, size, pooled);
}

static void *hv_malloc(ThreadId t, SizeT n)
{ return block_new(t, n, VG_(clo_alignment), HT_K_MALLOC, False); }
static void *hv_new(ThreadId t, SizeT n)
{ return block_new(t, n, VG_(clo_alignment), HT_K_NEW, False); }
static void *hv_new_aligned(ThreadId t, SizeT n, SizeT a)
{ return block_new(t, n, a, HT_K_NEW_ALIGNED, False); }
static void *hv_vec_new(ThreadId t, SizeT n)
{ return block_new(t, n, VG_(clo_alignment), HT_K_NEW_ARRAY, False); }
static void *hv_vec_new_aligned(ThreadId t, SizeT n, SizeT a)
{ return block_new(t, n, a, HT_K_NEW_ARRAY_ALIGNED, False); }
static void *hv_memalign(ThreadId t, SizeT a, SizeT n)
{ return block_new(t, n, a, HT_K_ALIGNED, False); }
static void *hv_calloc(ThreadId t, SizeT m, SizeT n)
{
  if (n && m > (SizeT)-1 / n) return NULL;
  return block_new(t, m * n, VG_(clo_alignment), HT_K_CALLOC, True);
}
static void hv_free(ThreadId t, void *p) { block_free(t, p, HT_K_MALLOC); }
static void hv_delete(ThreadId t, void *p) { block_free(t, p, HT_K_NEW); }
static void hv_delete_aligned(ThreadId t, void *p, SizeT a)
{ (void)a; block_free(t, p, HT_K_NEW_ALIGNED); }
static void hv_vec_delete(ThreadId t, void *p) { block_free(t, p, HT_K_NEW_ARRAY); }
static void hv_vec_delete_aligned(ThreadId t, void *p, SizeT a)
{ (void)a; block_free(t, p, HT_K_NEW_ARRAY_ALIGNED); }

static void access_core(Addr a, SizeT sz, UInt kind);

/* realloc: FREE(old, REALLOC) then ALLOC(new, REALLOC), as the recorder
** writes it. The copy is a load of the old block's bytes kept and a store of
** them into the new (DHAT counts it so; a program's realloc copies too). */
static void *hv_realloc(ThreadId vtid, void *p, SizeT n)
{
  if (!p) return block_new(vtid, n, VG_(clo_alignment), HT_K_REALLOC, False);
  Block b;
  if (!block_at((Addr)p, &b)) return NULL;  /* not a block of ours */
  SizeT old = b.size;
  Bool pooled, was_pooled;
  void *q = mem_alloc(n, VG_(clo_alignment), &pooled);
  if (!q) return NULL;
  SizeT kept = old < n ? old : n;
  VG_(memcpy)(q, p, kept);
  access_core((Addr)p, kept, HT_AK_LOAD);
  block_drop(vtid, p, HT_K_REALLOC, &old, &was_pooled);
  mem_free(p, old, was_pooled);
  block_keep(vtid, q, n, 0, HT_K_REALLOC, pooled);
  access_core((Addr)q, kept, HT_AK_STORE);
  return q;
}

static SizeT hv_usable_size(ThreadId t, void *p)
{
  (void)t;
  Block b;
  return block_at((Addr)p, &b) ? b.size : 0;
}

/* -- Accesses ------------------------------------------------------------- */

/* ln x for 0 < x <= 1 (a tool has no libm): x = m 2^e with m in
** [sqrt(1/2), sqrt(2)), ln m = 2 atanh z with |z| = |m - 1| / (m + 1) < 0.172,
** whose series' terms past z^13 are below 1e-11 (it runs at every kept access). */
static double ln_unit(double x)
{
  union { double d; ULong u; } v = { .d = x };
  Int e = (Int)((v.u >> 52) & 0x7ff) - 1023;
  v.u = (v.u & ((1ull << 52) - 1)) | (1023ull << 52);
  if (v.d > 1.4142135623730951) { v.d *= 0.5; e++; }
  double z = (v.d - 1) / (v.d + 1), z2 = z * z;
  double sum = z * (1 + z2 * (1.0 / 3 + z2 * (1.0 / 5 + z2 * (1.0 / 7 + z2 * (1.0 / 9 +
               z2 * (1.0 / 11 + z2 * (1.0 / 13)))))));
  return 2 * sum + e * 0.69314718055994531;
}

/* The scale of sample_gap for 1 in n: 1 / ln(1 - 1/n); ln(1 - p) by its
** series for small p, where 1 - p would lose p's digits. */
static double sample_scale(Long n)
{
  double p = 1.0 / (double)n, l;
  if (p < 0.01) l = -(p + p * p / 2 + p * p * p / 3 + p * p * p * p / 4);
  else l = ln_unit(1 - p);
  return 1 / l;
}

/* ln for sample_gap, which runs at every kept access: m in [1, 2) is
** c (1 + (i + 1/2) / 256, from m's top 8 bits) times 1 + t with |t| < 1/512,
** ln m = ln c + t - t^2/2 + t^3/3 (error below 4e-12): no division. */
static double ln_c[256], inv_c[256];

static void ln_fast_init(void)
{
  for (Int i = 0; i < 256; i++) {
    double c = 1 + (i + 0.5) / 256;
    inv_c[i] = 1 / c;
    ln_c[i] = ln_unit(c / 2) + 0.69314718055994531;
  }
}

static inline double ln_fast(double x)
{
  union { double d; ULong u; } v = { .d = x };
  Int e = (Int)((v.u >> 52) & 0x7ff) - 1023;
  UInt i = (UInt)(v.u >> 44) & 0xff;
  v.u = (v.u & ((1ull << 52) - 1)) | (1023ull << 52);
  double t = v.d * inv_c[i] - 1;
  return ln_c[i] + t * (1 - t * (0.5 - t * (1.0 / 3))) + e * 0.69314718055994531;
}

/* The gap for the 53-bit random number r: 1 + floor(ln u / ln(1 - 1/N))
** with u = (r + 1) / 2^53 in (0, 1], geometric with mean N. */
static ULong gap_of(ULong r)
{
  double u = (double)(r + 1) * (1.0 / 9007199254740992.0);
  double g = ln_fast(u) * acc_gap_scale;
  return g < 1e18 ? 1 + (ULong)(Long)g : 1000000000000000000ull;
}

/* gap_of of every r with these top HV_GAP_BITS bits, where they all have the
** same (0 where they differ): gap_of falls as r rises, so the two ends of
** the range tell. For 1 in 100, nine draws in ten find their gap here, with
** no logarithm (whose chain of multiplications was a fortieth of lua5.4's
** run); the others compute it. The same gaps either way. */
#define HV_GAP_BITS 12
static UInt gap_tab[1u << HV_GAP_BITS];

static void gap_tab_init(void)
{
  for (ULong j = 0; j < (1u << HV_GAP_BITS); j++) {
    ULong hi = gap_of(j << (53 - HV_GAP_BITS)), lo = gap_of(((j + 1) << (53 - HV_GAP_BITS)) - 1);
    gap_tab[j] = hi == lo && hi < 0xffffffffull ? (UInt)hi : 0;
  }
}

/* Accesses until the next one kept: geometric with mean N, so that every
** access is kept with probability 1/N independently of all others (a fair
** sample of any subset: the heap's accesses, one site's, one block's). */
static ULong sample_gap(void)
{
  acc_rng ^= acc_rng << 13; acc_rng ^= acc_rng >> 7; acc_rng ^= acc_rng << 17;
  ULong r = acc_rng >> 11;
  UInt g = gap_tab[r >> (53 - HV_GAP_BITS)];
  return g ? g : gap_of(r);
}

/* One heap access (kind HT_AK_*) of sz bytes at a, if it touches a block. */
static inline void access_note_by(Addr a, SizeT sz, UInt kind, UInt lwp)
{
  if (LIKELY(a - heap_lo >= heap_span)) return;
  const BlockSlot *b = block_find(a);
  if (!b || tape_fd < 0) return;
  if (UNLIKELY(++acc_since_clock >= HV_CLOCK_EVERY)) {
    acc_since_clock = 0;
    now_ns = clock_now();
  }
  if (ht_accessw_full(&accw)) access_flush();
  ht_accessw_add(&accw, lwp, b->seq, g_seq + 1, now_ns, kind, a - b->lo, sz);
}

static inline void access_note(Addr a, SizeT sz, UInt kind) { access_note_by(a, sz, kind, acc_lwp); }

/* --access-sample: the access kept last, whose block is looked up only at
** the next kept access, block event or kernel's access (access_settle), so
** that the cache lines the look-up needs (its cache slot, its table slot)
** are fetched meanwhile while the program runs on: a kept access is at a
** random address, and the look-up's cache misses were most of its cost.
** Nothing but those events changes what it finds, nor the sequence number
** and time it is written with. */
static Addr pend_a;
static SizeT pend_sz;                 /* 0: none waiting */
static UInt pend_kind, pend_lwp;

static inline void access_settle(void)
{
  if (!pend_sz) return;
  SizeT sz = pend_sz;
  pend_sz = 0;
  access_note_by(pend_a, sz, pend_kind, pend_lwp);
}

static inline void access_defer(Addr a, SizeT sz, UInt kind)
{
  if (LIKELY(a - heap_lo >= heap_span)) return;
  access_settle();
  __builtin_prefetch(bcache_slot(a));
  const ULong *s = bslot(a & ~(Addr)(HV_ALIGN - 1), False);
  if (s) __builtin_prefetch(s);
  pend_a = a; pend_sz = sz; pend_kind = kind; pend_lwp = acc_lwp;
}

/* Every access: called by code that checked the heap's bounds. */
static VG_REGPARM(2) void hv_load(Addr a, SizeT sz) { access_note(a, sz, HT_AK_LOAD); }
static VG_REGPARM(2) void hv_store(Addr a, SizeT sz) { access_note(a, sz, HT_AK_STORE); }
static VG_REGPARM(2) void hv_modify(Addr a, SizeT sz) { access_note(a, sz, HT_AK_MODIFY); }

/* --access-sample: the generated code puts the addresses of a segment's
** accesses (a superblock's accesses up to a side exit, at most HV_SEG) in
** the thread's shadow guest state (a store there is one instruction, with
** no address to load), and at the segment's end subtracts its count from
** the countdown, calling hv_segment only when the countdown ends inside it:
** a skipped access costs at most one store, a segment one compare (a call
** and a countdown per access made translation twice as slow on python3).
** Accesses at a constant offset from the same value (the fields of one
** struct: base + 8, base + 16) share its slot: one store for all of them
** (the stores were a third of lua5.4's generated code's time). tab: the
** segment's access count, then per access its slot, offset, size and kind
** (seg_entry), found by its number (HV_TAB_OFF); gs: the guest state, whose
** shadow starts seg_off bytes in with the slots, then the thread's
** countdown: its accesses until the next one kept (0: not drawn yet),
** already less the segment's count, then the table's number. The
** countdown is the thread's, in its guest state, so that the generated code
** reads and writes it next to the slots, with no address to load (a
** countdown in memory made each segment's end two instructions longer). */
#define HV_SLOT_ABS 0xff              /* no slot: the offset is the address */
static Int seg_off;                   /* the guest state's size (its shadow's offset) */

static inline ULong seg_entry(UInt slot, Long off, Int size, UInt kind)
{
  return (ULong)(UInt)off << 32 | (ULong)slot << 24 | (ULong)size << 2 | kind;
}

static ULong *segpool;                /* the segments' tables, one after another: a
                                      ** table's number is where it starts (one
                                      ** cache miss to find it, not two) */
static UInt segpool_n, segpool_cap;

__attribute__((used, noinline)) static void hv_segment(UChar *gs)
{
  const Addr *slots = (const Addr *)(gs + seg_off);
  const ULong *tab = segpool + *(const ULong *)(gs + seg_off + HV_TAB_OFF);
  ULong *cd = (ULong *)(gs + seg_off + HV_CD_OFF), n = tab[0], c = *cd + n, k;
  k = c ? c : sample_gap();  /* a thread's first segment: draw its countdown */
  while (k <= n) {
    ULong e = tab[k];
    UInt slot = (UInt)(e >> 24) & 0xff;
    Addr off = (Addr)(Long)(Int)(UInt)(e >> 32);
    access_defer(slot == HV_SLOT_ABS ? (Addr)(UInt)(e >> 32) : slots[slot] + off,
                 (SizeT)((e >> 2) & 0x3fffff), (UInt)e & 3);
    k += sample_gap();
  }
  *cd = k - n;
}

/* hv_segment of the guest state the generated code runs on: Valgrind's
** amd64 code keeps its address in %rbp throughout (VEX's "GSPTR" argument
** is a copy of it), so the call needs no argument, and a guarded call's
** arguments are computed before its guard is tested: the copies were two
** instructions at every segment's end. */
void hv_segment_here(void);
__asm__(".text\n"
        ".type hv_segment_here, @function\n"
        "hv_segment_here:\n"
        "\tmovq %rbp, %rdi\n"
        "\tjmp hv_segment\n"
        ".size hv_segment_here, .-hv_segment_here\n");

/* The kernel's accesses for a system call (read() filling a buffer, write()
** reading one, a path read as a string) and a client request's writes: one
** access each, as DHAT counts them; sampled as any other access. */
static void access_core(Addr a, SizeT sz, UInt kind)
{
  if (sz == 0) return;
  access_settle();
  if (clo_sample > 1) {
    if (--acc_countdown) return;
    acc_countdown = sample_gap();
  }
  access_note(a, sz, kind);
}

static void hv_pre_mem_read(CorePart part, ThreadId vtid, const HChar *what, Addr a, SizeT sz)
{
  (void)vtid; (void)what;
  if (part == Vg_CoreSysCall) access_core(a, sz, HT_AK_LOAD);
}

static void hv_pre_mem_read_asciiz(CorePart part, ThreadId vtid, const HChar *what, Addr a)
{
  (void)vtid; (void)what;
  if (part == Vg_CoreSysCall) access_core(a, VG_(strlen)((const HChar *)a) + 1, HT_AK_LOAD);
}

static void hv_post_mem_write(CorePart part, ThreadId vtid, Addr a, SizeT sz)
{
  (void)vtid;
  if (part == Vg_CoreSysCall || part == Vg_CoreClientReq) access_core(a, sz, HT_AK_STORE);
}

/* The thread about to run: its lwp names the accesses it makes. */
static void hv_start_client(ThreadId vtid, ULong blocks_done)
{
  (void)blocks_done;
  if (tape_fd >= 0) acc_lwp = thread_get(vtid)->lwp;
}

/* -- Instrumentation (as Lackey's: a load and a store of the same address
** and size in one instruction are one modify) ------------------------------ */

typedef struct Ev { UInt kind; IRExpr *addr; Int size; IRExpr *guard; } Ev;
#define HV_EVS 16
static Ev evs[HV_EVS];
static Int nevs;

/* tmp := ex in sb, as an expression reading tmp. */
static IRExpr *ir_let(IRSB *sb, IRType ty, IRExpr *ex)
{
  IRTemp t = newIRTemp(sb->tyenv, ty);
  addStmtToIRSB(sb, IRStmt_WrTmp(t, ex));
  return IRExpr_RdTmp(t);
}

/* Every access (no --access-sample): a call per access within the heap's
** bounds, after the instruction (its statements compute the addresses). */
static void evs_flush(IRSB *sb)
{
  for (Int i = 0; i < nevs; i++) {
    Ev *e = &evs[i];
    const HChar *name;
    void *fn;
    switch (e->kind) {
    case HT_AK_LOAD: name = "hv_load"; fn = hv_load; break;
    case HT_AK_STORE: name = "hv_store"; fn = hv_store; break;
    default: name = "hv_modify"; fn = hv_modify; break;
    }
    IRExpr **argv = mkIRExprVec_2(e->addr, mkIRExpr_HWord(e->size));
    IRDirty *di = unsafeIRDirty_0_N(2, name, VG_(fnptr_to_fnentry)(fn), argv);
    if (e->guard) {
      di->guard = e->guard;
    } else {  /* call only for addresses within the heap's bounds (as DHAT
              ** skips its call for stack accesses): addr - lo < span */
      IRTemp lo = newIRTemp(sb->tyenv, Ity_I64), span = newIRTemp(sb->tyenv, Ity_I64);
      IRTemp off = newIRTemp(sb->tyenv, Ity_I64), in = newIRTemp(sb->tyenv, Ity_I1);
      addStmtToIRSB(sb, IRStmt_WrTmp(lo, IRExpr_Load(Iend_LE, Ity_I64,
                                                     mkIRExpr_HWord((HWord)&heap_lo))));
      addStmtToIRSB(sb, IRStmt_WrTmp(span, IRExpr_Load(Iend_LE, Ity_I64,
                                                       mkIRExpr_HWord((HWord)&heap_span))));
      addStmtToIRSB(sb, IRStmt_WrTmp(off, IRExpr_Binop(Iop_Sub64, e->addr, IRExpr_RdTmp(lo))));
      addStmtToIRSB(sb, IRStmt_WrTmp(in, IRExpr_Binop(Iop_CmpLT64U, IRExpr_RdTmp(off),
                                                      IRExpr_RdTmp(span))));
      di->guard = IRExpr_RdTmp(in);
    }
    addStmtToIRSB(sb, IRStmt_Dirty(di));
  }
  nevs = 0;
}

/* --access-sample: the segment being instrumented. seg_tab[0] counts its
** accesses, seg_tab[k] is the k-th's seg_entry; seg_insn: the index of the
** current instruction's first access (a load and a store of the same
** address and size in it are one modify); seg_base[s]: the temp whose value
** slot s holds (IRTemp_INVALID: a guarded access's own). */
static ULong seg_tab[HV_SEG + 1];
static UInt seg_insn;
static IRExpr *seg_last_addr;         /* the last access's address, if unguarded */
static IRTemp seg_base[HV_SEG];
static UInt seg_nslots;

/* The segment's table, interned (segments repeat: one copy each). */
typedef struct SegTab { struct SegTab *next; UInt hash, id; } SegTab;
#define HV_SEGTABS 4096
static SegTab *segtabs[HV_SEGTABS];

/* The segment's table's number (segpool). */
static UInt segtab_intern(void)
{
  UInt n = (UInt)seg_tab[0], h = 2166136261u;
  for (UInt i = 0; i <= n; i++) h = (h ^ (UInt)seg_tab[i] ^ (UInt)(seg_tab[i] >> 32)) * 16777619u;
  SegTab **head = &segtabs[h & (HV_SEGTABS - 1)];
  for (SegTab *t = *head; t; t = t->next)
    if (t->hash == h && segpool[t->id] == n &&
        !VG_(memcmp)(segpool + t->id, seg_tab, (n + 1) * sizeof(ULong)))
      return t->id;
  if (segpool_n + n + 1 > segpool_cap) {
    segpool_cap = segpool_cap ? 2 * segpool_cap : 1u << 16;
    segpool = VG_(realloc)("heaptape.segpool", segpool, segpool_cap * sizeof(ULong));
  }
  SegTab *t = VG_(malloc)("heaptape.segtab", sizeof(SegTab));
  t->next = *head; t->hash = h; t->id = segpool_n;
  VG_(memcpy)(segpool + segpool_n, seg_tab, (n + 1) * sizeof(ULong));
  segpool_n += n + 1;
  *head = t;
  return t->id;
}

/* The segment's end: countdown -= n; table = its number; hv_segment(gs)
** if the countdown was <= n (so is now <= 0). Six instructions (ten
** before): the table's number is a store of a constant, not an argument,
** the guest state comes from %rbp (hv_segment_here), and the compare is of
** the countdown left, not of a copy of it: a guarded call's arguments are
** computed before its guard is tested, so each cost an instruction or two
** at every segment's end, and segments end 54-180 million times in the
** benchmarks' runs (sqlite3's code is large: its time grew with the
** instrumentation's bytes more than with its work). */
static void seg_flush(IRSB *sb)
{
  UInt n = (UInt)seg_tab[0], nslots = seg_nslots;
  seg_tab[0] = 0;
  seg_insn = seg_nslots = 0;
  seg_last_addr = NULL;
  if (!n) return;
  IRExpr *c = ir_let(sb, Ity_I64, IRExpr_Get(seg_off + HV_CD_OFF, Ity_I64));
  IRExpr *left = ir_let(sb, Ity_I64, IRExpr_Binop(Iop_Sub64, c, IRExpr_Const(IRConst_U64(n))));
  addStmtToIRSB(sb, IRStmt_Put(seg_off + HV_CD_OFF, left));
  seg_tab[0] = n;
  addStmtToIRSB(sb, IRStmt_Put(seg_off + HV_TAB_OFF, IRExpr_Const(IRConst_U64(segtab_intern()))));
  seg_tab[0] = 0;
  IRDirty *di = unsafeIRDirty_0_N(0, "hv_segment_here", VG_(fnptr_to_fnentry)(hv_segment_here),
                                  mkIRExprVec_0());
  di->guard = ir_let(sb, Ity_I1, IRExpr_Binop(Iop_CmpLE64S, left, IRExpr_Const(IRConst_U64(0))));
  di->nFxState = 2;  /* it reads the addresses put in the shadow state, and */
  di->fxState[0].fx = Ifx_Read;  /* sets the countdown */
  di->fxState[0].offset = seg_off;
  di->fxState[0].size = (UShort)(nslots ? nslots * 8 : 8);
  di->fxState[0].nRepeats = di->fxState[0].repeatLen = 0;
  di->fxState[1].fx = Ifx_Modify;  /* (and reads the table's number) */
  di->fxState[1].offset = seg_off + HV_CD_OFF;
  di->fxState[1].size = 16;
  di->fxState[1].nRepeats = di->fxState[1].repeatLen = 0;
  addStmtToIRSB(sb, IRStmt_Dirty(di));
}

static void addr_split(const IRExpr *addr, IRTemp *base, Long *off);

/* One access of the segment: its address, or the value it is at a constant
** offset from, stored now unless the segment has stored that value already
** (0 when its guard is false: a trial that keeps nothing, so the sample
** stays fair). */
static void seg_add(IRSB *sb, UInt kind, IRExpr *addr, Int size, IRExpr *guard)
{
  UInt n = (UInt)seg_tab[0];
  if (kind == HT_AK_STORE && !guard && n > seg_insn && seg_last_addr &&
      (seg_tab[n] & 0xffffff) == ((ULong)size << 2 | HT_AK_LOAD) && eqIRAtom(seg_last_addr, addr)) {
    seg_tab[n] = (seg_tab[n] & ~3ull) | HT_AK_MODIFY;
    seg_last_addr = NULL;
    return;
  }
  if (n == HV_SEG) {
    seg_flush(sb);
    n = 0;
  }
  IRTemp base = IRTemp_INVALID;
  Long off = 0;
  UInt slot = seg_nslots;
  if (guard) {
    addStmtToIRSB(sb, IRStmt_Put(seg_off + 8 * (Int)slot,
      ir_let(sb, Ity_I64, IRExpr_ITE(guard, addr, IRExpr_Const(IRConst_U64(0))))));
    seg_base[seg_nslots++] = IRTemp_INVALID;
  } else if (addr->tag == Iex_Const && addr->Iex.Const.con->tag == Ico_U64 &&
             addr->Iex.Const.con->Ico.U64 < 0x80000000ull) {
    slot = HV_SLOT_ABS;
    off = (Long)addr->Iex.Const.con->Ico.U64;
  } else {
    addr_split(addr, &base, &off);
    UInt s = 0;
    if (base != IRTemp_INVALID)
      while (s < seg_nslots && seg_base[s] != base) s++;
    else
      s = seg_nslots;  /* a constant address: its own slot */
    if (s == seg_nslots) {
      addStmtToIRSB(sb, IRStmt_Put(seg_off + 8 * (Int)s,
                                   base == IRTemp_INVALID ? addr : IRExpr_RdTmp(base)));
      seg_base[seg_nslots++] = base;
    }
    slot = s;
  }
  seg_tab[++n] = seg_entry(slot, off, size, kind);
  seg_tab[0] = n;
  seg_last_addr = guard ? NULL : addr;
}

/* Temps of the superblock that hold the stack pointer plus or minus a
** constant (flat IR defines each temp once): an access at such an address
** is the stack's, never a heap block's, and is not instrumented (no bounds
** check, no trial; DHAT leaves out accesses near the stack pointer too).
** A program that runs on a stack inside a heap block (a coroutine's) would
** have those accesses left out. */
#define HV_SP_NEAR 65536              /* |constant| below this */
static UChar *sp_tmp;                 /* by temp: 1 = stack pointer based */
static Int sp_cap;

/* By temp: the temp it is a constant offset from (IRTemp_INVALID: none) and
** that offset (tmp := base + off, flat IR defines each temp once), so that
** accesses at offsets from one value share its slot (seg_add). */
#define HV_OFF_MAX (1 << 30)          /* |offset| below this */
static IRTemp *tmp_base;
static Int *tmp_off;

/* addr (an atom, not a constant) as base + off. */
static void addr_split(const IRExpr *addr, IRTemp *base, Long *off)
{
  *base = IRTemp_INVALID;
  *off = 0;
  if (addr->tag != Iex_RdTmp) return;
  IRTemp t = addr->Iex.RdTmp.tmp;
  *base = t;
  if (t < (IRTemp)sp_cap && tmp_base[t] != IRTemp_INVALID) {
    *base = tmp_base[t];
    *off = tmp_off[t];
  }
}

/* Note tmp := data when it is a temp plus or minus a constant. */
static void off_note(IRTemp tmp, const IRExpr *data)
{
  if (tmp >= (IRTemp)sp_cap) return;
  tmp_base[tmp] = IRTemp_INVALID;
  if (data->tag != Iex_Binop || (data->Iex.Binop.op != Iop_Add64 && data->Iex.Binop.op != Iop_Sub64))
    return;
  const IRExpr *a = data->Iex.Binop.arg1, *b = data->Iex.Binop.arg2;
  if (a->tag != Iex_RdTmp || b->tag != Iex_Const || b->Iex.Const.con->tag != Ico_U64) return;
  Long c = (Long)b->Iex.Const.con->Ico.U64;
  if (data->Iex.Binop.op == Iop_Sub64) c = -c;
  IRTemp base;
  Long off;
  addr_split(a, &base, &off);
  off += c;
  if (off > -HV_OFF_MAX && off < HV_OFF_MAX) {
    tmp_base[tmp] = base;
    tmp_off[tmp] = (Int)off;
  }
}

static Bool sp_based(const IRExpr *e)
{
  return e->tag == Iex_RdTmp && e->Iex.RdTmp.tmp < (IRTemp)sp_cap && sp_tmp[e->Iex.RdTmp.tmp];
}

/* Note whether tmp := data makes a stack pointer based temp. */
static void sp_note(IRTemp tmp, const IRExpr *data, Int offset_sp)
{
  Bool sp = False;
  if (data->tag == Iex_Get) {
    sp = data->Iex.Get.offset == offset_sp && data->Iex.Get.ty == Ity_I64;
  } else if (data->tag == Iex_Binop && (data->Iex.Binop.op == Iop_Add64 ||
                                        data->Iex.Binop.op == Iop_Sub64)) {
    const IRExpr *a = data->Iex.Binop.arg1, *b = data->Iex.Binop.arg2;
    sp = sp_based(a) && b->tag == Iex_Const && b->Iex.Const.con->tag == Ico_U64 &&
         b->Iex.Const.con->Ico.U64 + HV_SP_NEAR < 2 * HV_SP_NEAR;
  }
  if (tmp < (IRTemp)sp_cap) sp_tmp[tmp] = sp;
}

/* An access at a constant address inside a section of a loaded object (its
** data, bss, GOT, read-only data: a global, which compiled code reaches
** by a constant address, RIP-relative or absolute) is never a heap block's:
** blocks come from Valgrind's client arena, and the object's code goes when
** the object does. Left out like the stack's: nothing to check, no trial
** (a trial that can keep no heap access changes nothing in the sample of
** the heap's accesses: each of them is still kept with probability 1/N, on
** its own). A constant address elsewhere (code made at run time may embed a
** heap address) is an access as any other. */
static Bool addr_global(const IRExpr *addr)
{
  return addr->tag == Iex_Const && addr->Iex.Const.con->tag == Ico_U64 &&
         VG_(DebugInfo_sect_kind)(NULL, (Addr)addr->Iex.Const.con->Ico.U64) != Vg_SectUnknown;
}

static void ev_add(IRSB *sb, UInt kind, IRExpr *addr, Int size, IRExpr *guard)
{
  if (sp_based(addr) || addr_global(addr)) return;  /* the stack's, a global */
  if (clo_sample > 1) {
    seg_add(sb, kind, addr, size, guard);
    return;
  }
  if (kind == HT_AK_STORE && !guard && nevs > 0) {
    Ev *last = &evs[nevs - 1];
    if (last->kind == HT_AK_LOAD && !last->guard && last->size == size &&
        eqIRAtom(last->addr, addr)) {
      last->kind = HT_AK_MODIFY;
      return;
    }
  }
  if (nevs == HV_EVS) evs_flush(sb);
  evs[nevs++] = (Ev){ .kind = kind, .addr = addr, .size = size, .guard = guard };
}

/* -- The allocator's calls without the scheduler ----------------------------
** The preload's malloc and friends call the tool by a client request: the
** translation ends, Valgrind's scheduler reads the request and calls the
** tool, and the thread goes back to its translations (disp_run_translations,
** postamble, run_thread_for_a_while: a twentieth of lua5.4's run). A
** superblock that ends in a client request instead first calls hv_clreq,
** which makes a call of ours (VG_USERREQ__CLIENT_CALL1-3 of one of the
** functions below) as the scheduler would, with its result in RDX, and then
** goes on to the next instruction; any other request goes to the scheduler
** as before. The guest's RIP, RSP and RBP are up to date for the stack walk
** (the helper's declared reads), RIP at the instruction after the request,
** where the scheduler has it. */
static UWord hv_clreq(UChar *gs)
{
  const UWord *arg = *(UWord *const *)(gs + offsetof(VexGuestAMD64State, guest_RAX));
  UWord req = arg[0], f = arg[1], r;
  if (req < VG_USERREQ__CLIENT_CALL1 || req > VG_USERREQ__CLIENT_CALL3) return 0;
  ThreadId tid = VG_(get_running_tid)();
  if (f == (UWord)hv_malloc) r = (UWord)hv_malloc(tid, arg[2]);
  else if (f == (UWord)hv_free) { hv_free(tid, (void *)arg[2]); r = 0; }
  else if (f == (UWord)hv_calloc) r = (UWord)hv_calloc(tid, arg[2], arg[3]);
  else if (f == (UWord)hv_realloc) r = (UWord)hv_realloc(tid, (void *)arg[2], arg[3]);
  else if (f == (UWord)hv_new) r = (UWord)hv_new(tid, arg[2]);
  else if (f == (UWord)hv_vec_new) r = (UWord)hv_vec_new(tid, arg[2]);
  else if (f == (UWord)hv_delete) { hv_delete(tid, (void *)arg[2]); r = 0; }
  else if (f == (UWord)hv_vec_delete) { hv_vec_delete(tid, (void *)arg[2]); r = 0; }
  else return 0;  /* the scheduler's (aligned ones, usable size: rare) */
  *(UWord *)(gs + offsetof(VexGuestAMD64State, guest_RDX)) = r;
  return 1;
}

/* At the end of a superblock that ends in a client request:
**   RIP = next; if (hv_clreq(gs)) goto next; (else the request) */
static void clreq_inline(IRSB *sb, const VexGuestLayout *layout)
{
  if (sb->jumpkind != Ijk_ClientReq || sb->next->tag != Iex_Const) return;
  addStmtToIRSB(sb, IRStmt_Put(layout->offset_IP, sb->next));
  IRTemp done = newIRTemp(sb->tyenv, Ity_I64);
  IRDirty *di = unsafeIRDirty_1_N(done, 0, "hv_clreq", VG_(fnptr_to_fnentry)(hv_clreq),
                                  mkIRExprVec_1(IRExpr_GSPTR()));
  static const Int rd[] = { offsetof(VexGuestAMD64State, guest_RAX),
                            offsetof(VexGuestAMD64State, guest_RBP) };
  di->nFxState = 5;
  for (Int i = 0; i < 5; i++) {
    di->fxState[i].fx = i == 4 ? Ifx_Modify : Ifx_Read;
    di->fxState[i].offset = i < 2 ? rd[i] : i == 2 ? layout->offset_SP : i == 3 ? layout->offset_IP
                                                    : (Int)offsetof(VexGuestAMD64State, guest_RDX);
    di->fxState[i].size = 8;
    di->fxState[i].nRepeats = di->fxState[i].repeatLen = 0;
  }
  di->mFx = Ifx_Modify;  /* its arguments, the blocks */
  di->mAddr = ir_let(sb, Ity_I64, IRExpr_Get(offsetof(VexGuestAMD64State, guest_RAX), Ity_I64));
  di->mSize = 8;
  addStmtToIRSB(sb, IRStmt_Dirty(di));
  IRExpr *ok = ir_let(sb, Ity_I1, IRExpr_Binop(Iop_CmpNE64, IRExpr_RdTmp(done),
                                                IRExpr_Const(IRConst_U64(0))));
  addStmtToIRSB(sb, IRStmt_Exit(ok, Ijk_Boring, sb->next->Iex.Const.con, layout->offset_IP));
}

static IRSB *hv_instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
                           const VexGuestExtents *vge, const VexArchInfo *archinfo,
                           IRType gWordTy, IRType hWordTy)
{
  (void)closure; (void)vge; (void)archinfo;
  if (gWordTy != hWordTy) VG_(tool_panic)("host/guest word size mismatch");
  seg_off = layout->total_sizeB;
  if (HV_TAB_OFF + 8 > seg_off) VG_(tool_panic)("heaptape: the guest state is too small for the slots");
  IRSB *out = deepCopyIRSBExceptStmts(in);
  Int i = 0;
  while (i < in->stmts_used && in->stmts[i]->tag != Ist_IMark) addStmtToIRSB(out, in->stmts[i++]);
  nevs = 0;
  seg_tab[0] = seg_insn = 0;
  seg_last_addr = NULL;
  if (in->tyenv->types_used > sp_cap) {
    if (sp_tmp) { VG_(free)(sp_tmp); VG_(free)(tmp_base); VG_(free)(tmp_off); }
    sp_cap = in->tyenv->types_used * 2;
    sp_tmp = VG_(malloc)("heaptape.sptmp", (SizeT)sp_cap);
    tmp_base = VG_(malloc)("heaptape.tmpbase", (SizeT)sp_cap * sizeof(IRTemp));
    tmp_off = VG_(malloc)("heaptape.tmpoff", (SizeT)sp_cap * sizeof(Int));
  }
  VG_(memset)(sp_tmp, 0, (SizeT)in->tyenv->types_used);
  for (Int k = 0; k < in->tyenv->types_used; k++) tmp_base[k] = IRTemp_INVALID;
  seg_nslots = 0;
  for (; i < in->stmts_used; i++) {
    IRStmt *st = in->stmts[i];
    if (!st || st->tag == Ist_NoOp) continue;
    switch (st->tag) {
    case Ist_IMark:
      evs_flush(out);
      seg_insn = (UInt)seg_tab[0];
      break;
    case Ist_Exit:
      evs_flush(out);
      seg_flush(out);
      break;
    case Ist_WrTmp:
      sp_note(st->Ist.WrTmp.tmp, st->Ist.WrTmp.data, layout->offset_SP);
      if (clo_sample > 1) off_note(st->Ist.WrTmp.tmp, st->Ist.WrTmp.data);
      if (st->Ist.WrTmp.data->tag == Iex_Load)
        ev_add(out, HT_AK_LOAD, st->Ist.WrTmp.data->Iex.Load.addr,
               sizeofIRType(st->Ist.WrTmp.data->Iex.Load.ty), NULL);
      break;
    case Ist_Store:
      ev_add(out, HT_AK_STORE, st->Ist.Store.addr,
             sizeofIRType(typeOfIRExpr(in->tyenv, st->Ist.Store.data)), NULL);
      break;
    case Ist_StoreG: {
      IRStoreG *sg = st->Ist.StoreG.details;
      ev_add(out, HT_AK_STORE, sg->addr, sizeofIRType(typeOfIRExpr(in->tyenv, sg->data)),
             sg->guard);
      break;
    }
    case Ist_LoadG: {
      IRLoadG *lg = st->Ist.LoadG.details;
      IRType ty = Ity_INVALID, wide = Ity_INVALID;
      typeOfIRLoadGOp(lg->cvt, &wide, &ty);
      ev_add(out, HT_AK_LOAD, lg->addr, sizeofIRType(ty), lg->guard);
      break;
    }
    case Ist_Dirty: {
      IRDirty *d = st->Ist.Dirty.details;
      if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify) ev_add(out, HT_AK_LOAD, d->mAddr, d->mSize, NULL);
      if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify) ev_add(out, HT_AK_STORE, d->mAddr, d->mSize, NULL);
      break;
    }
    case Ist_CAS: {
      IRCAS *cas = st->Ist.CAS.details;
      Int sz = sizeofIRType(typeOfIRExpr(in->tyenv, cas->dataLo)) * (cas->dataHi ? 2 : 1);
      ev_add(out, HT_AK_LOAD, cas->addr, sz, NULL);
      ev_add(out, HT_AK_STORE, cas->addr, sz, NULL);
      break;
    }
    case Ist_LLSC:
      if (!st->Ist.LLSC.storedata)
        ev_add(out, HT_AK_LOAD, st->Ist.LLSC.addr,
               sizeofIRType(typeOfIRTemp(in->tyenv, st->Ist.LLSC.result)), NULL);
      else
        ev_add(out, HT_AK_STORE, st->Ist.LLSC.addr,
               sizeofIRType(typeOfIRExpr(in->tyenv, st->Ist.LLSC.storedata)), NULL);
      break;
    default:
      break;
    }
    addStmtToIRSB(out, st);
  }
  evs_flush(out);
  seg_flush(out);
  clreq_inline(out, layout);
  return out;
}

/* -- Start and end -------------------------------------------------------- */

static void hv_fork_child(ThreadId tid)
{
  (void)tid;
  if (tape_fd >= 0) VG_(close)(tape_fd);
  tape_fd = -1;  /* the child is not recorded (its parent's tape is open) */
}

static void hv_post_clo_init(void)
{
  if (!clo_tape) {
    VG_(fmsg)("heaptape: --tape=FILE is required\n");
    VG_(exit)(1);
  }
  threads = VG_(calloc)("heaptape.threads", VG_N_THREADS, sizeof(ThreadTape *));
  bigs = VG_(newFM)(VG_(malloc), "heaptape.bigs", VG_(free), block_cmp);
  if (clo_pid && VG_(getpid)() != clo_pid) return;  /* a child: not recorded */
  SysRes r = VG_(open)(clo_tape, VKI_O_CREAT | VKI_O_TRUNC | VKI_O_WRONLY, 0644);
  if (sr_isError(r)) {
    VG_(fmsg)("heaptape: %s: cannot create the tape\n", clo_tape);
    VG_(exit)(1);
  }
  tape_fd = (Int)sr_Res(r);
  tape_pid = (UInt)VG_(getpid)();
  crc_init();
  tsc_init();
  t0_ns = now_ns = clock_now();
  tape_header();
  accbuf = VG_(malloc)("heaptape.access", HV_BODY);
  if (clo_sample > 1) {
    acc_gap_scale = sample_scale(clo_sample);
    ln_fast_init();
    gap_tab_init();
    acc_countdown = sample_gap();
  }
  ht_accessw_init(&accw, accbuf, HV_BODY);
  VG_(atfork)(NULL, NULL, hv_fork_child);
}

static void hv_fini(Int exitcode)
{
  if (tape_fd < 0) return;
  if (clo_stack_check)
    VG_(umsg)("heaptape: stacks %llu, %llu from the last walk, %llu of them differ\n",
              stack_walks, stack_reused, stack_diffs);
  access_settle();
  access_flush();
  for (UInt i = 0; i < VG_N_THREADS; i++)
    if (threads[i]) stream_flush(&threads[i]->s, NULL);
  ULong end = clock_now();
  UChar body[8 * 3 * HT_ULEB_MAX], *p = body;
  ULong packets = tape_packets, bytes = tape_bytes;
  p = field_uleb(p, HT_T_EVENTS, g_seq);
  p = field_uleb(p, HT_T_LOST, 0);
  p = field_uleb(p, HT_T_PACKETS, packets);
  p = field_uleb(p, HT_T_BYTES, bytes);
  p = field_uleb(p, HT_T_END, end);
  p = field_uleb(p, HT_T_STATUS, (ULong)(exitcode & 0xff));
  tape_packet(HT_P_TRAILER, 0, 0, 0, 0, end, 0, body, (SizeT)(p - body));
  VG_(close)(tape_fd);
  tape_fd = -1;
}

static void hv_pre_clo_init(void)
{
  VG_(details_name)("heaptape");
  VG_(details_version)(NULL);
  VG_(details_description)("heap accesses for heaptape record --access");
  VG_(details_copyright_author)("heaptape");
  VG_(details_bug_reports_to)("heaptape");
  VG_(details_avg_translation_sizeB)(600);
  VG_(basic_tool_funcs)(hv_post_clo_init, hv_instrument, hv_fini);
  VG_(needs_command_line_options)(hv_process_cmd_line_option, hv_print_usage,
                                  hv_print_debug_usage);
  VG_(needs_malloc_replacement)(hv_malloc, hv_new, hv_new_aligned, hv_vec_new,
                                hv_vec_new_aligned, hv_memalign, hv_calloc, hv_free,
                                hv_delete, hv_delete_aligned, hv_vec_delete,
                                hv_vec_delete_aligned, hv_realloc, hv_usable_size, 0);
  VG_(track_new_mem_startup)(hv_new_mem_startup);
  VG_(track_new_mem_mmap)(hv_new_mem_mmap);
  VG_(track_pre_thread_ll_create)(hv_thread_created);
  VG_(track_start_client_code)(hv_start_client);
  VG_(track_pre_mem_read)(hv_pre_mem_read);
  VG_(track_pre_mem_read_asciiz)(hv_pre_mem_read_asciiz);
  VG_(track_post_mem_write)(hv_post_mem_write);
}

VG_DETERMINE_INTERFACE_VERSION(hv_pre_clo_init)
