/* heaptape test program -- record --access with a fork: the parent writes
** its block P 10 times, forks, and reads P 3 times after the child is done;
** the child (not recorded: its events are not the parent's) writes P 700
** times, and allocates, writes 500 times and frees a block Q of 96 bytes.
** Then a second child execs this program again ("child": a block R of 200
** bytes written 300 times), which Valgrind follows but must not record.
** tests/integration/access_fork.sh checks that the tape has the parent's
** 10 stores and 3 loads of P and nothing of the children's. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int sink;

static void child_work(int *p)
{
  int *q = malloc(96);
  for (int i = 0; i < 500; i++) ((volatile int *)q)[i % 24] = i;
  for (int i = 0; i < 700; i++) ((volatile int *)p)[i % 16] = i;
  free(q);
}

/* A child process: pid, or -1. */
static pid_t spawn(int *p, const char *self)
{
  pid_t pid = fork();
  if (pid != 0) return pid;
  if (self) execl(self, self, "child", (char *)NULL);
  else child_work(p);
  _exit(self ? 3 : 0);
}

static int reap(pid_t pid)
{
  int status;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
  if (argc > 1 && !strcmp(argv[1], "child")) {
    int *r = malloc(200);
    for (int i = 0; i < 300; i++) ((volatile int *)r)[i % 50] = i;
    free(r);
    return 0;
  }
  int *p = malloc(64);
  for (int i = 0; i < 10; i++) ((volatile int *)p)[i] = i;
  if (!reap(spawn(p, NULL))) return 1;
  if (!reap(spawn(p, argv[0]))) return 2;
  for (int i = 0; i < 3; i++) sink += ((volatile int *)p)[i];
  free(p);
  return 0;
}
