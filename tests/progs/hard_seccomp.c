/* heaptape tests -- a seccomp filter (raw BPF, every thread) that makes membarrier(2)
** fail with EPERM, then threads allocating for ~300 ms: the program must end as usual. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#define HARD_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define HARD_ARCH AUDIT_ARCH_AARCH64
#endif

/* Opaque allocator calls: the compiler must not elide malloc/free pairs. */
static void *(*volatile do_malloc)(size_t) = malloc;
static void (*volatile do_free)(void *) = free;

/* Install, on every thread (TSYNC), a filter returning EPERM for membarrier. */
static int deny_membarrier(void)
{
  struct sock_filter f[] = {
#ifdef HARD_ARCH
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HARD_ARCH, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
#endif
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_membarrier, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { (unsigned short)(sizeof(f) / sizeof(f[0])), f };
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return -1;
  return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
}

/* Nanoseconds on the monotonic clock. */
static long long now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Allocate and free mixed sizes for ~300 ms. */
static void *worker(void *arg)
{
  (void)arg;
  long long end = now_ns() + 300000000LL;
  void *keep[32] = { 0 };
  for (unsigned i = 0; now_ns() < end; i++) {
    do_free(keep[i % 32]);
    keep[i % 32] = do_malloc(8 + (i * 131) % 3000);
  }
  for (int k = 0; k < 32; k++) do_free(keep[k]);
  return NULL;
}

int main(void)
{
  for (int i = 0; i < 100; i++) do_free(do_malloc(100));
  int rc = deny_membarrier();
  printf("filter: %s\n", rc ? strerror(errno) : "installed");
  errno = 0;
  long q = syscall(SYS_membarrier, 0 /* MEMBARRIER_CMD_QUERY */, 0, 0);
  printf("membarrier: %ld %s\n", q, q < 0 ? strerror(errno) : "allowed");
  pthread_t th[3];
  for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, worker, NULL);
  worker(NULL);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  printf("done\n");
  return rc != 0;
}
