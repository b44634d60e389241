/* heaptape -- a running process seen from outside (cli/attach_proc.c): its
** state, age, loaded objects and their symbols, its memory, the recorder's
** control block. For `heaptape attach` and `heaptape detach`. */
#ifndef HT_ATTACH_PROC_H
#define HT_ATTACH_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "../src/base/attachctl.h"

/* The state letter of /proc/PID/stat ('R', 'S', 'T', 'Z', ...), 0 if none. */
char ht_proc_state(pid_t pid);
/* Nanoseconds since the process started (its starttime in /proc/PID/stat). */
uint64_t ht_proc_age_ns(pid_t pid);
/* The real uid the process runs as, or -1. */
long ht_proc_uid(pid_t pid);
/* Is /proc/PID/maps readable? 0, or the errno of opening it. */
int ht_proc_maps_errno(pid_t pid);
/* The object whose file is named base (libc.so.6; or, starting with '/', the
** file at that path) in the process: its load bias and its path. 0 or -1. */
int ht_proc_object(pid_t pid, const char *base, uintptr_t *bias, char *path, size_t cap);
/* The address in the process of dynamic symbol sym of that object; 0 or -1. */
int ht_proc_symbol(pid_t pid, const char *base, const char *sym, uintptr_t *addr);
/* Does the process's initial environment preload libheaptape.so? */
int ht_proc_preloaded(pid_t pid);
/* n bytes of the process's memory at a; 0 or -1 (errno set). */
int ht_proc_read(pid_t pid, uintptr_t a, void *buf, size_t n);
int ht_proc_write(pid_t pid, uintptr_t a, const void *buf, size_t n);
/* The recorder's control block: 1 found (its address in *addr), 0 the
** library is not loaded (or not one with a control block), -1 unreadable. */
int ht_proc_ctl(pid_t pid, uintptr_t *addr, HtAttachCtl *ctl);

#endif
