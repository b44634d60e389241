/* heaptape -- `heaptape record`: run a program under libheaptape.so, wait for
** it, then finalise its tape (symbols appended) and print a one-line summary. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "cmds.h"
#include "../src/base/fdio.h"
#include "../src/analyze/seal.h"
#include "../src/analyze/symbolize.h"
#include "../src/base/options.h"
#include "../src/base/parse.h"
#include "../src/base/tapename.h"
#include "../src/format/reader.h"
#include "../src/format/squeeze.h"
#include "record_lua.h"    /* --lua (cli/record_lua.c) */
#include "record_python.h" /* --python (cli/record_python.c) */
#include "record_ruby.h"   /* --ruby (cli/record_ruby.c) */
#include "record_access.h" /* --access (cli/record_access.c) */
#include "record_live.h"
#include "record_pprof.h"  /* --pprof-every (cli/record_pprof.c) */
#include "record_seal.h"   /* sealing while the program runs (cli/record_seal.c) */

typedef struct RecOpts {
  const char *output;        /* -o FILE, or NULL for the default name */
  const char *val[HT_OPTION__COUNT]; /* recorder options given (src/base/options.h),
                                     ** numbers normalised, or NULL */
  int no_symbols;            /* --no-symbols: skip finalisation */
  int seal;                  /* seal the tape once finalised (--journal: 0;
                                --seal given: 2) */
  int keep_journal;          /* --keep-journal: the journal kept as FILE.journal */
  HtSealFollow *sf;          /* the main tape's sealer while PROG ran, or NULL */
  int lua;                   /* --lua: 1 Lua only, 2 Lua and native (cli/record_lua.c) */
  int python;                /* --python: 1 Python stacks, 2 with native frames */
  int ruby;                  /* --ruby: 1 Ruby objects, 2 and the malloc heap */
  uint64_t access;           /* --access: 1 in this many accesses kept, 0 = off */
} RecOpts;

/* --access: static programs are refused for valgrind's sake (message). */
static int rec_access;

/* Child being recorded; read by the signal forwarder. */
static volatile sig_atomic_t rec_child;

/* -- Usage ---------------------------------------------------------------- */

/* The options of `heaptape record` itself, after the recorder's (the table
** of src/base/options.h) in --help. */
static const struct { const char *flag, *arg, *help; } rec_cli_opts[] = {
  { "no-symbols", NULL, "leave the tape an unsymbolised journal (faster; run "
    "heaptape symbolize FILE later, on this machine, and heaptape seal FILE)" },
  { "journal", NULL, "leave the tape a journal (format 1, as the recorder writes "
    "it, symbols appended) instead of sealing it; heaptape seal FILE seals it "
    "later" },
  { "seal", NULL, "seal the tape (the default; as heaptape seal FILE does, while "
    "PROG runs): report, stats, flamegraph and pprof then read no events" },
  { "keep-journal", NULL, "keep the journal the sealed tape was made of, as "
    "FILE.journal" },
  { "access", NULL, "run PROG under heaptape's Valgrind tool and record every load, "
    "store and modify of a live heap block too (heaptape ops --access; much "
    "slower: valgrind)" },
  { "access-sample", "N", "with --access: keep a fair 1-in-N sample of the accesses" },
  { "pprof-every", "SEC", "while PROG runs, write a pprof snapshot every SEC "
    "seconds: FILE.0001.pb.gz, ... (use with --sample)" },
  { "live", NULL, "show the heap live in the terminal while PROG runs (docs/LIVE.md); "
    "PROG's output that would go to the terminal goes to PROG.PID.out" },
  { "lua[=native]", NULL, "PROG is lua5.4 or luajit: start the heaptape Lua module "
    "before the script (LUA_INIT); =native also records the interpreter's malloc "
    "heap (docs/LUA.md)" },
  { "python[=native]", NULL, "PROG is python3 (3.11): start the heaptape Python module "
    "before the script (PYTHONPATH); =native interleaves native frames in the "
    "Python stacks and records the interpreter's malloc heap (docs/PYTHON.md)" },
  { "ruby[=native]", NULL, "PROG is ruby (3.1): start the heaptape Ruby extension "
    "before the script (RUBYOPT); =native also records the interpreter's malloc "
    "heap (docs/RUBY.md)" },
};

/* Print text wrapped at 78 columns, every line after the first indented by
** col (the first starts at column at). */
static void record_wrap(FILE *f, const char *text, int at, int col)
{
  if (at > col - 1) { fputc('\n', f); at = 0; }
  fprintf(f, "%*s", col - at, "");
  int x = col;
  for (const char *w = text; *w; ) {
    size_t n = strcspn(w, " ");
    if (x > col && x + 1 + (int)n > 78) { fprintf(f, "\n%*s", col, ""); x = col; }
    else if (x > col) { fputc(' ', f); x++; }
    fprintf(f, "%.*s", (int)n, w);
    x += (int)n;
    w += n;
    while (*w == ' ') w++;
  }
  fputc('\n', f);
}

/* Print one option line: flag and value name, then its help. */
static void record_usage_opt(FILE *f, const char *shortf, const char *flag,
                             const char *arg, const char *help)
{
  int n = fprintf(f, "  %s --%s%s%s", shortf ? shortf : "   ", flag,
                  arg ? " " : "", arg ? arg : "");
  record_wrap(f, help, n, 25);
}

/* Print the options and the environment contract. */
static void record_usage(FILE *f)
{
  fputs(
"usage: heaptape record [options] [--] PROG [ARGS...]\n"
"\n"
"Run PROG with libheaptape.so preloaded and record its heap onto a tape.\n"
"When PROG exits, symbols for every address on the tape are appended to it,\n"
"so the tape can be read without the binaries, and it is sealed (heaptape\n"
"seal: events in order, frees resolved, the figures of the analyses computed\n"
"once; done while PROG runs, on the other core). The exit status is PROG's\n"
"(128+N if it was killed by signal N); if no tape of this run is there at\n"
"the end, heaptape says so and exits 1 when PROG succeeded. A tape it cannot\n"
"create or overwrite is refused before PROG runs.\n"
"\n"
"options:\n", f);
  for (int i = 0; i < HT_OPTION__COUNT; i++) {
    const HtOptDef *d = &ht_options[i];
    if (d->flag) record_usage_opt(f, i == HT_OPTION_OUTPUT ? "-o," : NULL, d->flag,
                                  d->type == HT_OPT_BOOL ? NULL : d->arg, d->help);
  }
  for (size_t i = 0; i < HT_COUNTOF(rec_cli_opts); i++)
    record_usage_opt(f, NULL, rec_cli_opts[i].flag, rec_cli_opts[i].arg, rec_cli_opts[i].help);
  record_usage_opt(f, "-h,", "help", NULL, "this text");
  fputs(
"\n"
"environment passed to PROG (the recorder's configuration; an option above\n"
"overrides a value inherited from the environment):\n"
"  LD_PRELOAD             libheaptape.so is prepended\n", f);
  for (int i = 0; i < HT_OPTION__COUNT; i++) {
    const HtOptDef *d = &ht_options[i];
    char as[64];
    int n = fprintf(f, "  %s", d->env);
    if (d->flag) {
      snprintf(as, sizeof(as), "%s--%s", d->type == HT_OPT_BOOL ? "0/1, as " : "as ", d->flag);
      record_wrap(f, as, n, 25);
    } else {
      record_wrap(f, d->help, n, 25);
    }
  }
  fputs(
"\n"
"environment of heaptape record itself:\n"
"  HEAPTAPE_CACHE         heaptape's cache directory (uncompressed debug files\n"
"                         in debug/; default ~/.cache/heaptape), or off\n"
"  HEAPTAPE_SEAL_LOG      if set, say how the tape was sealed: while PROG ran\n"
"                         (and how many events were left when it ended), or\n"
"                         after it, and why\n"
"\n"
"Statically linked programs cannot be recorded: LD_PRELOAD cannot reach them.\n",
    f);
}

/* Print the synopsis and where the options are described. */
static void record_short_usage(void)
{
  fputs("usage: heaptape record [-o FILE] [--sample BYTES] [--unwind libunwind|fp|none]\n"
        "                       [--frames N] [--follow-fork] [--follow-exec] [--no-symbols]\n"
        "                       [--lua[=native]] [--python[=native]] [--ruby[=native]]\n"
        "                       [--pprof-every SEC] [--live] [--journal] -- PROG [ARGS...]\n"
        "(heaptape record --help describes the options)\n", stderr);
}

/* -- Option values -------------------------------------------------------- */

/* "a, b or c": the names of a CHOICE option's choices ("a=1|b=2|c=0"). */
static void record_choices(char *buf, size_t len, const char *choices)
{
  size_t n = 0, k = 0, total = 1;
  for (const char *c = choices; (c = strchr(c, '|')); c++) total++;
  buf[0] = 0;
  for (const char *c = choices; *c && n + 1 < len; k++) {
    size_t m = strcspn(c, "=|");
    n += (size_t)snprintf(buf + n, len - n, "%s%.*s",
                          !k ? "" : k + 1 == total ? " or " : ", ", (int)m, c);
    c += strcspn(c, "|");
    if (*c) c++;
  }
}

/* Check the value s of option d given as a flag, keep it (numbers in
** decimal) in o; 0, or -1 after a line naming the problem. */
static int record_option(RecOpts *o, int i, const char *s)
{
  const HtOptDef *d = &ht_options[i];
  static char nums[HT_OPTION__COUNT][24];
  uint64_t v;
  if (d->type == HT_OPT_STR) { o->val[i] = s; return 0; }
  if (d->type == HT_OPT_BOOL) { o->val[i] = "1"; return 0; }  /* a flag: on */
  if (!ht_option_parse(d, s, &v)) {
    if (d->type == HT_OPT_CHOICE) o->val[i] = s;
    else { snprintf(nums[i], sizeof(nums[i]), "%llu", (unsigned long long)v); o->val[i] = nums[i]; }
    return 0;
  }
  char what[128];
  if (d->type == HT_OPT_SIZE) snprintf(what, sizeof(what), "a byte count (e.g. 512K)");
  else if (d->type == HT_OPT_CHOICE) record_choices(what, sizeof(what), d->choices);
  else snprintf(what, sizeof(what), "a whole number from %llu to %llu",
                (unsigned long long)d->lo, (unsigned long long)d->hi);
  ht_cli_error("record: --%s takes %s, not '%s'", d->flag, what, s);
  return -1;
}

/* -- Checking the program before running it ------------------------------- */

/* Find prog the way execvp would; returns a malloc'd path or NULL. */
static char *record_which(const char *prog)
{
  if (strchr(prog, '/')) return strdup(prog);
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
  size_t plen = strlen(prog);
  char *found = NULL, *noexec = NULL;
  for (const char *p = path; !found; p++) {
    const char *q = strchr(p, ':');
    size_t dlen = q ? (size_t)(q - p) : strlen(p);
    char *cand = malloc(dlen + plen + 3);
    if (!cand) break;
    if (dlen) { memcpy(cand, p, dlen); cand[dlen] = '/'; dlen++; }
    else { cand[0] = '.'; cand[1] = '/'; dlen = 2; }
    memcpy(cand + dlen, prog, plen + 1);
    struct stat st;
    if (!stat(cand, &st) && S_ISREG(st.st_mode)) {
      if (!access(cand, X_OK)) { found = cand; cand = NULL; }
      else if (!noexec) { noexec = cand; cand = NULL; }
    }
    free(cand);
    if (!q) break;
    p = q;
  }
  if (found) { free(noexec); return found; }
  return noexec;  /* reported as "not executable" by the caller */
}

/* Classify an ELF file: 0 dynamic, else writes why it cannot be recorded. */
static int record_check_elf(int fd, const char *path, char *why, size_t whylen)
{
  unsigned char id[EI_NIDENT];
  if (ht_fd_pread(fd, id, sizeof(id), 0)) {
    snprintf(why, whylen, "%s: not an ELF executable", path);
    return -1;
  }
  uint64_t phoff, phnum, phentsize;
  uint16_t machine;
  if (id[EI_CLASS] == ELFCLASS64) {
    Elf64_Ehdr eh;
    if (ht_fd_pread(fd, &eh, sizeof(eh), 0)) goto bad;
    phoff = eh.e_phoff; phnum = eh.e_phnum; phentsize = eh.e_phentsize;
    machine = eh.e_machine;
  } else if (id[EI_CLASS] == ELFCLASS32) {
    Elf32_Ehdr eh;
    if (ht_fd_pread(fd, &eh, sizeof(eh), 0)) goto bad;
    phoff = eh.e_phoff; phnum = eh.e_phnum; phentsize = eh.e_phentsize;
    machine = eh.e_machine;
  } else {
    goto bad;
  }
  int native_class = sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32;
  if (id[EI_CLASS] != native_class) {
    snprintf(why, whylen, "%s: is a %d-bit program; libheaptape.so is %d-bit",
             path, id[EI_CLASS] == ELFCLASS64 ? 64 : 32, (int)sizeof(void *) * 8);
    return -1;
  }
#if defined(__x86_64__)
  if (machine != EM_X86_64) goto arch;
#elif defined(__aarch64__)
  if (machine != EM_AARCH64) goto arch;
#endif
  int interp = 0, dynamic = 0;
  for (uint64_t i = 0; i < phnum && i < 4096; i++) {
    uint32_t type;
    if (ht_fd_pread(fd, &type, 4, (off_t)(phoff + i * phentsize))) goto bad;
    if (type == PT_INTERP) interp = 1;
    if (type == PT_DYNAMIC) dynamic = 1;
  }
  if (!interp || !dynamic) {
    snprintf(why, whylen, "%s: is statically linked; %s cannot reach it, "
             "so heaptape cannot record it", path,
             rec_access ? "valgrind's malloc replacement" : "LD_PRELOAD");
    return -1;
  }
  return 0;
#if defined(__x86_64__) || defined(__aarch64__)
arch:
  snprintf(why, whylen, "%s: is built for another machine (ELF e_machine %u)",
           path, machine);
  return -1;
#endif
bad:
  snprintf(why, whylen, "%s: not an ELF executable (bad header)", path);
  return -1;
}

/* Check that path can be recorded: an executable dynamic ELF, or a script
** whose interpreter is one. depth limits nested interpreters. */
static int record_check(const char *path, const char *shown, int depth,
                        char *why, size_t whylen)
{
  struct stat st;
  if (stat(path, &st)) {
    snprintf(why, whylen, "%s: %s", shown, strerror(errno));
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(why, whylen, "%s: not a regular file", shown);
    return -1;
  }
  if (access(path, X_OK)) {
    snprintf(why, whylen, "%s: not executable", shown);
    return -1;
  }
  if ((st.st_mode & S_ISUID && st.st_uid != geteuid()) ||
      (st.st_mode & S_ISGID && st.st_gid != getegid())) {
    snprintf(why, whylen, "%s: is set-user/group-ID; the loader ignores "
             "LD_PRELOAD for it, so heaptape cannot record it", shown);
    return -1;
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(why, whylen, "%s: %s", shown, strerror(errno));
    return -1;
  }
  char head[256];
  ssize_t n = pread(fd, head, sizeof(head) - 1, 0);
  if (n >= 4 && !memcmp(head, ELFMAG, SELFMAG)) {
    int rc = record_check_elf(fd, shown, why, whylen);
    close(fd);
    return rc;
  }
  close(fd);
  if (n < 2 || head[0] != '#' || head[1] != '!') {
    snprintf(why, whylen, "%s: not an ELF executable or a script", shown);
    return -1;
  }
  if (depth >= 4) {
    snprintf(why, whylen, "%s: too many nested script interpreters", shown);
    return -1;
  }
  /* "#!interp [arg]": check the interpreter; for /usr/bin/env, its program. */
  head[n] = 0;
  char *nl = strchr(head, '\n');
  if (nl) *nl = 0;
  char *s = head + 2;
  while (*s == ' ' || *s == '\t') s++;
  char *interp = s;
  while (*s && *s != ' ' && *s != '\t') s++;
  char *arg = NULL;
  if (*s) {
    *s++ = 0;
    while (*s == ' ' || *s == '\t') s++;
    if (*s) arg = s;
  }
  if (!*interp) {
    snprintf(why, whylen, "%s: script has an empty #! line", shown);
    return -1;
  }
  char sub[512];
  int rc = record_check(interp, interp, depth + 1, sub, sizeof(sub));
  if (!rc && arg && !strcmp(strrchr(interp, '/') ? strrchr(interp, '/') + 1 : interp, "env")) {
    /* env [-S] [-opts] prog: resolve prog through PATH. */
    char *t = arg;
    while (*t == '-') {                  /* skip options such as -S or -i */
      while (*t && *t != ' ' && *t != '\t') t++;
      while (*t == ' ' || *t == '\t') t++;
    }
    char *e = t;
    while (*e && *e != ' ' && *e != '\t') e++;
    *e = 0;
    if (*t && !strchr(t, '=')) {
      char *p = record_which(t);
      if (!p) {
        snprintf(sub, sizeof(sub), "%s: not found in PATH", t);
        rc = -1;
      } else {
        rc = record_check(p, t, depth + 1, sub, sizeof(sub));
        free(p);
      }
    }
  }
  if (rc) {
    snprintf(why, whylen, "%s: script interpreter %s", shown, sub);
    return -1;
  }
  return 0;
}

/* -- Environment ---------------------------------------------------------- */

/* Set the recorder's environment in the child (the only process that reads it). */
static int record_setenv(const RecOpts *o, const char *lib, const char *tape)
{
  const char *old = getenv("LD_PRELOAD");
  char *pre = malloc(strlen(lib) + (old ? strlen(old) : 0) + 2);
  if (!pre) return -1;
  if (old && *old) sprintf(pre, "%s:%s", lib, old);
  else strcpy(pre, lib);
  int rc = setenv("LD_PRELOAD", pre, 1);
  free(pre);
  /* The options given as flags; a yes/no flag decides either way. */
  for (int i = 0; i < HT_OPTION__COUNT; i++) {
    const HtOptDef *d = &ht_options[i];
    const char *v = i == HT_OPTION_OUTPUT ? tape : o->val[i];
    if (d->flag && d->type == HT_OPT_BOOL && !v) v = "0";
    if (v) rc |= setenv(d->env, v, 1);
  }
  /* Room for the recorder to write the traced pid in place (src/record/env.c). */
  rc |= setenv("_HEAPTAPE_PID", "00000000000000000000", 1);
  return rc;
}

/* The program's name as heaptape record shows it (argv's, without the path). */
static const char *record_base(const char *prog)
{
  return strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
}

/* Tape template for the child: -o as given (%p and %e expanded by the
** recorder), or the default name expanded here, with PROG as it was given. */
static char *record_tape_tmpl(const RecOpts *o, const char *prog, pid_t pid)
{
  if (o->output) return strdup(o->output);
  char name[PATH_MAX + 64], num[24];
  snprintf(num, sizeof(num), "%ld", (long)pid);
  ht_tapename(name, sizeof(name), NULL, record_base(prog), num, NULL, NULL);
  return strdup(name);
}

/* The main tape's path as the parent sees it. */
static char *record_tape_name(const RecOpts *o, const char *prog, pid_t pid)
{
  char name[PATH_MAX + 64], num[24];
  snprintf(num, sizeof(num), "%ld", (long)pid);
  ht_tapename(name, sizeof(name), o->output, record_base(prog), num, NULL, NULL);
  return strdup(name);
}

/* Absolute form of a path relative to the current directory. */
static char *record_abspath(const char *p)
{
  if (p[0] == '/') return strdup(p);
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof(cwd))) return strdup(p);
  size_t n = strlen(cwd) + strlen(p) + 2;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%s/%s", cwd, p);
  return s;
}

/* Check, before anything runs, that the recorder can create the tape: an
** existing file must be writable (it is truncated), else its directory must
** be. A %p in the directory part leaves the check to the recorder. */
static int record_check_output(const RecOpts *o, const char *prog)
{
  char name[PATH_MAX + 64];
  if (!o->output) ht_tapename(name, sizeof(name), NULL, record_base(prog), "<pid>", NULL, NULL);
  char *tmpl = strdup(o->output ? o->output : name);
  if (!tmpl) return 0;
  char *slash = strrchr(tmpl, '/');
  int e = 0;
  struct stat st;
  if (o->output && !strstr(tmpl, "%p") && !stat(tmpl, &st)) {
    if (S_ISDIR(st.st_mode)) e = EISDIR;
    else if (!S_ISREG(st.st_mode)) {  /* it is read back to be finished */
      ht_cli_error("%s: cannot write the tape: not a regular file", tmpl);
      free(tmpl);
      return -1;
    } else if (access(tmpl, W_OK)) e = errno;
  } else if (!slash || !memmem(tmpl, (size_t)(slash - tmpl), "%p", 2)) {
    char *dir = slash ? strndup(tmpl, slash == tmpl ? 1 : (size_t)(slash - tmpl)) : strdup(".");
    if (dir && access(dir, W_OK | X_OK)) e = errno;
    free(dir);
  }
  if (e) ht_cli_error("%s: cannot write the tape: %s", tmpl, strerror(e));
  free(tmpl);
  return e ? -1 : 0;
}

/* -- Running -------------------------------------------------------------- */

/* Forward a signal sent to heaptape (kill, not the terminal) to the child.
** Terminal signals (si_code SI_KERNEL) already reach the child, which shares
** our process group; forwarding those would deliver them twice. */
static void record_forward(int sig, siginfo_t *si, void *uc)
{
  (void)uc;
  int saved = errno;
  pid_t c = rec_child;
  if (c > 0 && (!si || si->si_code != SI_KERNEL)) kill(c, sig);
  errno = saved;
}

/* Signals forwarded to the child. */
static const int rec_signals[] = {SIGINT, SIGTERM, SIGQUIT, SIGHUP};

/* Install (or, with on = 0, remove) the forwarding handlers. */
static void record_signals(int on)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sigemptyset(&sa.sa_mask);
  if (on) { sa.sa_sigaction = record_forward; sa.sa_flags = SA_SIGINFO | SA_RESTART; }
  else sa.sa_handler = SIG_DFL;
  for (size_t i = 0; i < HT_COUNTOF(rec_signals); i++)
    sigaction(rec_signals[i], &sa, NULL);
}

/* Print size as B, KiB, MiB or GiB with one decimal. */
static void record_fmt_bytes(char *buf, size_t len, uint64_t v)
{
  static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB"};
  if (v < 1024) { snprintf(buf, len, "%llu B", (unsigned long long)v); return; }
  double d = (double)v / 1024;
  size_t u = 0;
  while (d >= 1024 && u + 1 < HT_COUNTOF(unit)) { d /= 1024; u++; }
  snprintf(buf, len, "%.1f %s", d, unit[u]);
}

/* Quote a path for the shell when it needs it (for the printed command). */
static void record_shquote(char *buf, size_t len, const char *s)
{
  if (!s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                   "0123456789_-.,/+:@%")]) {
    snprintf(buf, len, "%s", s);
    return;
  }
  size_t j = 0;
  if (j + 1 < len) buf[j++] = '\'';
  for (; *s && j + 5 < len; s++) {
    if (*s == '\'') { memcpy(buf + j, "'\\''", 4); j += 4; }
    else buf[j++] = *s;
  }
  if (j + 1 < len) buf[j++] = '\'';
  buf[j] = 0;
}

/* Whether the file at tape holds a header this run wrote: the child's pid,
** a start no earlier than the fork. 1 yes, 0 no, -1 unreadable (left to the
** finalisation, which names the problem). */
static int record_ours(const char *tape, pid_t pid, uint64_t since_ns)
{
  uint32_t hpid;
  uint64_t start_ns;
  if (ht_tape_header_of(tape, &hpid, &start_ns)) return -1;
  return hpid == (uint32_t)pid && start_ns >= since_ns;
}

/* Finalise the tape and print the summary line (after "heaptape: " and
** label); returns 0, or -1 after one line saying why there is no tape. Only
** a tape this run wrote is read. */
static int record_finish(const RecOpts *o, const char *tape, pid_t pid, uint64_t since_ns,
                         const char *label)
{
  struct stat st;
  if (stat(tape, &st)) {
    if (o->access)
      ht_cli_error("%s: no tape was written (heaptape's Valgrind tool did not start: "
                   "valgrind's message above says why)", tape);
    else
      ht_cli_error("%s: no tape was written (the recorder did not start in the "
                   "program)", tape);
    return -1;
  }
  if (S_ISREG(st.st_mode) && record_ours(tape, pid, since_ns) == 0) {
    ht_cli_error("%s: no tape was written by this run (the file there is not "
                 "this run's; left as it was)", tape);
    return -1;
  }
  HtSymSummary sum;
  char err[512], keep[PATH_MAX + 16];
  if (o->keep_journal) snprintf(keep, sizeof(keep), "%s.journal", tape);
  /* The main tape, sealed while the program ran: the tail and the symbols
  ** are left (else, or when it gave up, sealed here). */
  struct stat sst;
  int rc = 1;
  if (o->sf && !stat(o->sf->path, &sst) && sst.st_dev == st.st_dev && sst.st_ino == st.st_ino) {
    rc = ht_sealfollow_finish(o->sf, o->keep_journal ? keep : NULL, &sum, err, sizeof(err));
    if (rc != 1 && rc) {
      ht_cli_error("%s", err);
      return -1;
    }
    if (getenv("HEAPTAPE_SEAL_LOG") && rc == 1)
      fprintf(stderr, "heaptape: %s: sealed after the run (%s)\n", tape, o->sf->why);
    else if (getenv("HEAPTAPE_SEAL_LOG"))
      fprintf(stderr, "heaptape: %s: sealed while the program ran, %llu of %llu events "
              "after it ended\n", tape, (unsigned long long)o->sf->tail,
              (unsigned long long)sum.events);
  }
  if (rc) {
    /* The Valgrind tool writes raw packets: compress them (a failure leaves
    ** the tape raw, still a tape). */
    if (o->access && S_ISREG(st.st_mode) && ht_tape_squeeze(tape, 3, err, sizeof(err)))
      ht_cli_error("warning: %s", err);
    rc = ht_symbolize_run(tape, o->no_symbols ? HT_SYM_NOSYMBOLS : 0, &sum,
                          err, sizeof(err));
    if (rc) {
      ht_cli_error("%s", err);
      return -1;
    }
    if (o->seal && !o->no_symbols) {
      if (o->keep_journal && S_ISREG(st.st_mode) && (unlink(keep), link(tape, keep)))
        ht_cli_error("warning: %s: cannot keep the journal: %s", keep, strerror(errno));
      if ((rc = ht_seal_tape(tape, 0, NULL, err, sizeof(err))))
        ht_cli_error("%s", err);  /* the journal is left as it was: still a tape */
    }
  }
  char alloc[32], peak[32], q[PATH_MAX + 64];
  record_fmt_bytes(alloc, sizeof(alloc), sum.allocated);
  if (sum.peak_unknown) snprintf(peak, sizeof(peak), "unknown (out of memory)");
  else record_fmt_bytes(peak, sizeof(peak), sum.peak);
  record_shquote(q, sizeof(q), tape);
  fprintf(stderr, "heaptape: %s%llu events, %s allocated, peak %s%s; tape %s "
          "(heaptape report %s)\n", label, (unsigned long long)sum.events, alloc, peak,
          sum.truncated ? " (tape truncated)" : "", tape, q);
  return 0;
}

/* -- What the recorder reported ------------------------------------------- */
/* The recorder appends to a file this command opened (HEAPTAPE_REPORT, see
** src/record/env.c): "tape PID PROG<TAB>PATH" for each tape a process
** starts, in order, and "child PID PROG" for each process it does not
** record. So the tapes are known, never guessed from the directory. */

/* Open the report file (unlinked, appended to by every process). */
static int record_report_open(void)
{
  char tmpl[] = "/tmp/heaptape-report.XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd < 0) return -1;
  unlink(tmpl);
  fcntl(fd, F_SETFL, O_APPEND);
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  return fd;
}

/* In the child: hand the report file down, on a high descriptor that stays
** open across exec, named with its identity so no process writes elsewhere. */
static int record_report_setenv(int fd)
{
  int h = fcntl(fd, F_DUPFD, 900);
  struct stat st;
  if (h < 0 || fstat(h, &st)) return -1;
  char v[96];
  snprintf(v, sizeof(v), "%d:%llu:%llu", h, (unsigned long long)st.st_dev,
           (unsigned long long)st.st_ino);
  return setenv("HEAPTAPE_REPORT", v, 1);
}

/* Finalise every tape the run reported, in order, one line each; name the
** processes not recorded. Returns the number of tapes reported. */
static size_t record_report_finish(const RecOpts *o, int fd, pid_t child, uint64_t since_ns,
                                   int *failed)
{
  struct stat st;
  if (fd < 0 || fstat(fd, &st) || !st.st_size) return 0;
  char *buf = malloc((size_t)st.st_size + 1);
  if (!buf || pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) { free(buf); return 0; }
  buf[st.st_size] = 0;
  size_t ntape = !strncmp(buf, "tape ", 5), nchild = 0;
  for (char *l = buf; (l = strstr(l, "\ntape ")); l++) ntape++;
  char names[256] = "", cwd[PATH_MAX];
  size_t i = 0, good = 0, ncwd = getcwd(cwd, sizeof(cwd)) ? strlen(cwd) : 0;
  for (char *l = buf, *nl; *l; l = nl + 1) {
    nl = strchr(l, '\n');
    if (!nl) break;                      /* a line cut short: ignored */
    *nl = 0;
    long pid = 0;
    char *prog = NULL, *path = NULL;
    if (!strncmp(l, "tape ", 5) && (pid = strtol(l + 5, &prog, 10)) > 0 && *prog == ' ' &&
        (path = strchr(++prog, '\t'))) {
      *path++ = 0;
      if (ncwd && !strncmp(path, cwd, ncwd) && path[ncwd] == '/') path += ncwd + 1;
      char label[300] = "";
      i++;
      if (ntape > 1) snprintf(label, sizeof(label), "%s (pid %ld, tape %zu of %zu): ",
                              prog, pid, i, ntape);
      if (pid != child && kill((pid_t)pid, 0) == 0) {
        ht_cli_error("%s: its process %ld still runs; tape left unsymbolised", path, pid);
        continue;
      }
      if (record_finish(o, path, (pid_t)pid, since_ns, label)) *failed = 1;
      else good++;
    } else if (!strncmp(l, "child ", 6) && (pid = strtol(l + 6, &prog, 10)) > 0 && *prog == ' ') {
      prog++;
      nchild++;
      size_t n = strlen(names);             /* each program once, as long as it fits */
      if (strstr(names, prog)) continue;
      if (n + strlen(prog) + 8 < sizeof(names))
        snprintf(names + n, sizeof(names) - n, "%s%s", n ? ", " : "", prog);
      else if (!strstr(names, "..."))
        strcat(names, ", ...");
    }
  }
  if (nchild && good)                    /* (after a failure, its line alone) */
    fprintf(stderr, "heaptape: %zu child process%s not recorded (%s): --follow-fork "
            "records forked children, --follow-exec the programs children run\n",
            nchild, nchild == 1 ? " was" : "es were", names);
  free(buf);
  return i;
}

/* `heaptape record [options] -- PROG ARGS`. */
int cmd_record(int argc, char **argv)
{
  enum { O_NO_SYMBOLS = 1, O_PPROF_EVERY, O_LUA, O_PYTHON, O_RUBY, O_LIVE, O_SEAL, O_JOURNAL,
         O_KEEP_JOURNAL, O_ACCESS, O_ACCESS_SAMPLE,
         O_TABLE = 1000 };  /* + index in ht_options */
  HtOpt opts[HT_OPTION__COUNT + 16];
  static char names[HT_OPTION__COUNT][40];
  size_t nl = 0;
  for (int i = 0; i < HT_OPTION__COUNT; i++)
    if (ht_options[i].flag) {
      snprintf(names[i], sizeof(names[i]), "--%s", ht_options[i].flag);
      opts[nl++] = (HtOpt){ names[i], i == HT_OPTION_OUTPUT ? 'o' : 0,
                            ht_options[i].type != HT_OPT_BOOL, O_TABLE + i };
    }
  opts[nl++] = (HtOpt){ "--no-symbols", 0, 0, O_NO_SYMBOLS };
  opts[nl++] = (HtOpt){ "--seal", 0, 0, O_SEAL };
  opts[nl++] = (HtOpt){ "--journal", 0, 0, O_JOURNAL };
  opts[nl++] = (HtOpt){ "--keep-journal", 0, 0, O_KEEP_JOURNAL };
  opts[nl++] = (HtOpt){ "--pprof-every", 0, 1, O_PPROF_EVERY };
  opts[nl++] = (HtOpt){ "--lua", 0, 2, O_LUA };
  opts[nl++] = (HtOpt){ "--python", 0, 2, O_PYTHON };
  opts[nl++] = (HtOpt){ "--ruby", 0, 2, O_RUBY };
  opts[nl++] = (HtOpt){ "--live", 0, 0, O_LIVE };
  opts[nl++] = (HtOpt){ "--access", 0, 0, O_ACCESS };
  opts[nl++] = (HtOpt){ "--access-sample", 0, 1, O_ACCESS_SAMPLE };
  opts[nl] = (HtOpt){ NULL, 0, 0, 0 };
  RecOpts o;
  memset(&o, 0, sizeof(o));
  o.seal = 1;
  uint64_t pprof_every_ns = 0;        /* --pprof-every, 0 = off */
  int live = 0;                       /* --live */
  uint64_t access_sample = 0;         /* --access-sample N */
  HtArgs a;                           /* usage: the short one, after the message */
  ht_args_init(&a, argc, argv, "record", NULL, opts);
  int k, first = 0;                   /* first: index of PROG */
  while (!first && (k = ht_args_next(&a)) != HT_ARG_END) {
    switch (k) {
    case HT_ARG_HELP: record_usage(stdout); return HT_EXIT_OK;
    case HT_ARG_BAD: record_short_usage(); return HT_EXIT_USAGE;
    case HT_ARG_OPERAND: first = a.i - 1; break;
    case O_NO_SYMBOLS: o.no_symbols = 1; break;
    case O_SEAL: o.seal = 2; break;
    case O_JOURNAL: o.seal = 0; break;
    case O_KEEP_JOURNAL: o.keep_journal = 1; break;
    case O_LUA: o.lua = a.val && !strcmp(a.val, "native") ? 2 : 1; break;
    case O_PYTHON: o.python = a.val && !strcmp(a.val, "native") ? 2 : 1; break;
    case O_RUBY: o.ruby = a.val && !strcmp(a.val, "native") ? 2 : 1; break;
    case O_LIVE: live = 1; break;
    case O_ACCESS: if (!o.access) o.access = 1; break;
    case O_ACCESS_SAMPLE: {
      char *end;
      errno = 0;
      unsigned long long v = strtoull(a.val, &end, 10);
      if (errno || !*a.val || *end || *a.val == '-' || v < 1 || v > 1000000000) {
        ht_args_bad(&a, "%s takes a whole number from 1 to 1000000000, not '%s'", a.opt, a.val);
        record_short_usage();
        return HT_EXIT_USAGE;
      }
      access_sample = v;
      break;
    }
    case O_PPROF_EVERY:
      if (ht_parse_seconds(a.val, &pprof_every_ns) || pprof_every_ns < 10000000 ||
          pprof_every_ns > 1000000000000000ull) {
        ht_args_bad(&a, "%s takes seconds from 0.01 to 1e6, not '%s'", a.opt, a.val);
        record_short_usage();
        return HT_EXIT_USAGE;
      }
      break;
    default:                          /* the recorder's options */
      if ((k == O_TABLE + HT_OPTION_OUTPUT && ht_args_output(&a, &a.val)) ||
          record_option(&o, k - O_TABLE, a.val)) {
        record_short_usage();
        return HT_EXIT_USAGE;
      }
      break;
    }
  }
  o.output = o.val[HT_OPTION_OUTPUT];
  if (access_sample && !o.access) {
    ht_args_bad(&a, "--access-sample needs --access");
    record_short_usage();
    return HT_EXIT_USAGE;
  }
  if (o.access && access_sample) o.access = access_sample;
  /* The preload's options: under valgrind the tool takes every allocation,
  ** each with up to 64 frames, and records no child process. */
  static const int preload_only[] = {HT_OPTION_SAMPLE, HT_OPTION_UNWIND, HT_OPTION_FRAMES,
                                     HT_OPTION_FOLLOW_FORK, HT_OPTION_FOLLOW_EXEC};
  for (size_t i = 0; o.access && i < sizeof(preload_only) / sizeof(*preload_only); i++)
    if (o.val[preload_only[i]]) {
      ht_args_bad(&a, "--%s is the preload's: --access records under valgrind, every "
                  "allocation with up to 64 frames, no child process (--access-sample N "
                  "samples the accesses)", ht_options[preload_only[i]].flag);
      record_short_usage();
      return HT_EXIT_USAGE;
    }
  if (o.access && (live || pprof_every_ns || o.lua || o.python || o.ruby)) {
    ht_args_bad(&a, "--access runs the program under valgrind: not with --live, "
                "--pprof-every, --lua, --python or --ruby");
    record_short_usage();
    return HT_EXIT_USAGE;
  }
  if (o.keep_journal && (!o.seal || o.no_symbols)) {
    ht_args_bad(&a, "--keep-journal keeps the journal of a sealed tape: not with "
                "--journal or --no-symbols");
    record_short_usage();
    return HT_EXIT_USAGE;
  }
  rec_access = o.access != 0;
  if (live && pprof_every_ns) {  /* both follow the tape from this process */
    ht_args_bad(&a, "--live and --pprof-every: one at a time");
    record_short_usage();
    return HT_EXIT_USAGE;
  }
  if (!first) {
    ht_args_bad(&a, "no program to run");
    record_short_usage();
    return HT_EXIT_USAGE;
  }
  const char *prog = argv[first];
  char **pargv = argv + first;

  char *path = record_which(prog);
  if (!path) { ht_cli_error("%s: command not found", prog); return HT_EXIT_FAIL; }
  char why[1024];
  if (record_check(path, prog, 0, why, sizeof(why))) {
    ht_cli_error("%s", why);
    free(path);
    return HT_EXIT_FAIL;
  }
  if (record_check_output(&o, prog)) {
    free(path);
    return HT_EXIT_FAIL;
  }
  char vg[PATH_MAX], vgdir[PATH_MAX];
  if (o.access && ht_record_access_check(vg, sizeof(vg), vgdir, sizeof(vgdir))) {
    free(path);
    return HT_EXIT_FAIL;
  }
  char *lib = ht_cli_find_lib();
  if (!lib) {
    ht_cli_error("libheaptape.so: not found next to the heaptape binary "
                 "(or in ../lib/heaptape/)");
    free(path);
    return HT_EXIT_FAIL;
  }

  /* Report exec failures through a close-on-exec pipe. */
  int pfd[2];
  if (pipe2(pfd, O_CLOEXEC)) {
    ht_cli_error("record: pipe: %s", strerror(errno));
    return HT_EXIT_FAIL;
  }
  sigset_t block, old;
  sigemptyset(&block);
  for (size_t i = 0; i < HT_COUNTOF(rec_signals); i++) sigaddset(&block, rec_signals[i]);
  sigprocmask(SIG_BLOCK, &block, &old);
  fflush(NULL);
  int rfd = record_report_open();
  struct timespec fork_ts;             /* a tape this run wrote starts later */
  clock_gettime(CLOCK_REALTIME, &fork_ts);
  uint64_t fork_ns = (uint64_t)fork_ts.tv_sec * 1000000000ull + (uint64_t)fork_ts.tv_nsec;
  pid_t pid = fork();
  if (pid < 0) {
    ht_cli_error("record: fork: %s", strerror(errno));
    sigprocmask(SIG_SETMASK, &old, NULL);
    return HT_EXIT_FAIL;
  }
  if (pid == 0) {
    close(pfd[0]);
    sigprocmask(SIG_SETMASK, &old, NULL);
    char *tape = record_tape_tmpl(&o, prog, getpid());
    char *abs = tape ? record_abspath(tape) : NULL;
    int e = ENOMEM;
    if (rfd >= 0) record_report_setenv(rfd);
    char out[4096];
    ht_record_live_outname(out, sizeof(out), prog, getpid());
    if (live && ht_record_live_stdio(out)) {
      e = errno;
      if (write(pfd[1], &e, sizeof(e)) < 0) _exit(127);
      _exit(127);
    }
    if (o.access && abs) {  /* the tool writes the tape: no recorder preloaded */
      char *name = record_tape_name(&o, prog, getpid()), *full = name ? record_abspath(name) : NULL;
      if (full) ht_record_access_exec(vg, vgdir, full, o.access, pargv);
      e = errno;
    } else if (abs && !record_setenv(&o, lib, abs) && (!o.lua || !ht_record_lua_env(abs, o.lua == 2)) &&
        (!o.python || !ht_record_python_env(abs, o.python == 2)) &&
        (!o.ruby || !ht_record_ruby_env(abs, o.ruby == 2, pprof_every_ns))) {
      execv(path, pargv);
      e = errno;
    }
    if (write(pfd[1], &e, sizeof(e)) < 0) _exit(127);
    _exit(127);
  }
  close(pfd[1]);
  rec_child = pid;
  record_signals(1);
  sigprocmask(SIG_SETMASK, &old, NULL);
  char *tape = record_tape_name(&o, prog, pid);

  int e = 0;
  ssize_t n;
  while ((n = read(pfd[0], &e, sizeof(e))) < 0 && errno == EINTR) {}
  close(pfd[0]);
  int status = 0;
  /* The main tape is sealed while PROG runs, by this process (idle but for
  ** it; --pprof-every's snapshots are of its model, --live's view is fed
  ** by its pass), unless the tape is valgrind's (raw packets, compressed at
  ** the end). */
  HtSealFollow sf;
  if (o.seal && !o.no_symbols && !o.access && tape &&
      n != (ssize_t)sizeof(e) && !ht_sealfollow_init(&sf, tape, (uint32_t)pid, fork_ns))
    o.sf = &sf;
  if (live && n != (ssize_t)sizeof(e)) ht_record_live_wait(pid, &status, tape, prog, o.sf);
  else if (pprof_every_ns) ht_record_pprof_wait(pid, &status, tape, pprof_every_ns, o.sf);
  else if (o.sf) ht_record_seal_wait(pid, &status, o.sf);
  else while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  rec_child = 0;
  record_signals(0);
  if (n == (ssize_t)sizeof(e)) {
    ht_cli_error("%s: cannot run: %s", prog, strerror(e));
    free(path); free(lib); free(tape);
    return HT_EXIT_FAIL;
  }
  if (live) {
    char out[4096];
    ht_record_live_outname(out, sizeof(out), prog, pid);
    if (!access(out, F_OK)) ht_cli_error("%s's output: %s", prog, out);
  }
  int rc = WIFEXITED(status) ? WEXITSTATUS(status)
         : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : HT_EXIT_FAIL;
  /* No tape of this run: the job failed (the program's failure status wins).
  ** Without a report (the program closed it at once), the expected tape. */
  int failed = 0;
  if (!record_report_finish(&o, rfd, pid, fork_ns, &failed) && tape &&
      record_finish(&o, tape, pid, fork_ns, ""))
    failed = 1;
  if (failed && rc == 0) rc = HT_EXIT_FAIL;
  if (o.sf) ht_sealfollow_free(o.sf);
  if (rfd >= 0) close(rfd);
  free(path); free(lib); free(tape);
  return rc;
}
