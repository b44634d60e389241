/* heaptape -- test program for `heaptape record`: a noinline f1 -> f2 -> f3
** chain whose malloc sits in an inlined function; the L_* tags mark lines. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile void *sym_sink;     /* keeps results alive, defeats tail calls */

/* Always inlined into f3: the allocation's return address lies here. */
static inline __attribute__((always_inline)) void *sym_inl(size_t n)
{
  void *p = malloc(n);  /* L_INL */
  sym_sink = p;
  return p;
}

/* Innermost out-of-line frame. */
__attribute__((noinline)) void *f3(size_t n)
{
  void *p = sym_inl(n);  /* L_F3 */
  sym_sink = p;
  return p;
}

/* Middle frame. */
__attribute__((noinline)) void *f2(size_t n)
{
  void *p = f3(n);  /* L_F2 */
  sym_sink = p;
  return p;
}

/* Outer frame. */
__attribute__((noinline)) void *f1(size_t n)
{
  void *p = f2(n);  /* L_F1 */
  sym_sink = p;
  return p;
}

/* Modes: (none) allocate and free, leak one block; "env" print HEAPTAPE_*
** and LD_PRELOAD; "kill" allocate much, then die by SIGKILL. */
int main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "env")) {
    static const char *const vars[] = {"LD_PRELOAD", "HEAPTAPE_OUTPUT",
      "HEAPTAPE_SAMPLE", "HEAPTAPE_UNWIND", "HEAPTAPE_FRAMES",
      "HEAPTAPE_FOLLOW_FORK", "HEAPTAPE_FOLLOW_EXEC"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
      const char *v = getenv(vars[i]);
      printf("%s=%s\n", vars[i], v ? v : "(unset)");
    }
    return 0;
  }
  int rounds = !strcmp(mode, "kill") ? 200000 : 100;
  for (int i = 0; i < rounds; i++) free(f1(16 + (size_t)(i % 64)));
  f1(4096);  /* leaked */
  if (!strcmp(mode, "kill")) {
    usleep(300000);
    raise(SIGKILL);
  }
  return 0;
}
