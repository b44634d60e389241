/* heaptape -- the control block of an attached recorder: what `heaptape
** attach` and `heaptape detach` read and write in the process's memory. */
#ifndef HT_ATTACHCTL_H
#define HT_ATTACHCTL_H

#include <stdint.h>

/*
** libheaptape.so exports one HtAttachCtl as `heaptape_attach_ctl`; the
** injector calls `heaptape_attach_entry(spec)`, which returns its address.
** From outside, the block is read and written with process_vm_readv and
** process_vm_writev (the same permission as ptrace); a detach writes 1 to
** `stop` and the recorder's writer thread, which polls it, removes the
** hooks, closes the tape and sets `state` to DONE. spec is lines of
** "key=value": tape (absolute path), sample, unwind, frames, attacher (the
** heaptape process's pid), late (ns between the process's start and now).
*/
#define HT_ATTACH_MAGIC "HTATTACH"
#define HT_ATTACH_VERSION 1

/* HtAttachCtl.state. */
enum {
  HT_AS_IDLE = 0,            /* loaded, never attached */
  HT_AS_RECORDING = 1,       /* hooks in place, tape open */
  HT_AS_DONE = 2,            /* detached: hooks removed, tape closed */
  HT_AS_FAILED = 3           /* the last attach failed (error, why) */
};

typedef struct HtAttachCtl {
  char magic[8];             /* HT_ATTACH_MAGIC, no NUL */
  uint32_t version;          /* HT_ATTACH_VERSION */
  uint32_t state;            /* HT_AS_* (atomic in the process) */
  uint32_t stop;             /* written 1 from outside: detach now */
  int32_t error;             /* HEAPTAPE_E_* of the last attach, 0 if none */
  uint32_t attacher;         /* pid of the `heaptape attach` recording it */
  uint32_t sessions;         /* attaches so far */
  uint32_t slots;            /* relocation slots hooked now (GOT/PLT entries) */
  uint32_t objects;          /* objects those slots are in */
  uint64_t start_ns;         /* CLOCK_REALTIME when recording started */
  char tape[4096];           /* the tape's path */
  char why[256];             /* what failed, when state is FAILED */
} HtAttachCtl;

#endif
