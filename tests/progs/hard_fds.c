/* heaptape tests -- descriptors the program owns: a daemon that closes every fd
** above 2 and then uses a blocking pipe and a log file; files dup2'd over 3, 4, 5;
** a program that leaves no descriptor free to open. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define LATE_DAEMON 3917   /* size allocated only after the descriptors were closed */
#define LATE_DUP2 3919     /* size allocated only after the dup2s */
#define ROUNDS 4
#define PER_ROUND 50

/* Opaque allocator calls: the compiler must not elide malloc/free pairs. */
static void *(*volatile do_malloc)(size_t) = malloc;
static void (*volatile do_free)(void *) = free;

/* Sleep ms milliseconds (longer than the recorder's 100 ms flush period). */
static void sleep_ms(long ms)
{
  struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
  while (nanosleep(&ts, &ts) && errno == EINTR) {}
}

/* FNV-1a of n bytes, continuing from h. */
static uint32_t fnv(uint32_t h, const void *p, size_t n)
{
  for (const unsigned char *c = p; n--; c++) h = (h ^ *c) * 16777619u;
  return h;
}

/* Write all n bytes to fd; 0 on success. */
static int write_all(int fd, const char *p, size_t n)
{
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Read exactly n bytes from fd; 0 on success. */
static int read_all(int fd, char *p, size_t n)
{
  while (n) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

/* Size and checksum of a file's whole content, as one line on stdout. */
static void report_file(const char *label, const char *path)
{
  int fd = open(path, O_RDONLY);
  if (fd < 0) { printf("%s: cannot open: %s\n", label, strerror(errno)); return; }
  char buf[4096];
  size_t total = 0;
  uint32_t h = 2166136261u;
  ssize_t r;
  while ((r = read(fd, buf, sizeof(buf))) > 0) { h = fnv(h, buf, (size_t)r); total += (size_t)r; }
  close(fd);
  printf("%s: %zu bytes, fnv %08x\n", label, total, h);
}

/* A message of round i, built in heap memory; *len receives its length. */
static char *message(int i, size_t *len)
{
  size_t n = 200 + (size_t)i * 37;
  char *m = do_malloc(n);
  for (size_t k = 0; k < n; k++) m[k] = (char)('a' + (k + (size_t)i) % 26);
  *len = n;
  return m;
}

/* Daemon: close fds 3..1023, then talk through a blocking pipe and log to a
** file (argv: LOG), allocating LATE_DAEMON blocks, 300 ms between rounds. */
static int daemon_mode(const char *log)
{
  void *early[100];
  for (int i = 0; i < 100; i++) early[i] = do_malloc(64 + (size_t)i);
  for (int fd = 3; fd < 1024; fd++) close(fd);
  int p[2];
  if (pipe(p)) { printf("pipe: %s\n", strerror(errno)); return 1; }
  int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (lfd < 0) { printf("log: %s\n", strerror(errno)); return 1; }
  printf("pipe %d %d log %d\n", p[0], p[1], lfd);
  fflush(stdout);
  void *late[ROUNDS * PER_ROUND];
  for (int i = 0; i < ROUNDS; i++) {
    for (int k = 0; k < PER_ROUND; k++) late[i * PER_ROUND + k] = do_malloc(LATE_DAEMON);
    size_t n;
    char *m = message(i, &n);
    char *back = do_malloc(n);
    int bad = write_all(p[1], m, n) || read_all(p[0], back, n) || memcmp(m, back, n);
    struct pollfd pf = { p[0], POLLIN, 0 };
    int extra = poll(&pf, 1, 0) > 0;       /* anything in the pipe we did not write */
    printf("round %d: %zu bytes %s%s\n", i, n, bad ? "CORRUPT" : "ok", extra ? " EXTRA" : "");
    fflush(stdout);
    char line[64];
    int ln = snprintf(line, sizeof(line), "round %d wrote %zu\n", i, n);
    if (write_all(lfd, line, (size_t)ln)) printf("log write: %s\n", strerror(errno));
    do_free(back);
    do_free(m);
    if (i + 1 < ROUNDS) sleep_ms(300);
  }
  close(lfd);
  close(p[0]);
  close(p[1]);
  report_file("log", log);
  for (int i = 0; i < ROUNDS * PER_ROUND; i++) do_free(late[i]);
  for (int i = 0; i < 100; i++) do_free(early[i]);
  printf("daemon done\n");
  return 0;
}

/* dup2: files DIR/f3, f4, f5 over fds 3, 4, 5; write through them while
** allocating LATE_DUP2 blocks, 150 ms between rounds; print each file. */
static int dup2_mode(const char *dir)
{
  char path[3][4096];
  for (int i = 0; i < 3; i++) {
    snprintf(path[i], sizeof(path[i]), "%s/f%d", dir, i + 3);
    int fd = open(path[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) { printf("open %s: %s\n", path[i], strerror(errno)); return 1; }
    int want = i + 3;
    if (fd != want) {
      if (dup2(fd, want) != want) { printf("dup2: %s\n", strerror(errno)); return 1; }
      close(fd);
    }
  }
  void *late[ROUNDS * PER_ROUND];
  for (int i = 0; i < ROUNDS; i++) {
    for (int k = 0; k < PER_ROUND; k++) late[i * PER_ROUND + k] = do_malloc(LATE_DUP2);
    for (int fd = 3; fd <= 5; fd++) {
      size_t n;
      char *m = message(i + fd, &n);
      if (write_all(fd, m, n) || write_all(fd, "\n", 1))
        printf("round %d fd %d: write: %s\n", i, fd, strerror(errno));
      do_free(m);
    }
    if (i + 1 < ROUNDS) sleep_ms(150);
  }
  for (int fd = 3; fd <= 5; fd++) close(fd);
  for (int i = 0; i < 3; i++) {
    char label[8];
    snprintf(label, sizeof(label), "f%d", i + 3);
    report_file(label, path[i]);
  }
  for (int i = 0; i < ROUNDS * PER_ROUND; i++) do_free(late[i]);
  printf("dup2 done\n");
  return 0;
}

/* nofile: the soft limit of descriptors set to the highest open one + 1
** and every number below it taken (no open can succeed), then allocating
** over ~700 ms (7 of the recorder's 100 ms periods). */
static int nofile_mode(void)
{
  int hi = 2;
  for (int fd = 3; fd < 4096; fd++)
    if (fcntl(fd, F_GETFD) >= 0) hi = fd;
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl)) { printf("getrlimit: %s\n", strerror(errno)); return 1; }
  rl.rlim_cur = (rlim_t)hi + 1;
  if (setrlimit(RLIMIT_NOFILE, &rl)) { printf("setrlimit: %s\n", strerror(errno)); return 1; }
  while (open("/dev/null", O_RDONLY) >= 0) {}
  printf("open after the limit: %s\n", errno == EMFILE ? "EMFILE" : strerror(errno));
  for (int i = 0; i < 7; i++) {
    do_free(do_malloc(LATE_DAEMON));
    sleep_ms(100);
  }
  printf("nofile done\n");
  return 0;
}

int main(int argc, char **argv)
{
  if (argc == 2 && !strcmp(argv[1], "nofile")) return nofile_mode();
  if (argc == 3 && !strcmp(argv[1], "daemon")) return daemon_mode(argv[2]);
  if (argc == 3 && !strcmp(argv[1], "dup2")) return dup2_mode(argv[2]);
  fprintf(stderr, "usage: hard_fds daemon LOG | dup2 DIR | nofile\n");
  return 2;
}
