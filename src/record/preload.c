/* heaptape -- the only file defining libc's allocator names and C++'s operator
** new/delete (mangled): thin forwards into ht_record_* and ht_lifecycle_*. */
#pragma GCC optimize("no-omit-frame-pointer")
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lifecycle.h"
#include "got.h"
#include "record.h"

#define PRELOAD HT_API

/* -- The recorded calls --------------------------------------------------------- */
/* Whether to record is decided inline (ht_lifecycle_active: recording, or
** the first allocation before the constructor starts it); a call not
** recorded goes straight to glibc. */

/* malloc and the operator new family. The sampling decision comes before
** the call, so an unsampled block is a tail call to glibc (a failed call
** still counts its bytes: a bias only on allocation failure). */
HT_INLINE void *preload_malloc(size_t n, unsigned kind)
{
  if (!ht_lifecycle_active()) return __libc_malloc(n);
  int pre = ht_record_due(n);
  if (HT_LIKELY(pre == 1)) return __libc_malloc(n);
  ht_guard++;
  void *p = __libc_malloc(n);
  if (p) ht_record_alloc(p, n, kind, 0, pre);
  ht_guard--;
  return p;
}

/* calloc. */
HT_INLINE void *preload_calloc(size_t n, size_t m)
{
  if (!ht_lifecycle_active()) return __libc_calloc(n, m);
  return ht_record_calloc(n, m);
}

/* memalign and aligned new. */
HT_INLINE void *preload_memalign(size_t a, size_t n, unsigned kind)
{
  if (!ht_lifecycle_active()) return __libc_memalign(a, n);
  return ht_record_memalign(a, n, kind);
}

/* valloc and pvalloc. */
HT_INLINE void *preload_valloc(size_t n, int page_round)
{
  if (!ht_lifecycle_active()) return page_round ? __libc_pvalloc(n) : __libc_valloc(n);
  return ht_record_valloc(n, page_round);
}

/* realloc (of NULL: malloc). */
HT_INLINE void *preload_realloc(void *p, size_t n)
{
  if (!ht_lifecycle_active()) return p ? __libc_realloc(p, n) : __libc_malloc(n);
  return ht_record_realloc(p, n);
}

/* -- C ---------------------------------------------------------------------- */

PRELOAD void *malloc(size_t n) { return preload_malloc(n, HT_K_MALLOC); }
PRELOAD void *calloc(size_t n, size_t m) { return preload_calloc(n, m); }
PRELOAD void *realloc(void *p, size_t n) { return preload_realloc(p, n); }
PRELOAD void free(void *p) { ht_record_free(p, HT_K_MALLOC, 0); }
PRELOAD void *memalign(size_t a, size_t n) { return preload_memalign(a, n, HT_K_ALIGNED); }
PRELOAD void *valloc(size_t n) { return preload_valloc(n, 0); }
PRELOAD void *pvalloc(size_t n) { return preload_valloc(n, 1); }

/* reallocarray: realloc with an overflow check. */
PRELOAD void *reallocarray(void *p, size_t n, size_t m)
{
  size_t b;
  if (__builtin_mul_overflow(n, m, &b)) { errno = ENOMEM; return NULL; }
  return preload_realloc(p, b);
}

/* The next definition of sym (glibc's), resolved once under the guard
** (dlsym may allocate); NULL when there is none. */
static void *preload_real(void *_Atomic *cache, const char *sym)
{
  void *f = atomic_load_explicit(cache, memory_order_relaxed);
  if (HT_LIKELY(f != NULL)) return f;
  ht_guard++;
  f = dlsym(RTLD_NEXT, sym);
  ht_guard--;
  atomic_store_explicit(cache, f, memory_order_relaxed);
  return f;
}
#define REAL(type, sym) \
  ({ static void *_Atomic real_; (type)preload_real(&real_, #sym); })

/* The aligned allocators call glibc's own function, so that every odd
** alignment gets exactly glibc's answer (and errno): the recorder observes. */
typedef void *(*AlignedFn)(size_t, size_t);
typedef int (*PosixMemalignFn)(void **, size_t, size_t);

/* posix_memalign: glibc decides; a block it returns is recorded. */
PRELOAD int posix_memalign(void **out, size_t a, size_t n)
{
  PosixMemalignFn f = REAL(PosixMemalignFn, posix_memalign);
  if (!f) return ENOMEM;
  if (!ht_lifecycle_active()) return f(out, a, n);
  ht_guard++;
  int rc = f(out, a, n);
  if (!rc) ht_record_alloc(*out, n, HT_K_ALIGNED, a, 0);
  ht_guard--;
  return rc;
}

/* aligned_alloc: C11; glibc 2.36 accepts any alignment, later ones do not. */
PRELOAD void *aligned_alloc(size_t a, size_t n)
{
  AlignedFn f = REAL(AlignedFn, aligned_alloc);
  if (!f) f = __libc_memalign;
  if (!ht_lifecycle_active()) return f(a, n);
  ht_guard++;
  void *p = f(a, n);
  if (p) ht_record_alloc(p, n, HT_K_ALIGNED, a, 0);
  ht_guard--;
  return p;
}

/* C23 sized frees. */
PRELOAD void free_sized(void *p, size_t n) { ht_record_free(p, HT_K_SIZED, n); }
PRELOAD void free_aligned_sized(void *p, size_t a, size_t n)
{
  (void)a;
  ht_record_free(p, HT_K_ALIGNED_SIZED, n);
}

/* malloc_usable_size: glibc's own answer (blocks are glibc's, unchanged). */
PRELOAD size_t malloc_usable_size(void *p)
{
  size_t (*f)(void *) = REAL(size_t (*)(void *), malloc_usable_size);
  return p && f ? f(p) : 0;
}

/* -- How a process ends -------------------------------------------------------- */
/* exit and return from main reach the library destructor; the others are
** caught here: _exit and _Exit skip it, quick_exit ends in glibc's internal
** _exit after the at_quick_exit handlers (the recorder's own handler, the
** first registered, runs last), and pthread_exit from main leaves the
** process to its last thread (src/record/tape.c "Process end": the writer thread). */

/* _exit and _Exit skip atexit and destructors: finalise the tape here. */
PRELOAD void _exit(int status)
{
  ht_lifecycle_exit(status);
  for (;;) syscall(SYS_exit_group, status);
}
PRELOAD void _Exit(int status)
{
  ht_lifecycle_exit(status);
  for (;;) syscall(SYS_exit_group, status);
}

/* exit: remember the status for the trailer written by the library destructor. */
typedef void (*ExitFn)(int);
PRELOAD __attribute__((noreturn)) void exit(int status)
{
  ht_lifecycle_status(status);
  ExitFn f = REAL(ExitFn, exit);
  if (f) f(status);
  for (;;) syscall(SYS_exit_group, status);
}

/* quick_exit: remember the status for the recorder's at_quick_exit handler. */
PRELOAD __attribute__((noreturn)) void quick_exit(int status)
{
  ht_lifecycle_status(status);
  ExitFn f = REAL(ExitFn, quick_exit);
  if (f) f(status);
  for (;;) syscall(SYS_exit_group, status);
}

/* pthread_exit: from the main thread, the process now ends with its last thread. */
typedef void (*PthreadExitFn)(void *);
PRELOAD __attribute__((noreturn)) void pthread_exit(void *ret)
{
  PthreadExitFn f = REAL(PthreadExitFn, pthread_exit);
  ht_lifecycle_thread_exit();
  if (f) f(ret);
  for (;;) syscall(SYS_exit, 0);
}

/* -- Signal masks -------------------------------------------------------------- */

/* sigprocmask: the program's calls go to glibc unchanged; the recorder's own
** (libunwind takes its locks with every signal blocked) keep glibc's internal
** signals as they are, which glibc's restore would not (record.c). */
typedef int (*SigprocmaskFn)(int, const sigset_t *, sigset_t *);
PRELOAD int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
  if (ht_guard) return ht_sigmask(how, set, old);
  SigprocmaskFn f = REAL(SigprocmaskFn, sigprocmask);
  if (!f) { errno = ENOSYS; return -1; }
  return f(how, set, old);
}

/* -- Program start: return from main ------------------------------------------- */
/* glibc's start code calls exit(main's result) internally, past any
** interposer; wrapping main is the one place that sees that status. */

typedef int (*MainFn)(int, char **, char **);
typedef int (*StartFn)(MainFn, int, char **, void (*)(void), void (*)(void),
                       void (*)(void), void *);
static MainFn preload_main;              /* the program's main */

/* main as the program sees it, with its result kept for the trailer. */
static int preload_wrap_main(int argc, char **argv, char **envp)
{
  int r = preload_main(argc, argv, envp);
  ht_lifecycle_status(r);
  return r;
}

/* __libc_start_main: start the program through preload_wrap_main. */
PRELOAD int __libc_start_main(MainFn main, int argc, char **argv, void (*init)(void),
                              void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
  StartFn real = REAL(StartFn, __libc_start_main);
  if (!real) abort();
  preload_main = main;
  return real(preload_wrap_main, argc, argv, init, fini, rtld_fini, stack_end);
}

/* -- exec: one path finishes the tape before the image is replaced ------------ */
/* Every variant ends in ht_lifecycle_exec (flush every buffer, write the
** trailer) and then calls the next definition of the v-form; glibc's own
** execl* call its internal execve, so each name is defined here. If the
** exec fails, ht_lifecycle_exec_failed goes on with the same tape. */

typedef int (*ExecveFn)(const char *, char *const[], char *const[]);
typedef int (*ExecvFn)(const char *, char *const[]);

/* The next definition of an exec function (resolved under the guard). */
static void *preload_exec_next(const char *sym)
{
  ht_guard++;
  void *f = dlsym(RTLD_NEXT, sym);
  ht_guard--;
  return f;
}

/* Finish the tape, run the real exec, recover when it returned. */
#define EXEC_RUN(call) \
  do { \
    int stopped_ = ht_lifecycle_exec(); \
    int rc_ = (call); \
    int err_ = errno; \
    if (stopped_) ht_lifecycle_exec_failed(); \
    errno = err_; \
    return rc_; \
  } while (0)

PRELOAD int execve(const char *path, char *const argv[], char *const envp[])
{
  ExecveFn f = (ExecveFn)preload_exec_next("execve");
  EXEC_RUN(f ? f(path, argv, envp) : (errno = ENOSYS, -1));
}
PRELOAD int execv(const char *path, char *const argv[])
{
  ExecvFn f = (ExecvFn)preload_exec_next("execv");
  EXEC_RUN(f ? f(path, argv) : (errno = ENOSYS, -1));
}
PRELOAD int execvp(const char *file, char *const argv[])
{
  ExecvFn f = (ExecvFn)preload_exec_next("execvp");
  EXEC_RUN(f ? f(file, argv) : (errno = ENOSYS, -1));
}
PRELOAD int execvpe(const char *file, char *const argv[], char *const envp[])
{
  ExecveFn f = (ExecveFn)preload_exec_next("execvpe");
  EXEC_RUN(f ? f(file, argv, envp) : (errno = ENOSYS, -1));
}
PRELOAD int fexecve(int fd, char *const argv[], char *const envp[])
{
  typedef int (*FexecveFn)(int, char *const[], char *const[]);
  FexecveFn f = (FexecveFn)preload_exec_next("fexecve");
  EXEC_RUN(f ? f(fd, argv, envp) : (errno = ENOSYS, -1));
}
PRELOAD int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                     int flags)
{
  typedef int (*ExecveatFn)(int, const char *, char *const[], char *const[], int);
  ExecveatFn f = (ExecveatFn)preload_exec_next("execveat");
  EXEC_RUN(f ? f(dirfd, path, argv, envp, flags) : (errno = ENOSYS, -1));
}

/* Arguments of an execl-style call up to the NULL (stack array, no malloc). */
#define EXEC_ARGV(argv, arg0, ap) \
  size_t n_ = 1; \
  va_start(ap, arg0); \
  while (va_arg(ap, char *)) n_++; \
  va_end(ap); \
  char *argv[n_ + 1]; \
  argv[0] = (char *)arg0; \
  va_start(ap, arg0); \
  for (size_t i_ = 1; i_ <= n_; i_++) argv[i_] = va_arg(ap, char *)

PRELOAD int execl(const char *path, const char *arg, ...)
{
  va_list ap;
  EXEC_ARGV(argv, arg, ap);
  va_end(ap);
  return execv(path, argv);
}
PRELOAD int execlp(const char *file, const char *arg, ...)
{
  va_list ap;
  EXEC_ARGV(argv, arg, ap);
  va_end(ap);
  return execvp(file, argv);
}
PRELOAD int execle(const char *path, const char *arg, ...)
{
  va_list ap;
  EXEC_ARGV(argv, arg, ap);
  char *const *envp = va_arg(ap, char *const *);
  va_end(ap);
  return execve(path, argv, envp);
}

/* -- C++ operator new / delete ------------------------------------------------ */
/* On failure the real operator (libstdc++, via dlsym) runs the new_handler
** loop and throws std::bad_alloc, outside our guard. */

typedef void *(*NewFn)(size_t);
typedef void *(*NewAFn)(size_t, size_t);
typedef void *(*NewNtFn)(size_t, const void *);
typedef void *(*NewANtFn)(size_t, size_t, const void *);

/* The next definition of an operator new. */
static void *preload_next(const char *sym)
{
  ht_guard++;
  void *f = dlsym(RTLD_NEXT, sym);
  ht_guard--;
  if (!f) abort();
  return f;
}

#define NEW_PLAIN(name, kind) \
  PRELOAD void *name(size_t n) \
  { \
    void *p = preload_malloc(n, kind); \
    return p ? p : ((NewFn)preload_next(#name))(n); \
  }
#define NEW_NOTHROW(name, kind) \
  PRELOAD void *name(size_t n, const void *nt) \
  { \
    void *p = preload_malloc(n, kind); \
    return p ? p : ((NewNtFn)preload_next(#name))(n, nt); \
  }
#define NEW_ALIGN(name, kind) \
  PRELOAD void *name(size_t n, size_t a) \
  { \
    void *p = preload_memalign(a, n, kind); \
    return p ? p : ((NewAFn)preload_next(#name))(n, a); \
  }
#define NEW_ALIGN_NOTHROW(name, kind) \
  PRELOAD void *name(size_t n, size_t a, const void *nt) \
  { \
    void *p = preload_memalign(a, n, kind); \
    return p ? p : ((NewANtFn)preload_next(#name))(n, a, nt); \
  }

NEW_PLAIN(_Znwm, HT_K_NEW)                                    /* new(size_t) */
NEW_PLAIN(_Znam, HT_K_NEW_ARRAY)                              /* new[](size_t) */
NEW_NOTHROW(_ZnwmRKSt9nothrow_t, HT_K_NEW)                    /* new(size_t, nothrow) */
NEW_NOTHROW(_ZnamRKSt9nothrow_t, HT_K_NEW_ARRAY)
NEW_ALIGN(_ZnwmSt11align_val_t, HT_K_NEW_ALIGNED)             /* new(size_t, align) */
NEW_ALIGN(_ZnamSt11align_val_t, HT_K_NEW_ARRAY_ALIGNED)
NEW_ALIGN_NOTHROW(_ZnwmSt11align_val_tRKSt9nothrow_t, HT_K_NEW_ALIGNED)
NEW_ALIGN_NOTHROW(_ZnamSt11align_val_tRKSt9nothrow_t, HT_K_NEW_ARRAY_ALIGNED)

/* delete(void*) family: plain, array, nothrow. */
PRELOAD void _ZdlPv(void *p) { ht_record_free(p, HT_K_NEW, 0); }
PRELOAD void _ZdaPv(void *p) { ht_record_free(p, HT_K_NEW_ARRAY, 0); }
PRELOAD void _ZdlPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; ht_record_free(p, HT_K_NEW, 0); }
PRELOAD void _ZdaPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; ht_record_free(p, HT_K_NEW_ARRAY, 0); }
/* Sized delete. */
PRELOAD void _ZdlPvm(void *p, size_t n) { ht_record_free(p, HT_K_SIZED, n); }
PRELOAD void _ZdaPvm(void *p, size_t n) { ht_record_free(p, HT_K_SIZED, n); }
/* Aligned delete. */
PRELOAD void _ZdlPvSt11align_val_t(void *p, size_t a) { (void)a; ht_record_free(p, HT_K_NEW_ALIGNED, 0); }
PRELOAD void _ZdaPvSt11align_val_t(void *p, size_t a) { (void)a; ht_record_free(p, HT_K_NEW_ARRAY_ALIGNED, 0); }
PRELOAD void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *nt)
{ (void)a; (void)nt; ht_record_free(p, HT_K_NEW_ALIGNED, 0); }
PRELOAD void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *nt)
{ (void)a; (void)nt; ht_record_free(p, HT_K_NEW_ARRAY_ALIGNED, 0); }
/* Sized aligned delete. */
PRELOAD void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t a) { (void)a; ht_record_free(p, HT_K_ALIGNED_SIZED, n); }
PRELOAD void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t a) { (void)a; ht_record_free(p, HT_K_ALIGNED_SIZED, n); }

/* -- The same functions for relocation hooks (got.c, `heaptape attach`) -------- */
/* In a process that loaded this library with dlopen, &malloc here would
** name glibc's malloc (the first definition in the global scope), so the
** hooks are taken by hidden aliases of the definitions above. C++'s
** operator new and delete call malloc and free through libstdc++'s own
** slots, so they are recorded as malloc and free. */
#define HOOK_ALIAS(name) \
  extern __typeof(name) hook_##name \
      __attribute__((alias(#name), copy(name), visibility("hidden")));
HOOK_ALIAS(malloc)
HOOK_ALIAS(calloc)
HOOK_ALIAS(realloc)
HOOK_ALIAS(free)
HOOK_ALIAS(memalign)
HOOK_ALIAS(valloc)
HOOK_ALIAS(pvalloc)
HOOK_ALIAS(reallocarray)
HOOK_ALIAS(posix_memalign)
HOOK_ALIAS(aligned_alloc)

const HtHook ht_preload_hooks[] = {
  { "malloc", (void *)hook_malloc },
  { "calloc", (void *)hook_calloc },
  { "realloc", (void *)hook_realloc },
  { "free", (void *)hook_free },
  { "memalign", (void *)hook_memalign },
  { "valloc", (void *)hook_valloc },
  { "pvalloc", (void *)hook_pvalloc },
  { "reallocarray", (void *)hook_reallocarray },
  { "posix_memalign", (void *)hook_posix_memalign },
  { "aligned_alloc", (void *)hook_aligned_alloc },
  { NULL, NULL }
};
