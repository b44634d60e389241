/* heaptape -- `heaptape attach PID`: load the recorder into a running process,
** record until Ctrl-C, --duration or the process's end, detach, finalise. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "attach_proc.h"
#include "cmds.h"
#include "inject.h"
#include "live_term.h"
#include "../src/analyze/symbolize.h"
#include "../src/base/options.h"
#include "../src/base/parse.h"
#include "../src/base/tapename.h"
#include "../include/heaptape.h"

#define ATTACH_STOP_NS 10000000000ull  /* longest wait for the recorder to detach */

static const char attach_usage[] =
  "usage: heaptape attach [options] PID\n"
  "Load libheaptape.so into the running process PID and record its heap from\n"
  "now on, onto a tape like `heaptape record`'s, until Ctrl-C (or SIGTERM) to\n"
  "heaptape, --duration, `heaptape detach PID`, or the process's end. Then the\n"
  "recorder's hooks are removed, the tape is closed and symbolised, and the\n"
  "process runs on as before. glibc's malloc, calloc, realloc, free, memalign,\n"
  "posix_memalign, aligned_alloc, valloc, pvalloc and reallocarray are hooked\n"
  "in every loaded object's relocation table (and in objects loaded later);\n"
  "blocks allocated before the attach and freed after it are counted apart.\n"
  "Needs ptrace permission on PID (same user, or CAP_SYS_PTRACE; see\n"
  "kernel.yama.ptrace_scope). docs/INTERNALS.md \"Attaching\" tells how.\n"
  "\n"
  "options:\n"
  "  -o, --output FILE      tape to write; %p the pid, %e the program\n"
  "                         (default heaptape.<prog>.<pid>.tape)\n"
  "      --sample BYTES     sample one allocation per BYTES on average\n"
  "      --unwind METHOD    libunwind (default), fp or none\n"
  "      --frames N         frames kept per stack (1..256, default 64)\n"
  "      --duration SEC     detach after SEC seconds\n"
  "      --no-symbols       leave the tape unsymbolised\n"
  "      --live             show the heap live in the terminal (docs/LIVE.md);\n"
  "                         quitting the view (q, Ctrl-C) detaches\n"
  "  -h, --help             this text\n";

/* How a recording ended (attach_wait). */
enum { ATTACH_DETACHED, ATTACH_EXITED, ATTACH_EXECED };

static volatile sig_atomic_t attach_quit;  /* a signal asked us to detach */

/* SIGINT, SIGTERM, SIGHUP: detach and finish. */
static void attach_on_signal(int sig) { (void)sig; attach_quit = 1; }

/* -- Finishing (shared with `heaptape detach`) ------------------------------------ */

/* Nanoseconds on the monotonic clock. */
static uint64_t attach_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Ask the recorder in pid to detach and wait until it has (or the process
** ended); 0 detached, 1 the process ended or replaced its image, -1 timeout. */
int ht_attach_stop(pid_t pid, uintptr_t ctl_addr)
{
  uint32_t one = 1;
  if (ht_proc_write(pid, ctl_addr + offsetof(HtAttachCtl, stop), &one, sizeof(one)))
    return 1;
  for (uint64_t end = attach_now() + ATTACH_STOP_NS; attach_now() < end; ) {
    HtAttachCtl c;
    if (ht_proc_read(pid, ctl_addr, &c, sizeof(c)) || memcmp(c.magic, HT_ATTACH_MAGIC, 8))
      return 1;
    if (c.state != HT_AS_RECORDING) return 0;
    struct timespec ts = { 0, 5000000 };
    nanosleep(&ts, NULL);
  }
  return -1;
}

/* Finalise the tape (symbols appended) and print the summary line. */
int ht_attach_finish(const char *tape, int no_symbols)
{
  HtSymSummary sum;
  char err[512];
  if (ht_symbolize_run(tape, no_symbols ? HT_SYM_NOSYMBOLS : 0, &sum, err, sizeof(err))) {
    ht_cli_error("%s", err);
    return -1;
  }
  fprintf(stderr, "heaptape: %llu events, %.1f MiB allocated%s; tape %s (heaptape report %s)\n",
          (unsigned long long)sum.events, (double)sum.allocated / 1048576.0,
          sum.truncated ? " (tape truncated)" : "", tape, tape);
  return 0;
}

/* -- Checks before anything is done to the process ------------------------------- */

/* Why ptrace is refused, as a parenthesis for the message. */
static void attach_why_eperm(pid_t pid, char *b, size_t n)
{
  char s[16] = "";
  FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
  if (f) { if (!fgets(s, sizeof(s), f)) s[0] = 0; fclose(f); }
  int scope = atoi(s);
  long uid = ht_proc_uid(pid);
  int cap = 0;
  char st[4096];
  FILE *g = fopen("/proc/self/status", "re");
  if (g) {
    while (fgets(st, sizeof(st), g))
      if (!strncmp(st, "CapEff:", 7)) cap = (strtoull(st + 7, NULL, 16) >> 19) & 1;
    fclose(g);
  }
  if (scope == 3) snprintf(b, n, "kernel.yama.ptrace_scope is 3: no process may be traced");
  else if (!cap && uid >= 0 && uid != (long)geteuid())
    snprintf(b, n, "it is another user's process (uid %ld) and heaptape lacks CAP_SYS_PTRACE", uid);
  else if (!cap && scope >= 1)
    snprintf(b, n, "kernel.yama.ptrace_scope is %d and heaptape lacks CAP_SYS_PTRACE", scope);
  else if (!cap) snprintf(b, n, "heaptape lacks CAP_SYS_PTRACE");
  else snprintf(b, n, "the kernel refused it");
}

/* The process's tracer, 0 if none. */
static long attach_tracer(pid_t pid)
{
  char p[64], l[256];
  snprintf(p, sizeof(p), "/proc/%ld/status", (long)pid);
  FILE *f = fopen(p, "re");
  long t = 0;
  if (!f) return 0;
  while (fgets(l, sizeof(l), f))
    if (!strncmp(l, "TracerPid:", 10)) t = strtol(l + 10, NULL, 10);
  fclose(f);
  return t;
}

/* The thread to borrow: the main one, unless it has ended (pthread_exit). */
static pid_t attach_thread(pid_t pid)
{
  if (ht_proc_state(pid) != 'Z') return pid;
  char dir[64];
  snprintf(dir, sizeof(dir), "/proc/%ld/task", (long)pid);
  DIR *d = opendir(dir);
  pid_t found = pid;
  for (struct dirent *e; d && found == pid && (e = readdir(d)); ) {
    char q[96], b[512];
    snprintf(q, sizeof(q), "%s/%.20s/stat", dir, e->d_name);
    FILE *g = e->d_name[0] != '.' ? fopen(q, "re") : NULL;
    if (!g) continue;
    if (fgets(b, sizeof(b), g) && strrchr(b, ')') && strrchr(b, ')')[2] != 'Z')
      found = (pid_t)atol(e->d_name);
    fclose(g);
  }
  if (d) closedir(d);
  return found;
}

/* Everything that refuses an attach without touching the process; 0 or
** -1 after the one line saying why. */
static int attach_check(pid_t pid, pid_t who)
{
  char st = ht_proc_state(who);      /* (who: a live thread, when main has ended) */
  if (pid == getpid()) { ht_cli_error("attach: cannot attach to heaptape itself"); return -1; }
  if (!st) { ht_cli_error("attach: no such process: %ld", (long)pid); return -1; }
  if (st == 'Z' || st == 'X') { ht_cli_error("attach: process %ld has exited", (long)pid); return -1; }
  int e = ht_proc_maps_errno(who);
  if (e) {
    char why[256];
    attach_why_eperm(pid, why, sizeof(why));
    ht_cli_error("attach: cannot attach to process %ld: ptrace not permitted (%s)", (long)pid, why);
    return -1;
  }
  if (st == 'T' || st == 't') {
    long t = attach_tracer(pid);
    if (t) ht_cli_error("attach: process %ld is stopped under a debugger (tracer pid %ld)",
                        (long)pid, t);
    else ht_cli_error("attach: process %ld is stopped (by SIGSTOP or the terminal); "
                      "continue it first (kill -CONT %ld)", (long)pid, (long)pid);
    return -1;
  }
  long t = attach_tracer(who);
  if (t) {
    ht_cli_error("attach: process %ld is already traced by process %ld (a debugger?)", (long)pid, t);
    return -1;
  }
  uintptr_t lo;
  char path[PATH_MAX];
  if (ht_proc_object(who, "libc.so.6", &lo, path, sizeof(path))) {
    ht_cli_error("attach: process %ld is statically linked (no libc.so.6 loaded): its "
                 "allocator cannot be hooked", (long)pid);
    return -1;
  }
  HtAttachCtl c;
  uintptr_t ca;
  if (ht_proc_ctl(who, &ca, &c) == 1 && c.state == HT_AS_RECORDING) {
    ht_cli_error("attach: process %ld is already being recorded (heaptape attach, pid %u, "
                 "tape %s); heaptape detach %ld stops it", (long)pid, c.attacher, c.tape,
                 (long)pid);
    return -1;
  }
  if (ht_proc_preloaded(who) && ht_proc_object(who, "libheaptape.so", &lo, path, sizeof(path)) == 0) {
    ht_cli_error("attach: process %ld is already being recorded (libheaptape.so preloaded)",
                 (long)pid);
    return -1;
  }
  return 0;
}

/* -- Getting in -------------------------------------------------------------------- */

/* Load the library into pid and start recording; the control block's
** address in *ctl_addr. 0, or -1 after the line saying why. */
static int attach_inject(pid_t pid, pid_t who, const char *lib, const char *spec,
                         uintptr_t *ctl_addr)
{
  uintptr_t dlopen_fn, dlerror_fn, entry, handle = 0, ret = 0;
  if (ht_proc_symbol(who, "libc.so.6", "dlopen", &dlopen_fn) ||
      ht_proc_symbol(who, "libc.so.6", "dlerror", &dlerror_fn)) {
    ht_cli_error("attach: process %ld: no dlopen in its libc.so.6 (glibc older than 2.34?)",
                 (long)pid);
    return -1;
  }
  HtInject *in;
  char err[256];
  int e = ht_inject_open(who, who, &in, err, sizeof(err));
  if (e == EPERM) {
    char why[256];
    attach_why_eperm(pid, why, sizeof(why));
    ht_cli_error("attach: cannot attach to process %ld: ptrace not permitted (%s)", (long)pid, why);
    return -1;
  }
  if (e) { ht_cli_error("attach: process %ld: %s", (long)pid, err); return -1; }
  int rc = -1;
  uintptr_t lp = ht_inject_push(in, lib, strlen(lib) + 1);
  uintptr_t sp = ht_inject_push(in, spec, strlen(spec) + 1);
  if (!lp || !sp) { snprintf(err, sizeof(err), "cannot write into its stack"); goto out; }
  if (ht_inject_call(in, dlopen_fn, lp, RTLD_NOW | RTLD_LOCAL, 0, &handle, err, sizeof(err)))
    goto out;
  if (!handle) {
    char msg[256] = "unknown reason";
    if (!ht_inject_call(in, dlerror_fn, 0, 0, 0, &ret, err, sizeof(err)) && ret &&
        !ht_proc_read(who, ret, msg, sizeof(msg) - 1))
      msg[sizeof(msg) - 1] = 0;
    snprintf(err, sizeof(err), "cannot load %s: %s", lib, msg);
    goto out;
  }
  if (ht_proc_symbol(who, lib, "heaptape_attach_entry", &entry)) {   /* (this copy) */
    snprintf(err, sizeof(err), "libheaptape.so loaded but its entry point not found");
    goto out;
  }
  if (ht_inject_call(in, entry, sp, 0, 0, ctl_addr, err, sizeof(err))) goto out;
  rc = 0;
out:
  ht_inject_close(in);
  if (rc) ht_cli_error("attach: process %ld: %s", (long)pid, err);
  return rc;
}

/* -- The command ----------------------------------------------------------------------- */

/* After the control block became unreadable or foreign: the process exited
 * (its memory goes before it is a zombie: reading fails with ESRCH) or
 * replaced its program (exec: a new memory without the block). */
static int attach_gone(pid_t who, uintptr_t ca)
{
  HtAttachCtl c;
  char st = ht_proc_state(who);
  if (!st || st == 'Z' || st == 'X') return ATTACH_EXITED;
  if (ht_proc_read(who, ca, &c, sizeof(c)) && errno == ESRCH) return ATTACH_EXITED;
  return ATTACH_EXECED;
}

/* Wait for the end of the recording: a signal, the duration, heaptape detach,
 * or the process's exit or exec. */
static int attach_wait(pid_t pid, pid_t who, uintptr_t ca, uint64_t duration_ns)
{
  int pfd = (int)syscall(SYS_pidfd_open, pid, 0), how = -1;
  uint64_t end = duration_ns ? attach_now() + duration_ns : UINT64_MAX;
  while (how < 0) {
    if (attach_quit || attach_now() >= end) {
      int r = ht_attach_stop(who, ca);
      if (r < 0) ht_cli_error("attach: process %ld did not detach within 10 s", (long)pid);
      how = r > 0 ? attach_gone(who, ca) : ATTACH_DETACHED;
      break;
    }
    struct pollfd p = { pfd, POLLIN, 0 };
    if (pfd >= 0 && poll(&p, 1, 50) > 0) {
      char st = ht_proc_state(who);     /* (readable also once main has ended) */
      if (!st || st == 'Z' || st == 'X') { how = ATTACH_EXITED; break; }
    }
    if (pfd < 0) { struct timespec ts = { 0, 50000000 }; nanosleep(&ts, NULL); }
    HtAttachCtl c;
    if (ht_proc_read(who, ca, &c, sizeof(c)) || memcmp(c.magic, HT_ATTACH_MAGIC, 8))
      how = attach_gone(who, ca);       /* gone, or a new image (exec) */
    else if (c.state != HT_AS_RECORDING)
      how = ATTACH_DETACHED;            /* heaptape detach */
  }
  if (pfd >= 0) close(pfd);
  return how;
}

/* `heaptape attach [options] PID`. */
int cmd_attach(int argc, char **argv)
{
  enum { O_OUT = 1, O_SAMPLE, O_UNWIND, O_FRAMES, O_DURATION, O_NOSYM, O_LIVE };
  static const HtOpt opts[] = {
    { "--output", 'o', 1, O_OUT }, { "--sample", 0, 1, O_SAMPLE },
    { "--unwind", 0, 1, O_UNWIND }, { "--frames", 0, 1, O_FRAMES },
    { "--duration", 0, 1, O_DURATION }, { "--no-symbols", 0, 0, O_NOSYM },
    { "--live", 0, 0, O_LIVE }, { NULL, 0, 0, 0 } };
  HtArgs a;
  ht_args_init(&a, argc, argv, "attach", attach_usage, opts);
  const char *out = NULL, *pidarg = NULL;
  uint64_t sample = 0, unwind = HT_UNWIND_LIBUNWIND, frames = HT_DEFAULT_FRAMES, dur = 0;
  int nosym = 0, live = 0, k;
  while ((k = ht_args_next(&a)) != HT_ARG_END) {
    switch (k) {
    case HT_ARG_HELP: return HT_EXIT_OK;
    case HT_ARG_BAD: return HT_EXIT_USAGE;
    case HT_ARG_OPERAND:
      if (pidarg) return ht_args_extra(&a, "process", a.val);
      pidarg = a.val;
      break;
    case O_OUT: if (ht_args_output(&a, &out)) return HT_EXIT_USAGE; break;
    case O_SAMPLE:
      if (ht_option_parse(&ht_options[HT_OPTION_SAMPLE], a.val, &sample))
        return ht_args_bad(&a, "%s takes a byte count (e.g. 512K), not '%s'", a.opt, a.val);
      break;
    case O_UNWIND:
      if (ht_option_parse(&ht_options[HT_OPTION_UNWIND], a.val, &unwind))
        return ht_args_bad(&a, "%s takes libunwind, fp or none, not '%s'", a.opt, a.val);
      break;
    case O_FRAMES: if (ht_args_uint(&a, 1, HT_MAXFRAMES, &frames)) return HT_EXIT_USAGE; break;
    case O_DURATION: if (ht_args_seconds(&a, &dur)) return HT_EXIT_USAGE; break;
    case O_NOSYM: nosym = 1; break;
    case O_LIVE: live = 1; break;
    }
  }
  if (!pidarg) return ht_args_missing(&a, "process");
  if (live && dur)  /* the view ends the recording: q, not a clock */
    return ht_args_bad(&a, "--live and --duration: one at a time");
  char *end;
  long pid = strtol(pidarg, &end, 10);
  if (*end || pid <= 0 || pid > INT32_MAX)
    return ht_args_bad(&a, "PID takes a process id, not '%s'", pidarg);
  pid_t who = attach_thread((pid_t)pid);
  if (attach_check((pid_t)pid, who)) return HT_EXIT_FAIL;

  char lib[PATH_MAX], *found = ht_cli_find_lib();
  if (found) snprintf(lib, sizeof(lib), "%s", found);
  free(found);
  if (!found) {
    ht_cli_error("libheaptape.so: not found next to the heaptape binary (or in ../lib/heaptape/)");
    return HT_EXIT_FAIL;
  }
  char exe[PATH_MAX], num[24], name[PATH_MAX + 64], tape[2 * PATH_MAX + 128];
  char link[64];
  snprintf(link, sizeof(link), "/proc/%ld/exe", (long)who);
  ssize_t n = readlink(link, exe, sizeof(exe) - 1);
  exe[n > 0 ? n : 0] = 0;
  const char *prog = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
  snprintf(num, sizeof(num), "%ld", pid);
  ht_tapename(name, sizeof(name), out, prog, num, NULL, NULL);
  if (name[0] == '/') snprintf(tape, sizeof(tape), "%s", name);
  else {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof(cwd))) { ht_cli_error("attach: getcwd: %s", strerror(errno)); return HT_EXIT_FAIL; }
    snprintf(tape, sizeof(tape), "%s/%s", cwd, name);
  }
  char dir[sizeof(tape)];
  snprintf(dir, sizeof(dir), "%s", tape);
  *strrchr(dir, '/') = 0;
  if (access(dir[0] ? dir : "/", W_OK | X_OK)) {
    ht_cli_error("%s: cannot write the tape: %s", tape, strerror(errno));
    return HT_EXIT_FAIL;
  }
  struct stat ts;
  if (!stat(tape, &ts) && !S_ISREG(ts.st_mode)) {  /* it is read back to be finished */
    ht_cli_error("%s: cannot write the tape: not a regular file", tape);
    return HT_EXIT_FAIL;
  }

  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = attach_on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);

  char spec[2 * PATH_MAX + 640];
  snprintf(spec, sizeof(spec), "tape=%s\nsample=%llu\nunwind=%llu\nframes=%llu\nattacher=%ld\nlate=%llu\n",
           tape, (unsigned long long)sample, (unsigned long long)unwind,
           (unsigned long long)frames, (long)getpid(),
           (unsigned long long)ht_proc_age_ns((pid_t)pid));
  uintptr_t ca;
  if (attach_inject((pid_t)pid, who, lib, spec, &ca)) return HT_EXIT_FAIL;
  HtAttachCtl c;
  if (ht_proc_read(who, ca, &c, sizeof(c))) {
    ht_cli_error("attach: process %ld ended as the recording started", pid);
    return HT_EXIT_FAIL;
  }
  if (c.error == HEAPTAPE_E_RUNNING) {
    ht_cli_error("attach: process %ld is already being recorded (by the heaptape API or "
                 "another heaptape)", pid);
    return HT_EXIT_FAIL;
  }
  if (c.state != HT_AS_RECORDING) {
    ht_cli_error("attach: process %ld: cannot start recording: %.255s", pid, c.why);
    return HT_EXIT_FAIL;
  }
  fprintf(stderr, "heaptape: recording process %ld (%s): %u slots hooked in %u objects; "
          "Ctrl-C or heaptape detach %ld ends it\n", pid, prog, c.slots, c.objects, pid);
  if (live) {  /* the view until q or Ctrl-C, then detach as on Ctrl-C */
    HtFollow f;
    int st = 0, ended = 0;
    if (!ht_follow_init(&f, tape, (uint32_t)pid)) {
      ht_live_term_run(&f, (pid_t)pid, &st, &ended, prog);
      ht_follow_free(&f);
    }
    attach_quit = 1;
  }
  int how = attach_wait((pid_t)pid, who, ca, dur);
  if (how == ATTACH_EXECED)
    fprintf(stderr, "heaptape: process %ld replaced its program (exec): the recording "
            "ends there\n", pid);
  else if (how == ATTACH_EXITED)
    fprintf(stderr, "heaptape: process %ld exited: the recording ends there\n", pid);
  else {
    fprintf(stderr, "heaptape: detached from process %ld\n", pid);
  }
  return ht_attach_finish(tape, nosym) ? HT_EXIT_FAIL : HT_EXIT_OK;
}
