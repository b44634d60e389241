/* heaptape -- start-up from the environment: which tape a process writes and
** its name, the report file heaptape record reads, LD_PRELOAD for children. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env.h"
#include "tape.h"
#include "tapefile.h"
#include "../base/tapename.h"
#include "../../include/heaptape.h"

/* Append decimal v at p; returns the end. */
static char *env_utoa(char *p, uint64_t v)
{
  char t[24];
  int n = 0;
  do t[n++] = (char)('0' + v % 10); while ((v /= 10));
  while (n) *p++ = t[--n];
  return p;
}

/*
** Which tape a process writes. The process that heaptape (or LD_PRELOAD)
** started is the traced process, marked by _HEAPTAPE_PID: it records, and
** goes on recording through its own execs, each image onto a tape of its
** own (a shim that execs the real interpreter, `env X=1 prog`: the tape
** must cover the program meant). A forked child records with follow_fork
** and then is a traced process itself; a program exec'd by a child that is
** not recorded records only with follow_exec. Whatever is not recorded is
** told to `heaptape record` on the report descriptor, so that it can say so.
*/

/* Expand the output template into out: %p = pid, %e = program name; a
** forked child's tape gets ".pid" and a new image's ".prog" if the template
** does not name them; dup > 0 appends "-dup". */
static void env_path(char *out, size_t cap, const char *tmpl, const char *prog,
                      int how, unsigned dup)
{
  char pid[24];
  *env_utoa(pid, ht_g.pid) = 0;
  int had_pid, had_prog;
  char *p = out + ht_tapename(out, cap, tmpl, prog, pid, &had_pid, &had_prog);
  if (how == HT_ENV_CHILD && !had_pid) { *p++ = '.'; p = env_utoa(p, ht_g.pid); }
  if (how == HT_ENV_AGAIN && !had_prog) {   /* before a ".tape" extension */
    size_t n = (size_t)(p - out), m = strnlen(prog, 200);
    char *ext = n >= 5 && !strcmp(p - 5, ".tape") ? p - 5 : p;
    memmove(ext + 1 + m, ext, (size_t)(p - ext));
    ext[0] = '.';
    memcpy(ext + 1, prog, m);
    p += 1 + m;
  }
  if (dup) { *p++ = '-'; p = env_utoa(p, dup); }
  *p = 0;
}

/* Remove libheaptape.so from LD_PRELOAD in our own environment, in place. */
void ht_env_unpreload(void)
{
  for (char **e = environ; e && *e; e++) {
    if (strncmp(*e, "LD_PRELOAD=", 11)) continue;
    char *r = *e + 11, *w = r;
    while (*r) {
      char *tok = r;
      while (*r && *r != ' ' && *r != ':') r++;
      size_t n = (size_t)(r - tok);
      int ours = 0;
      for (size_t i = 0; i + 11 <= n; i++)
        if (!memcmp(tok + i, "libheaptape", 11)) ours = 1;
      if (n && !ours) {
        if (w != *e + 11) *w++ = ':';
        memmove(w, tok, n);
        w += n;
      }
      if (*r) r++;
    }
    *w = 0;
  }
}

/* -- The report descriptor ------------------------------------------------------ */
/* `heaptape record` passes HEAPTAPE_REPORT=fd:dev:ino, a file opened with
** O_APPEND; each process appends one line per tape it starts ("tape PID
** PROG<TAB>PATH") and one per process it does not record ("child PID
** PROG"). Written only while the descriptor is still that file. */

/* Append line (up to its NUL) to the report file, if there is one. */
static void env_report(const char *line)
{
  const char *s = ht_getenv("HEAPTAPE_REPORT");
  if (!s || !*s) return;
  char *e;
  long fd = strtol(s, &e, 10);
  if (*e++ != ':') return;
  unsigned long long dev = strtoull(e, &e, 10);
  if (*e++ != ':') return;
  unsigned long long ino = strtoull(e, &e, 10);
  struct stat st;
  if (fd < 0 || fstat((int)fd, &st) || st.st_dev != dev || st.st_ino != ino) return;
  ssize_t w = write((int)fd, line, strlen(line));
  (void)w;
}

/* The name of this process's program. */
static const char *env_prog(char *exe, size_t cap)
{
  ssize_t n = readlink("/proc/self/exe", exe, cap - 1);
  exe[n > 0 ? n : 0] = 0;
  const char *prog = strrchr(exe, '/');
  return prog ? prog + 1 : exe;
}

/* Report the calling process as not recorded. */
void ht_env_report_child(void)
{
  char exe[4096];
  const char *prog = env_prog(exe, sizeof(exe));
  char line[256] = "child ", *p = env_utoa(line + 6, (uint64_t)getpid());
  *p++ = ' ';
  size_t m = strnlen(prog, 200);
  memcpy(p, prog, m);
  p[m] = '\n';
  p[m + 1] = 0;
  env_report(line);
}

/* Mark the calling process as traced: _HEAPTAPE_PID=<its pid>, which its
** exec'd images inherit. In place when `heaptape record` reserved the room
** (20 digits): no allocation, and a program that copies its environment
** before main (bash) copies the mark; else through libc's own setenv. */
static void env_mark_traced(void)
{
  char pid[24];
  *env_utoa(pid, (uint64_t)getpid()) = 0;
  for (char **e = environ; e && *e; e++)
    if (!strncmp(*e, "_HEAPTAPE_PID=", 14) && strlen(*e + 14) >= 20) {
      memset(*e + 14, 0, strlen(*e + 14));
      memcpy(*e + 14, pid, strlen(pid));
      return;
    }
  int (*set)(const char *, const char *, int) =
      (int (*)(const char *, const char *, int))dlsym(RTLD_NEXT, "setenv");
  if (set) set("_HEAPTAPE_PID", pid, 1);
}

/* Start from the environment: the preloaded image (first, or exec'd, or
** after a failed exec: again), or a following fork child. */
int ht_env_start(int how)
{
  ht_guard++;
  ht_options_load();
  char exe[4096], path[4096 + 320];
  const char *prog = env_prog(exe, sizeof(exe));
  ht_g.pid = (uint32_t)getpid();
  env_mark_traced();                   /* this process goes on recording through exec */
  int fd = -1;
  for (unsigned dup = 0; fd < 0 && dup < 100; dup++) {
    env_path(path, sizeof(path), ht_opt.output, prog, how, dup);
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (how == HT_ENV_FIRST ? O_TRUNC : O_EXCL), 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    ht_log("cannot open tape %s: %s; not recording", path, strerror(errno));
    ht_guard--;
    return HEAPTAPE_E_IO;
  }
  ht_tapefile_adopt(fd, path);
  char line[4096 + 512] = "tape ", *p = env_utoa(line + 5, ht_g.pid);
  *p++ = ' ';
  const char *tp = ht_tapefile_path();
  size_t m = strnlen(prog, 200), k = strnlen(tp, 4096 + 64);
  memcpy(p, prog, m); p += m;
  *p++ = '\t';
  memcpy(p, tp, k); p += k;
  *p++ = '\n';
  *p = 0;
  env_report(line);
  HtTapeInfo info = { 0 };  /* (the session reads the command line) */
  info.exe = exe;
  info.sample = ht_opt.sample;
  info.unwind = (uint32_t)ht_opt.unwind;
  info.frames = (uint32_t)ht_opt.frames;
  info.frontend = "native";
  int rc = ht_tape_start(ht_tapefile_sink, NULL, ht_tapefile_close, &info, 1, HT_TAPE_ENV);
  if (rc) { ht_tapefile_close(NULL); ht_log("cannot start recording: %s", heaptape_strerror(rc)); }
  ht_guard--;
  return rc;
}

/* The preloaded image starts: it is the traced process (first, or after
** its exec), or a program a child exec'd, recorded only with follow_exec. */
void ht_env_start_image(void)
{
  ht_options_load();
  const char *t = ht_getenv("_HEAPTAPE_PID");
  if (!t || !strtoul(t, NULL, 10)) { ht_env_start(HT_ENV_FIRST); return; }
  if (strtoul(t, NULL, 10) == (unsigned long)getpid()) { ht_env_start(HT_ENV_AGAIN); return; }
  if (ht_opt.follow_exec) { ht_env_start(HT_ENV_CHILD); return; }
  ht_env_report_child();
  ht_env_unpreload();                   /* nor its own children */
}
