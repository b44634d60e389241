/* heaptape -- calling functions inside another process with ptrace
** (cli/inject.c): one thread of it is borrowed, its registers saved, each
** call made on its stack below the red zone, everything put back. x86-64. */
#ifndef HT_INJECT_H
#define HT_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct HtInject HtInject;

/* Seize thread tid of process pid and stop it at a point where calling
** into libc is safe (not inside the allocator or the loader, as far as
** its registers tell; see cli/inject.c). 0, or an errno (EPERM: ptrace
** not permitted; ESRCH: no such process) with a message in err. */
int ht_inject_open(pid_t pid, pid_t tid, HtInject **out, char *err, size_t errlen);
/* Copy n bytes onto the borrowed stack; their address in the process. */
uintptr_t ht_inject_push(HtInject *in, const void *data, size_t n);
/* Call fn(a0, a1, a2) in the process; its result in *ret. 0, or -1 with a
** message in err (the process died, the call crashed or took over 30 s). */
int ht_inject_call(HtInject *in, uintptr_t fn, uintptr_t a0, uintptr_t a1, uintptr_t a2,
                   uintptr_t *ret, char *err, size_t errlen);
/* Put the thread back as it was (registers, a signal it was about to
** take) and let it go; frees in. */
void ht_inject_close(HtInject *in);

#endif
