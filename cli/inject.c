/* heaptape -- calling functions inside another process: PTRACE_SEIZE one
** thread, stop it, run calls on its stack, restore it, detach. x86-64. */
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach_proc.h"
#include "inject.h"

#define INJECT_XSTATE 16384            /* room for the FPU/SSE/AVX state */
#define INJECT_CALL_NS 30000000000ull  /* longest a call may take */
#define INJECT_SAFE_TRIES 200          /* stops tried for a safe point */

struct HtInject {
  pid_t pid, tid;                      /* process, borrowed thread */
  struct user_regs_struct regs;        /* its registers when stopped */
  uint8_t xstate[INJECT_XSTATE];       /* its extended state */
  size_t xlen;                         /* bytes of it (0: not saved) */
  int sig;                             /* a signal it was stopped on, to give back */
  uintptr_t sp;                        /* next free byte of the scratch area (down) */
  uintptr_t lo[2], hi[2];              /* text of libc and ld.so: not a safe point */
};

/* Wait for the thread's next stop (or end) for at most ns; 0 or -1. */
static int inject_wait(HtInject *in, int *st, uint64_t ns)
{
  for (uint64_t waited = 0;; waited += 200000) {
    pid_t r = waitpid(in->tid, st, __WALL | WNOHANG);
    if (r == in->tid) return 0;
    if (r < 0 || waited >= ns) return -1;
    struct timespec ts = { 0, 200000 };
    nanosleep(&ts, NULL);
  }
}

/* Text ranges of libc and the loader (r-x mappings of those files). */
static void inject_text(HtInject *in)
{
  char mp[64], line[4352];
  snprintf(mp, sizeof(mp), "/proc/%ld/maps", (long)in->pid);
  FILE *f = fopen(mp, "re");
  if (!f) return;
  while (fgets(line, sizeof(line), f)) {
    unsigned long a, b;
    char perm[8];
    if (sscanf(line, "%lx-%lx %7s", &a, &b, perm) != 3 || perm[2] != 'x') continue;
    int k = strstr(line, "/libc.so.6") ? 0 : strstr(line, "/ld-linux") ? 1 : -1;
    if (k >= 0) { in->lo[k] = a; in->hi[k] = b; }
  }
  fclose(f);
}

/* Is the stopped thread at a point where libc may be called: not in a
** system call the allocator makes while it holds its lock (brk, mmap,
** munmap, mremap, mprotect, madvise), and, outside system calls, not in
** libc's or the loader's code (which may hold the allocator's, stdio's or
** the loader's lock)? A heuristic: no thread's locks can be seen. */
static int inject_safe(const HtInject *in)
{
  long sc = (long)in->regs.orig_rax;
  if (sc >= 0)
    return sc != 9 && sc != 10 && sc != 11 && sc != 12 && sc != 25 && sc != 28;
  uintptr_t ip = in->regs.rip;
  for (int k = 0; k < 2; k++)
    if (ip >= in->lo[k] && ip < in->hi[k]) return 0;
  return 1;
}

/* Stop the seized thread (PTRACE_INTERRUPT) and read its registers; a
** signal it stopped for instead is kept to give back. 0 or -1. */
static int inject_stop(HtInject *in)
{
  if (ptrace(PTRACE_INTERRUPT, in->tid, 0, 0)) return -1;
  for (;;) {
    int st;
    if (inject_wait(in, &st, 5000000000ull) || !WIFSTOPPED(st)) return -1;
    int sig = WSTOPSIG(st), ev = st >> 16;
    if (ev == PTRACE_EVENT_STOP) break;
    if (ev == 0 && sig != SIGTRAP) { in->sig = sig; break; }  /* a signal-delivery stop */
    if (ptrace(PTRACE_CONT, in->tid, 0, 0)) return -1;
  }
  return ptrace(PTRACE_GETREGS, in->tid, 0, &in->regs) ? -1 : 0;
}

/* Seize the thread and stop it at a safe point. */
int ht_inject_open(pid_t pid, pid_t tid, HtInject **out, char *err, size_t errlen)
{
  HtInject *in = calloc(1, sizeof(*in));
  if (!in) { snprintf(err, errlen, "out of memory"); return ENOMEM; }
  in->pid = pid;
  in->tid = tid;
  inject_text(in);
  if (ptrace(PTRACE_SEIZE, tid, 0, 0)) {
    int e = errno;
    snprintf(err, errlen, "ptrace: %s", strerror(e));
    free(in);
    return e;
  }
  for (int i = 0;; i++) {
    if (inject_stop(in)) {
      int e = errno ? errno : ESRCH;
      snprintf(err, errlen, "cannot stop thread %ld: %s", (long)tid, strerror(e));
      ptrace(PTRACE_DETACH, tid, 0, 0);
      free(in);
      return e;
    }
    if (inject_safe(in) || i == INJECT_SAFE_TRIES || in->sig) break;
    ptrace(PTRACE_CONT, tid, 0, 0);   /* let it leave libc, try again */
    struct timespec ts = { 0, 100000 + 20000 * i };
    nanosleep(&ts, NULL);
  }
  struct iovec io = { in->xstate, sizeof(in->xstate) };
  if (!ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &io)) in->xlen = io.iov_len;
  in->sp = (in->regs.rsp - 4096) & ~(uintptr_t)15;  /* far below the red zone */
  *out = in;
  return 0;
}

/* Copy n bytes onto the borrowed stack. */
uintptr_t ht_inject_push(HtInject *in, const void *data, size_t n)
{
  in->sp = (in->sp - n) & ~(uintptr_t)15;
  return ht_proc_write(in->pid, in->sp, data, n) ? 0 : in->sp;
}

/* Call fn(a0, a1, a2) in the process. The return address is 0: the call
** ends in a SIGSEGV at ip 0, which is taken here and never delivered. A
** signal for the program that arrives meanwhile is delivered (its handler
** runs inside the call, as it could inside any library call). */
int ht_inject_call(HtInject *in, uintptr_t fn, uintptr_t a0, uintptr_t a1, uintptr_t a2,
                   uintptr_t *ret, char *err, size_t errlen)
{
  struct user_regs_struct r = in->regs;
  uintptr_t sp = ((in->sp - 256) & ~(uintptr_t)15) - 8;
  uint64_t zero = 0;
  if (ht_proc_write(in->pid, sp, &zero, sizeof(zero))) {
    snprintf(err, errlen, "cannot write the stack: %s", strerror(errno));
    return -1;
  }
  r.rip = fn;
  r.rdi = a0;
  r.rsi = a1;
  r.rdx = a2;
  r.rax = 0;
  r.rsp = sp;
  r.orig_rax = (unsigned long)-1;     /* no system call to restart at our ip */
  if (ptrace(PTRACE_SETREGS, in->tid, 0, &r)) {
    snprintf(err, errlen, "cannot set registers: %s", strerror(errno));
    return -1;
  }
  int sig = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    if (ptrace(PTRACE_CONT, in->tid, 0, (void *)(long)sig)) {
      snprintf(err, errlen, "the process went away during the call");
      return -1;
    }
    sig = 0;
    int st;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    uint64_t spent = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ull + (uint64_t)t1.tv_nsec
                     - (uint64_t)t0.tv_nsec;
    if (spent >= INJECT_CALL_NS || inject_wait(in, &st, INJECT_CALL_NS - spent)) {
      snprintf(err, errlen, "the call into the process did not return within 30 s");
      return -1;
    }
    if (WIFEXITED(st) || WIFSIGNALED(st)) {
      snprintf(err, errlen, "the process ended during the call");
      return -1;
    }
    int s = WSTOPSIG(st);
    if ((st >> 16) == PTRACE_EVENT_STOP || s == SIGTRAP) continue;
    if (s != SIGSEGV) { sig = s; continue; }
    if (ptrace(PTRACE_GETREGS, in->tid, 0, &r)) {
      snprintf(err, errlen, "cannot read registers: %s", strerror(errno));
      return -1;
    }
    if (r.rip != 0) {
      snprintf(err, errlen, "the call crashed in the process (SIGSEGV at %#llx)",
               (unsigned long long)r.rip);
      return -1;
    }
    *ret = r.rax;
    return 0;
  }
}

/* Put the thread back and let it go. */
void ht_inject_close(HtInject *in)
{
  ptrace(PTRACE_SETREGS, in->tid, 0, &in->regs);
  if (in->xlen) {
    struct iovec io = { in->xstate, in->xlen };
    ptrace(PTRACE_SETREGSET, in->tid, (void *)NT_X86_XSTATE, &io);
  }
  ptrace(PTRACE_DETACH, in->tid, 0, (void *)(long)in->sig);
  free(in);
}
