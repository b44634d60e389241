/* heaptape tests -- process events: fork (child allocates), exec, _exit, exit,
** abort, SIGKILL, an allocating signal handler, late thread destructors. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Opaque allocator calls: the compiler must not elide malloc/free pairs. */
static void *(*volatile do_malloc)(size_t) = malloc;
static void (*volatile do_free)(void *) = free;

static volatile sig_atomic_t handled;      /* handler runs */

/* n blocks of a distinctive size, all freed unless keep. */
static void churn(int n, size_t size, int keep)
{
  for (int i = 0; i < n; i++) {
    char *p = do_malloc(size);
    p[0] = (char)i;
    if (!keep) do_free(p);
  }
}

/* SIGALRM handler that allocates and frees. */
static void on_alarm(int sig)
{
  (void)sig;
  void *p = do_malloc(777);
  do_free(p);
  handled++;
}

static pthread_key_t key;                  /* keydtor: re-armed every round */

/* Key destructor: free the block, allocate another one, set it again. */
static void key_dtor(void *v)
{
  do_free(v);
  pthread_setspecific(key, do_malloc(8888));
}

/* Thread whose destructors allocate in every round, after the recorder's. */
static void *late_thread(void *arg)
{
  (void)arg;
  pthread_setspecific(key, do_malloc(8888));
  return NULL;
}

/* Thread that allocates until the process is gone. */
static void *busy_thread(void *arg)
{
  (void)arg;
  for (;;) churn(10, 9999, 0);
  return NULL;
}

int main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "fork";
  if (!strcmp(mode, "fork")) {            /* parent 1000 x 1111, child 1000 x 2222 */
    churn(1000, 1111, 0);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) { churn(1000, 2222, 0); printf("child done\n"); exit(0); }
    int st;
    waitpid(pid, &st, 0);
    churn(10, 1111, 0);
    printf("parent done %d\n", WEXITSTATUS(st));
  } else if (!strcmp(mode, "exec")) {     /* 100 x 3333, then exec ourselves */
    churn(100, 3333, 0);
    fflush(stdout);
    struct timespec ts = { 0, 250000000 };  /* exec ends us like SIGKILL: let the flush run */
    nanosleep(&ts, NULL);
    execl(argv[0], argv[0], "execd", (char *)NULL);
    return 1;
  } else if (!strcmp(mode, "execnow")) {  /* 100 x 3334, exec at once (execvp) */
    churn(100, 3334, 0);
    fflush(stdout);
    char *av[] = { argv[0], "execd", NULL };
    execvp(argv[0], av);
    return 1;
  } else if (!strcmp(mode, "execfail")) { /* 100 x 3335, failing execl, 100 x 3336 */
    churn(100, 3335, 0);
    execl("/nonexistent/heaptape-test", "x", (char *)NULL);
    churn(100, 3336, 0);
    printf("exec failed\n");
  } else if (!strcmp(mode, "execd")) {    /* the exec'd image: 100 x 4444 */
    churn(100, 4444, 0);
    printf("execd done\n");
  } else if (!strcmp(mode, "_exit")) {    /* 500 x 5555 kept, then _exit(3) */
    churn(500, 5555, 1);
    _exit(3);
  } else if (!strcmp(mode, "exit")) {     /* 500 x 5151 kept, exit(5) */
    churn(500, 5151, 1);
    exit(5);
  } else if (!strcmp(mode, "main")) {     /* 500 x 5252 kept, return 6 from main */
    churn(500, 5252, 1);
    return 6;
  } else if (!strcmp(mode, "keydtor")) {  /* destructors past ours; exit with a busy thread */
    pthread_key_create(&key, key_dtor);
    for (int i = 0; i < 20; i++) {
      pthread_t th;
      pthread_create(&th, NULL, late_thread, NULL);
      pthread_join(th, NULL);
    }
    pthread_t busy;
    pthread_create(&busy, NULL, busy_thread, NULL);
    churn(100, 5353, 0);
    printf("keydtor done\n");
    fflush(stdout);
    return 7;
  } else if (!strcmp(mode, "abort")) {    /* 500 x 6666, 300 ms, abort */
    churn(500, 6666, 1);
    struct timespec ts = { 0, 300000000 };
    nanosleep(&ts, NULL);
    abort();
  } else if (!strcmp(mode, "kill")) {     /* 20000 x 7777 kept, "ready", then wait */
    churn(20000, 48, 1);
    churn(2000, 7777, 0);
    printf("ready\n");
    fflush(stdout);
    for (;;) pause();
  } else if (!strcmp(mode, "signal")) {   /* handler allocates during malloc loop */
    signal(SIGALRM, on_alarm);
    struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
    setitimer(ITIMER_REAL, &it, NULL);
    while (handled < 200) churn(100, 99, 0);
    it.it_value.tv_usec = 0;
    it.it_interval.tv_usec = 0;
    setitimer(ITIMER_REAL, &it, NULL);
    printf("signals handled\n");
  }
  return 0;
}
