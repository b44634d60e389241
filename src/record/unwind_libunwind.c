/* heaptape -- stacks from DWARF unwind tables: libunwind states each return
** address's frame rule once, a small walker applies it and reuses checked outer frames. */
#pragma GCC optimize("no-omit-frame-pointer")   /* the walk starts from our rbp */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "unwind.h"

/* Why not unw_step: Debian's libunwind is built without its per-thread
** cache, so every unw_step takes a mutex and two sigprocmask syscalls
** (~1 us a frame); unw_backtrace's fast path avoids them but reports no
** stack pointers, which a validated prefix cache needs. So the walker keeps
** its own table: for a return address, the CFA is rsp or rbp plus a
** constant, and rbp is either untouched or saved at CFA plus a constant.
** libunwind computes that rule (by three unw_steps over a fake stack, once
** per address and thread); anything else (CFA expressions, signal frames,
** rules on other registers, a failed step) sends the whole capture to
** unw_backtrace. */

enum { RULE_RSP = 1, RULE_RBP, RULE_END, RULE_SLOW };
#define RBP_KEEP INT16_MIN
#define RULES_LOG 16                     /* 64k rules (1 MiB), shared */
#define RULES_N (1u << RULES_LOG)
#define PROBE_MAP (64u << 20)            /* fake stack: larger than any frame */
#define PROBE_FILL (512u << 10)          /* its reserved part, every word = its middle */
#define PROBE_SP (64u << 10)             /* its rsp: rules for frames < 448 KiB */

/* libunwind (>= 1.6) packs its "validate this read" flag into bit 0 of the
** local address space's accessor argument. */
#if UNW_VERSION_MAJOR > 1 || (UNW_VERSION_MAJOR == 1 && UNW_VERSION_MINOR >= 6)
#define UNW_ARG_VALIDATES(arg) (((uintptr_t)(arg) & 1) != 0)
#else
#error "libunwind 1.6 or later is needed (validate flag in the accessor argument)"
#endif

typedef int (*UnwMemFn)(unw_addr_space_t, unw_word_t, unw_word_t *, int, void *);

static uintptr_t *unw_fake;              /* fake stack: reserved, never touched */
static HtUnwRule *unw_rules;             /* rules by return address, shared */
static uint32_t unw_nrules;              /* slots used (under unw_lock) */
static _Atomic int unw_lock;             /* writers' try-lock */
static UnwMemFn unw_local_mem;           /* libunwind's own local accessor */
static HT_TLS int unw_probing;           /* this thread is probing a rule */

/* -- Memory reads ----------------------------------------------------------- */

/*
** Why libunwind's memory accessor is replaced: where unwind tables are
** missing libunwind validates each read by writing the address into a pipe
** it opens at start (fds 3 and 4, before the program opens anything), and
** when a read of the pipe fails it closes those numbers and opens a new
** pipe: a program that closed or dup2'd over them had its own descriptors
** read, written or closed (daemons blocked or died of SIGPIPE). Here a
** validated read is one process_vm_readv of the word, which faults nowhere
** and owns no descriptor (under a seccomp filter that refuses it, the read
** fails and the walk ends there); the pipe is closed (unw_pipe_close).
** Reads of the fake stack never touch memory: every word reads as its
** middle, and while probing, words past it read as they are, or fail.
*/

/* One word at a, or -1 where nothing readable is mapped. */
static int unw_read_checked(unw_word_t a, unw_word_t *val)
{
  struct iovec l = { val, sizeof(*val) }, r = { (void *)a, sizeof(*val) };
  int e = errno;
  ssize_t n = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
  errno = e;
  return n == (ssize_t)sizeof(*val) ? 0 : -1;
}

/* The local address space's memory accessor (see above). */
static int unw_access_mem(unw_addr_space_t as, unw_word_t a, unw_word_t *val,
                          int write, void *arg)
{
  uintptr_t f = (uintptr_t)unw_fake;
  if (HT_UNLIKELY(f && a - f < PROBE_MAP)) {
    if (write) return -1;
    if (a - f < PROBE_FILL) { *val = f + PROBE_FILL / 2; return 0; }
    if (unw_probing) return unw_read_checked(a, val);
  }
  if (!write && UNW_ARG_VALIDATES(arg)) return unw_read_checked(a, val);
  return unw_local_mem(as, a, val, write, arg);
}

/* Lowest descriptor number from n up that is not open. */
static int unw_free_fd(int n)
{
  while (fcntl(n, F_GETFD) >= 0) n++;
  return n;
}

/* Close libunwind's validation pipe if its start-up just made it on fds a, b
** (the two lowest free ones before): both ends of one pipe, non-blocking. */
static void unw_pipe_close(int a, int b)
{
  struct stat sa, sb;
  if (fstat(a, &sa) || fstat(b, &sb) || !S_ISFIFO(sa.st_mode) || !S_ISFIFO(sb.st_mode) ||
      sa.st_ino != sb.st_ino || sa.st_dev != sb.st_dev)
    return;
  int fa = fcntl(a, F_GETFL), fb = fcntl(b, F_GETFL);
  if ((fa & (O_ACCMODE | O_NONBLOCK)) != (O_RDONLY | O_NONBLOCK) ||
      (fb & (O_ACCMODE | O_NONBLOCK)) != (O_WRONLY | O_NONBLOCK))
    return;
  close(a);
  close(b);
}

/* Take over libunwind's memory reads, choose its per-thread cache and
** reserve the fake stack (constructor). */
void ht_unwind_init(void)
{
  int e = errno;
  int a = unw_free_fd(0), b = unw_free_fd(a + 1);
  unw_accessors_t *acc = unw_get_accessors(unw_local_addr_space); /* starts libunwind */
  if (acc && acc->access_mem != unw_access_mem) {
    unw_local_mem = acc->access_mem;
    acc->access_mem = unw_access_mem;
    unw_pipe_close(a, b);
  }
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  errno = e;
  if (!unw_local_mem) return;            /* no probes: always unw_backtrace */
  /* Address space only: the accessor answers every read of it. */
  void *p = mmap(NULL, PROBE_FILL, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return;
  void *t = mmap(NULL, RULES_N * sizeof(HtUnwRule), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (t == MAP_FAILED) { munmap(p, PROBE_FILL); return; }
  unw_rules = t;
  unw_fake = p;
}

/* -- Learning a rule ------------------------------------------------------- */

/* One unw_step from a made-up frame: ip, rsp, rbp in; CFA, the caller's rbp
** and where it was read (0 = a register) out. 0 = a plain call frame. */
static int unw_probe1(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t *cfa,
                      uintptr_t *nbp, uintptr_t *bp_at)
{
  unw_context_t ctx;
  unw_cursor_t c;
  unw_word_t v;
  unw_save_loc_t sl;
  if (unw_getcontext(&ctx)) return -1;
  ctx.uc_mcontext.gregs[REG_RIP] = (greg_t)ip;
  ctx.uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
  ctx.uc_mcontext.gregs[REG_RBP] = (greg_t)bp;
  if (unw_init_local(&c, &ctx) < 0) return -1;
  int r = unw_step(&c);
  if (r < 0 || unw_get_reg(&c, UNW_REG_SP, &v)) return -1;
  if (v - 8 >= (uintptr_t)unw_fake + PROBE_FILL) return -1; /* huge frame */
  if (r == 0) return 1;                  /* the outermost frame */
  *cfa = v;
  if (unw_get_save_loc(&c, UNW_X86_64_RIP, &sl) || sl.type != UNW_SLT_MEMORY ||
      sl.u.addr != v - 8) return -1;     /* ip not from CFA-8 */
  if (unw_get_reg(&c, UNW_X86_64_RBP, &v)) return -1;
  *nbp = v;
  *bp_at = 0;
  if (unw_get_save_loc(&c, UNW_X86_64_RBP, &sl)) return -1;
  uintptr_t a = sl.u.addr;               /* (in ctx: rbp untouched) */
  if (sl.type == UNW_SLT_MEMORY && (a < (uintptr_t)&ctx || a >= (uintptr_t)(&ctx + 1)))
    *bp_at = a;
  else if ((sl.type != UNW_SLT_NONE && sl.type != UNW_SLT_MEMORY) || v != bp) return -1;
  return 0;
}

/* Is ip a signal trampoline (checked at ip itself, as libunwind does)? */
static int unw_sigframe(uintptr_t ip)
{
  unw_context_t ctx;
  unw_cursor_t c;
  if (unw_getcontext(&ctx)) return 1;
  ctx.uc_mcontext.gregs[REG_RIP] = (greg_t)ip;
  return unw_init_local(&c, &ctx) < 0 || unw_is_signal_frame(&c) != 0;
}

/* Learn the rule of return address ip: three probes that move rsp and rbp
** apart tell an rsp-based CFA from an rbp-based one and catch anything else. */
static void unw_learn(HtUnwRule *r, uintptr_t ip)
{
  r->kind = RULE_SLOW;
  if (!unw_fake || unw_sigframe(ip)) return;
  uintptr_t base = (uintptr_t)unw_fake + PROBE_SP;
  uintptr_t sp[3] = { base, base + 0x40, base }, bp[3] = { base + 0x1000, base + 0x1000, base + 0x2000 };
  uintptr_t cfa[3], nbp[3], at[3];
  int rc[3] = { -1, -1, -1 };
  unw_probing = 1;
  for (int i = 0; i < 3; i++) {
    /* ip-1: a return address's rule is the call's (libunwind does the same). */
    rc[i] = unw_probe1(ip - 1, sp[i], bp[i], &cfa[i], &nbp[i], &at[i]);
    if (rc[i] < 0 || rc[i] != rc[0]) break;
  }
  unw_probing = 0;
  for (int i = 0; i < 3; i++)
    if (rc[i] < 0 || rc[i] != rc[0]) return;
  if (rc[0] == 1) { r->kind = RULE_END; return; }
  intptr_t off;
  if (cfa[1] - cfa[0] == 0x40 && cfa[2] == cfa[0]) {
    r->kind = RULE_RSP;
    off = (intptr_t)(cfa[0] - sp[0]);
  } else if (cfa[1] == cfa[0] && cfa[2] - cfa[0] == 0x1000) {
    r->kind = RULE_RBP;
    off = (intptr_t)(cfa[0] - bp[0]);
  } else {
    return;
  }
  if (off < 8 || off > (intptr_t)(PROBE_FILL - PROBE_SP - 0x3000)) { r->kind = RULE_SLOW; return; }
  r->cfa_off = (int32_t)off;
  r->rbp_off = RBP_KEEP;
  if (at[0]) {                           /* saved: same offset from CFA in all */
    intptr_t ro = (intptr_t)(at[0] - cfa[0]);
    for (int i = 1; i < 3; i++)
      if (!at[i] || (intptr_t)(at[i] - cfa[i]) != ro) { r->kind = RULE_SLOW; return; }
    if (ro < -32768 || ro > 32767 || ro == RBP_KEEP) { r->kind = RULE_SLOW; return; }
    r->rbp_off = (int16_t)ro;
  } else {
    for (int i = 0; i < 3; i++)
      if (at[i] || nbp[i] != bp[i]) { r->kind = RULE_SLOW; return; }
  }
}

/* The rule of return address ip from the shared table, learnt on first
** sight. Readers take no lock: a slot's fields are written before its ip
** is published. Writers take a try-lock (a signal handler may interrupt a
** writer in its own thread): when busy, the answer is "slow" this once. A
** full table keeps what it has and stops caching new addresses. */
static HT_NOINLINE HtUnwRule unw_rule_slow(uintptr_t ip)
{
  HtUnwRule nr = { 0, 0, 0, RULE_SLOW, 0 };
  uint32_t i = (uint32_t)((ip * 0x9e3779b97f4a7c15ULL) >> (64 - RULES_LOG));
  if (!unw_rules) return nr;
  for (;;) {
    HtUnwRule *r = &unw_rules[i];
    uintptr_t k = __atomic_load_n(&r->ip, __ATOMIC_ACQUIRE);
    if (k == ip) return *r;
    if (!k) break;
    i = (i + 1) & (RULES_N - 1);
  }
  if (atomic_exchange_explicit(&unw_lock, 1, memory_order_acquire)) return nr;
  for (;;) {                             /* another writer may have come first */
    HtUnwRule *r = &unw_rules[i];
    uintptr_t k = __atomic_load_n(&r->ip, __ATOMIC_ACQUIRE);
    if (k == ip) { nr = *r; break; }
    if (!k) {
      unw_learn(&nr, ip);
      nr.ip = ip;
      if (unw_nrules < RULES_N / 4 * 3) {
        unw_nrules++;
        r->cfa_off = nr.cfa_off;
        r->rbp_off = nr.rbp_off;
        r->kind = nr.kind;
        __atomic_store_n(&r->ip, ip, __ATOMIC_RELEASE);
      }
      break;
    }
    i = (i + 1) & (RULES_N - 1);
  }
  atomic_store_explicit(&unw_lock, 0, memory_order_release);
  return nr;
}

/* The rule of ip: a small direct-mapped per-thread front (a walk's inner
** frames are mostly the same few addresses) over the shared table. */
HT_INLINE HtUnwRule unw_rule(HtUnwCache *uc, uintptr_t ip)
{
  HtUnwRule *h = &uc->hot[(ip ^ (ip >> 6)) & 63];
  if (HT_LIKELY(h->ip == ip)) return *h;
  HtUnwRule r = unw_rule_slow(ip);
  if (r.ip) *h = r;                      /* (ip 0: not learnt, not kept) */
  return r;
}

/* -- The walk and the prefix cache ----------------------------------------- */

/* Why the reuse is sound: a frame's caller follows from the frame's ip (which
** selects the rule), its rsp and rbp, and two stack words: the return
** address at CFA-8 and, where the rule saves rbp, the saved rbp. When frame
** j of this walk has the same ip, rsp and rbp as frame j of the previous
** one, each outer frame k is what it was last time as long as those words
** still hold the old values; a saved rbp below frame j's rsp was saved by an
** inner frame and reached frame j unchanged, so the rbp match covers it. */

/* Frames 0..j-1 of f (the previous walk, outermost first) still hold, frame
** j having matched: every word they were read from is intact. */
static int unw_valid(const HtUnwFrame *f, uint32_t j, uintptr_t hi)
{
  uintptr_t lo = f[j].sp, d = 0;
  (void)hi;                              /* (every word was in bounds when read) */
  for (uint32_t k = 0; k < j; k++) {
    uintptr_t a = f[k].rbp_slot;         /* below lo: implied by rbp at frame j */
    const uintptr_t *q = a >= lo ? (const uintptr_t *)a : &f[k].rbp;
    d |= (*(const uintptr_t *)(f[k].sp - 8) ^ f[k].ip) | (*q ^ f[k].rbp);
  }
  return d == 0;
}

/* Walk the calling thread's stack through uc (its previous walk and rules);
** lo/hi bound the stack (0 = unknown). On return *in_fr = 1: the frames are
** uc->fr, outermost first; 0: ips, innermost first (from unw_backtrace).
** Returns the count. */
HT_NOINLINE int ht_unwind_cached(HtUnwCache *uc, uintptr_t *ips, int max,
                                 uintptr_t lo, uintptr_t hi, int *in_fr)
{
  uintptr_t *fa = __builtin_frame_address(0);
  HtUnwFrame *fr = uc->fr, *in = uc->in;
  int pq = (int)uc->n - 1, c = 0, trunc = 0;
  uc->n = 0;
  /* Off the thread's stack (sigaltstack, coroutine): no walk. On it, every
  ** word from this frame up is mapped, and nothing below is ever read. */
  if (!hi || (uintptr_t)fa < lo || (uintptr_t)fa >= hi - 16) goto slow;
  lo = (uintptr_t)fa;
  uintptr_t ip = fa[1], sp = (uintptr_t)(fa + 2), bp = fa[0], bp_at = (uintptr_t)fa;
  for (;;) {
    HtUnwFrame *f = &in[c++];
    f->ip = ip;
    f->sp = sp;
    f->rbp = bp;
    f->rbp_slot = bp_at;
    while (pq >= 0 && fr[pq].sp < sp) pq--;
    if (pq >= 0 && fr[pq].sp == sp && fr[pq].ip == ip && fr[pq].rbp == bp) {
      uint32_t outer = (uint32_t)pq, room = (uint32_t)(max - c);
      /* A truncated previous walk can only supply as many frames as it had. */
      if ((!uc->trunc || room <= outer) && unw_valid(fr, outer, hi)) {
        if (outer > room) {              /* deeper than max: drop outermost */
          memmove(fr, fr + (outer - room), (room + 1) * sizeof(*fr));
          pq = (int)room;
          trunc = 1;
        } else {
          trunc = uc->trunc && room == outer;
        }
        for (int i = c - 2; i >= 0; i--) fr[++pq] = in[i];
        goto done;
      }
    }
    if (c >= max) { trunc = 1; break; }
    HtUnwRule r = unw_rule(uc, ip);
    if (r.kind == RULE_END) break;
    if (r.kind != RULE_RSP && r.kind != RULE_RBP) goto slow;
    uintptr_t cfa = (r.kind == RULE_RSP ? sp : bp) + (uintptr_t)(intptr_t)r.cfa_off;
    if (cfa <= sp || cfa > hi || cfa - 8 < lo || (cfa & 7)) goto slow;
    if (r.rbp_off != RBP_KEEP) {
      bp_at = cfa + (uintptr_t)(intptr_t)r.rbp_off;
      if (bp_at < lo || bp_at > hi - 8 || (bp_at & 7)) goto slow;
      bp = *(const uintptr_t *)bp_at;
    } else {
      bp_at = 0;
    }
    ip = *(const uintptr_t *)(cfa - 8);
    sp = cfa;
    if (!ip) break;                      /* libunwind ends the chain there too */
  }
  pq = -1;                               /* no match: the walk is all new */
  for (int i = c - 1; i >= 0; i--) fr[++pq] = in[i];
done:
  uc->n = (uint32_t)pq + 1;
  uc->trunc = trunc;
  *in_fr = 1;
#ifdef HT_UNWIND_VERIFY                  /* development: compare with libunwind */
  {
    uintptr_t ref[HT_MAXFRAMES + 9];
    int m = unw_backtrace((void **)ref, max + 1) - 1, n = pq + 1;
    int bad = m != n;
    for (int i = 0; !bad && i < n; i++) bad = ref[i + 1] != fr[n - 1 - i].ip;
    if (bad) {
      int i = 0;
      while (i < n && i < m && ref[i + 1] == fr[n - 1 - i].ip) i++;
      ht_log("unwind verify: n %d ref %d first diff %d: %lx vs %lx", n, m, i,
             i < n ? (unsigned long)fr[n - 1 - i].ip : 0ul,
             i < m ? (unsigned long)ref[i + 1] : 0ul);
    }
  }
#endif
  return pq + 1;
slow:
  *in_fr = 0;
  c = unw_backtrace((void **)ips, max);
  return c < 0 ? 0 : c;
}
