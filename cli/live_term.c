/* heaptape -- the live view's terminal session: curses on /dev/tty (the
** program recorded may keep stdout), keys, a refresh every second, and the
** terminal restored on quit, on Ctrl-C and on heaptape's own fatal signals. */
#include <curses.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <term.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "live_term.h"
#include "../src/output/live.h"

#define LIVE_REFRESH_NS 1000000000ull  /* the view follows the tape every second */
#define LIVE_KEY_MS 100                /* keys and the program's end: 10 times that */
#define LIVE_IDLE_NS 2000000000ull     /* a tape not growing this long: its
                                          writer is gone, what it held is shown */

/* -- Signals ------------------------------------------------------------------ */

static volatile sig_atomic_t live_quit;   /* a signal asked the view to end */
static volatile sig_atomic_t live_child;  /* the program, to pass kill(1)'s signals on */
static int live_tty = -1;                 /* the terminal's descriptor */
static struct termios live_saved;         /* its modes before curses */
static char live_leave[256];              /* terminfo: leave the alternate screen,
                                             cursor visible, attributes off */
static size_t live_leave_n;               /* bytes of live_leave */

/* SIGINT, SIGTERM, SIGHUP: end the view; one sent by kill (not the
** terminal, which signals the program itself) goes on to the program. */
static void live_on_quit(int sig, siginfo_t *si, void *uc)
{
  (void)uc;
  int saved = errno;
  if (live_child > 0 && (!si || si->si_code != SI_KERNEL)) kill(live_child, sig);
  live_quit = 1;
  errno = saved;
}

/* A fatal signal of heaptape itself: the terminal's modes and screen back
** with async-signal-safe calls only (endwin is not), then die of it. */
static void live_on_fatal(int sig)
{
  if (live_tty >= 0) {
    tcsetattr(live_tty, TCSANOW, &live_saved);
    if (write(live_tty, live_leave, live_leave_n) < 0) {}
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

static const int live_fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static const int live_ends[] = {SIGINT, SIGTERM, SIGHUP};

/* The terminfo strings that leave the screen as curses found it. */
static void live_leave_seq(void)
{
  static const char *const caps[] = {"rmcup", "cnorm", "sgr0"};
  live_leave_n = 0;
  for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
    const char *s = tigetstr(caps[i]);
    if (!s || s == (char *)-1) continue;
    size_t n = strlen(s);
    if (live_leave_n + n >= sizeof(live_leave)) break;
    memcpy(live_leave + live_leave_n, s, n);
    live_leave_n += n;
  }
}

/* -- The session ------------------------------------------------------------ */

/* Monotonic time in ns. */
static uint64_t live_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Whether pid (not heaptape's child) has ended: gone, or a zombie. */
static int live_gone(pid_t pid)
{
  if (kill(pid, 0) < 0 && errno == ESRCH) return 1;
  char path[64], b[512];
  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "re");
  if (!f) return 1;
  size_t n = fread(b, 1, sizeof(b) - 1, f);
  fclose(f);
  b[n] = 0;
  const char *p = strrchr(b, ')');  /* the name may hold anything */
  return p && p[1] == ' ' && p[2] == 'Z';
}

/* The program's end as the first line shows it. */
static void live_state(char *b, size_t n, int status)
{
  if (WIFEXITED(status)) snprintf(b, n, "program exited %d", WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    snprintf(b, n, "program killed by SIG%s", sigabbrev_np(WTERMSIG(status))
             ? sigabbrev_np(WTERMSIG(status)) : "?");
  else snprintf(b, n, "program ended");
}

/* A key: change the view. Returns 1 when it asks to quit. */
static int live_key(HtFollow *f, HtLiveView *v, int k)
{
  switch (k) {
  case 'q': case 'Q': return 1;
  case 's': v->sort = (v->sort + 1) % HT_LIVE_BY__COUNT; v->sel = v->top = 0; break;
  case 'b': case 'c': v->calls = !v->calls; break;
  case '\n': case '\r': case KEY_ENTER: case 't': v->stack = !v->stack; break;
  case 27: v->stack = 0; break;
  case 'p': case ' ': v->paused = !v->paused; break;
  case KEY_UP: case 'k': if (v->sel > 0) v->sel--; break;
  case KEY_DOWN: case 'j': v->sel++; break;
  case KEY_PPAGE: v->sel = v->sel > 10 ? v->sel - 10 : 0; break;
  case KEY_NPAGE: v->sel += 10; break;
  case KEY_LEFT: case 'h': case ',':  /* a moment back (from now: the last one) */
    if (v->moment < 0) v->moment = (int)f->nmom - 1;
    else if (v->moment > 0) v->moment--;
    break;
  case KEY_RIGHT: case 'l': case '.':
    if (v->moment >= 0 && ++v->moment >= (int)f->nmom) v->moment = -1;
    break;
  case KEY_HOME: case 'g': if (f->nmom) v->moment = 0; break;
  case KEY_END: case 'n': case 'G': v->moment = -1; break;
  default: break;
  }
  return 0;
}

/* Run the view. */
int ht_live_term_run(HtFollow *f, pid_t child, int *status, int *reaped, const char *title)
{
  FILE *tty = fopen("/dev/tty", "r+e");
  if (!tty) {
    ht_cli_error("live: no terminal to draw on (/dev/tty: %s)", strerror(errno));
    return -1;
  }
  live_tty = fileno(tty);
  tcgetattr(live_tty, &live_saved);
  SCREEN *scr = newterm(NULL, tty, tty);
  if (!scr) {
    ht_cli_error("live: cannot use the terminal (TERM=%s)",
                 getenv("TERM") ? getenv("TERM") : "");
    fclose(tty);
    live_tty = -1;
    return -1;
  }
  set_term(scr);
  live_leave_seq();
  struct sigaction sa, old_end[3], old_fatal[5];
  memset(&sa, 0, sizeof(sa));
  sigemptyset(&sa.sa_mask);
  sa.sa_sigaction = live_on_quit;
  sa.sa_flags = SA_SIGINFO;
  live_quit = 0;
  /* Signals sent to heaptape go on to the program only if it is ours. */
  int own = child > 0 && !(waitpid(child, status, WNOHANG) < 0 && errno == ECHILD);
  live_child = own ? child : 0;
  for (size_t i = 0; i < 3; i++) sigaction(live_ends[i], &sa, &old_end[i]);
  memset(&sa, 0, sizeof(sa));
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = live_on_fatal;
  for (size_t i = 0; i < 5; i++) sigaction(live_fatal[i], &sa, &old_fatal[i]);
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  curs_set(0);
  timeout(LIVE_KEY_MS);

  HtLiveView v = {.moment = -1, .title = title, .state = child > 0 ? "running" : "following"};
  char state[600];
  uint64_t next = 0, grew = live_now();
  int ended = 0;
  while (!live_quit) {
    uint64_t now = live_now();
    if (child > 0 && !*reaped) {
      pid_t w = own ? waitpid(child, status, WNOHANG) : live_gone(child) ? child : 0;
      if (w == child && !own) {
        *reaped = 1;
        v.state = "program ended";
        next = 0;
      } else if (w == child) {
        *reaped = 1;
        live_child = 0;
        live_state(state, sizeof(state), *status);
        v.state = state;
        next = 0;  /* show the end at once */
      }
    }
    if (!v.paused && now >= next) {
      int final = (child > 0 && *reaped) || (child <= 0 && now - grew >= LIVE_IDLE_NS);
      if (ht_follow_poll(f, final)) {
        snprintf(state, sizeof(state), "%s", f->err);
        v.state = state;
      } else if (f->polled_bytes) grew = now;
      if (child <= 0 && f->done && !ended) {
        ended = 1;
        v.state = "tape closed: left/right scrub through time";
      }
      next = now + LIVE_REFRESH_NS;
      ht_live_draw(f, &v);
    } else if (!v.paused) {
      ht_follow_take(f);  /* record --live: the sealer keeps up between refreshes */
    }
    int k = getch();
    if (k == ERR) continue;
    if (k == KEY_RESIZE) { ht_live_draw(f, &v); continue; }
    if (live_key(f, &v, k)) break;
    ht_live_draw(f, &v);
  }
  endwin();
  delscreen(scr);
  for (size_t i = 0; i < 5; i++) sigaction(live_fatal[i], &old_fatal[i], NULL);
  for (size_t i = 0; i < 3; i++) sigaction(live_ends[i], &old_end[i], NULL);
  live_child = 0;
  tcsetattr(live_tty, TCSANOW, &live_saved);
  fclose(tty);
  live_tty = -1;
  return 0;
}
