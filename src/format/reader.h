/* heaptape -- the tape reader: validated packets merged into one event stream
** in global sequence order, plus stacks, symbols and runtime locations. */
#ifndef HT_READER_H
#define HT_READER_H

#include "format.h"
#include "stream.h"

/* Event types delivered by ht_reader_next. */
enum {
  HT_EV_ALLOC = 1,   /* addr, size, kind, stack, align, weight */
  HT_EV_FREE = 2,    /* addr, kind (size for sized frees) */
  HT_EV_THREAD = 3,  /* str = thread name */
  HT_EV_MARK = 4,    /* str = label */
  HT_EV_MODULE = 5,  /* str = path, addr = base, module.* */
  HT_EV_UNLOAD = 6,  /* str = path, addr = base */
  HT_EV_RSS = 7,     /* size = resident bytes */
  HT_EV_LOST = 8,    /* size = events the writer dropped */
};

typedef struct HtEvent {
  uint8_t type;              /* HT_EV_* */
  uint8_t kind;              /* HT_K_* of ALLOC and FREE */
  uint32_t pid;              /* process */
  uint32_t tid;              /* thread */
  uint64_t seq;              /* global sequence number */
  uint64_t ts;               /* ns since the tape's start (monotone) */
  uint64_t addr;             /* block address, module base */
  uint64_t size;             /* requested bytes, RSS, lost count */
  uint64_t align;            /* alignment of aligned kinds, else 0 */
  uint64_t weight;           /* bytes this sample stands for (size if unsampled) */
  uint32_t stack;            /* global stack id (0 = no frames) */
  const char *str;           /* THREAD, MARK, MODULE: bytes (not NUL-ended) */
  size_t len;                /* bytes of str */
  const uint8_t *build_id;   /* MODULE: build id bytes */
  size_t build_id_len;       /* bytes of build_id */
  const HtSegment *segs;     /* MODULE: segments */
  size_t nseg;               /* segments */
  uint64_t back;             /* sealed tapes only (else 0): FREE: allocation
                                index + 1 of the block it releases (0 = not
                                allocated on the tape); ALLOC: index + 1 of a
                                live block its address drops (0 = none) */
  /* With back, on sealed tapes from version 5 (has_blk): that block as its
  ** allocation made it. */
  int has_blk;
  uint64_t bsize, bweight;   /* its size and weight */
  uint32_t bstack, btid;     /* its stack and allocating thread */
  /* FREE with back, on sealed tapes from version 8 (has_birth): that
  ** block's birth and place. */
  int has_birth;
  uint64_t bts;              /* time of its allocation */
  uint64_t bop;              /* op number of its allocation (allocations and
                                resolved frees before it) */
  uint64_t baddr;            /* its address */
} HtEvent;

/* Identity of the block an ALLOC or FREE is about: its address, with the top
** bit set for a language runtime's heap (HT_K_DOMAIN_RT). The two heaps are
** separate address spaces: under `record --lua=native` a Lua object and the
** malloc block holding it share an address. */
HT_INLINE uint64_t ht_event_block(const HtEvent *ev)
{
  return ev->addr ^ ((ev->kind & HT_K_DOMAIN_RT) ? 1ull << 63 : 0);
}

/* What the tape's header says. Strings live as long as the reader. */
typedef struct HtHeader {
  uint32_t version;          /* format version */
  uint32_t flags;            /* HT_F_* */
  uint32_t pid;              /* recorded process */
  const char *exe;           /* executable path ("" if unknown) */
  const char *argv;          /* arguments, separated by NUL */
  size_t argv_len;           /* bytes of argv */
  uint32_t clock;            /* HT_CLOCK_* */
  uint64_t clock_res;        /* ns */
  uint64_t sample;           /* mean sampling interval in bytes, 0 = all */
  uint64_t start_ns;         /* ns since the epoch */
  uint32_t unwind;           /* HT_UNWIND_* */
  uint32_t frames;           /* max frames */
  const char *frontend;      /* "native", "lua5.4", ... */
  uint64_t clock_start;      /* packet clock at the start (ns), 0 if unknown */
  uint64_t late_ns;          /* recording began this long after the process
                                started (attached), 0 = from its start */
  uint64_t access_sample;    /* accesses recorded 1 in this many (1 = all),
                                0 = none (no HT_H_ACCESS) */
} HtHeader;

/* Damage and totals, known after the scan (ht_reader_open) and final once
** ht_reader_next has returned 0. */
typedef struct HtReadStats {
  uint64_t file_bytes;       /* size of the tape */
  uint64_t packets;          /* whole, valid packets */
  uint64_t event_packets;    /* of which EVENTS */
  uint64_t damaged;          /* packets skipped: bad checksum, bad body */
  uint64_t damaged_bytes;    /* bytes skipped as damaged */
  uint64_t truncated_bytes;  /* bytes after the last whole packet */
  uint64_t foreign;          /* packets of another process, ignored */
  uint64_t events;           /* events the packets announce */
  uint64_t lost;             /* events the writer reported dropped */
  int has_trailer;           /* the tape was closed properly */
  uint64_t trailer_events;   /* events the trailer counts */
  uint64_t trailer_status;   /* exit status in the trailer, UINT64_MAX if none */
  uint64_t end_ns;           /* end of recording (trailer, else last event) */
  uint64_t first_error_off;  /* byte offset of the first damage, or UINT64_MAX */
  char first_error[160];     /* what was wrong there */
  uint64_t delivered;        /* events ht_reader_next gave, every pass summed */
} HtReadStats;

typedef struct HtReader HtReader;

/* Open a tape file (mmap) and scan it: header, packet index, dictionary.
** On failure returns a HEAPTAPE_E_* code and writes one line into err
** (naming the problem and, for damage, the byte offset). */
int ht_reader_open(HtReader **r, const char *path, char *err, size_t errlen) HT_HIDDEN;
/* The same over bytes in memory; the buffer must outlive the reader. */
int ht_reader_open_mem(HtReader **r, const void *data, size_t len, char *err,
                       size_t errlen) HT_HIDDEN;
/* Fuzzing: like ht_reader_open_mem, but packet and header checksums are
** trusted, so mutated inputs reach the decoder. */
int ht_reader_open_mem_nocrc(HtReader **r, const void *data, size_t len,
                             char *err, size_t errlen) HT_HIDDEN;
void ht_reader_close(HtReader *r) HT_HIDDEN;
/* The pid and start time in the header of the tape at path, read with
** pread, not mapped: a file another process may cut short (a new run
** truncating the tape an older one left there) would raise SIGBUS in a
** mapping. 0, or -1 when there is no whole, valid header yet. */
int ht_tape_header_of(const char *path, uint32_t *pid, uint64_t *start_ns) HT_HIDDEN;

/* -- Following a tape while it is written ---------------------------------
** The file is read (with pread: a mapping of a file cut short raises SIGBUS)
** into address space reserved once for HT_READER_FOLLOW_MAX bytes (less
** under ulimit -v: the tape is followed up to there), so pointers into it
** stay valid as it grows. A partial packet at the end is
** left for a later poll, not counted as damage (st.truncated_bytes says how
** many bytes wait). Events are read with ht_reader_next as usual; 0 then
** means "nothing more for now". Not for ht_reader_rewind. */
#define HT_READER_FOLLOW_MAX (64ull << 30)
int ht_reader_open_follow(HtReader **r, const char *path, char *err,
                          size_t errlen) HT_HIDDEN;
/* Index the whole packets appended since the last poll (dictionaries and a
** trailer are loaded, st.end_ns moves on). 1 if the tape grew, 0 if not,
** or a HEAPTAPE_E_* code. Costs the new bytes, never the whole tape. */
int ht_reader_poll(HtReader *r) HT_HIDDEN;
/* Times a followed tape was read otherwise than a reader of the whole tape
** reads it: a packet opened after one with a larger first sequence number
** (it reached the file late: stack ids may differ), or time zero lowered
** after events were delivered (their times differ). */
uint64_t ht_reader_reordered(const HtReader *r) HT_HIDDEN;
/* ht_reader_next delivers no event after tape time ts (ns since the start)
** that is not the very next sequence number until ts is raised: the
** missing number may be in a packet another thread has not written yet.
** UINT64_MAX (the default) holds nothing. */
void ht_reader_hold(HtReader *r, uint64_t ts) HT_HIDDEN;

/* Next event in global order: 1 delivered, 0 at the end. Damage inside a
** packet drops the rest of that packet (counted in stats), never fails. */
int ht_reader_next(HtReader *r, HtEvent *ev) HT_HIDDEN;
/* A sealed tape: up to max next events into buf, as ht_reader_next would
** deliver them one by one (a MODULE event comes alone): their count, 0 at
** the end, <0 error or a journal. Their pointers stay valid until the next
** call. */
int ht_reader_events(HtReader *r, HtEvent *buf, int max) HT_HIDDEN;
/* Rewind to the first event (stacks keep their ids). */
int ht_reader_rewind(HtReader *r) HT_HIDDEN;
/* A sealed tape: rewind, then skip the blocks wholly before time ts (the
** events of the block holding ts, earlier ones included, come next).
** -1 for a journal. */
int ht_reader_seek_ts(HtReader *r, uint64_t ts) HT_HIDDEN;

const HtHeader *ht_reader_header(const HtReader *r) HT_HIDDEN;
/* Whether the tape is sealed (version 2 or 3): frees come with ev->back. */
int ht_reader_sealed(const HtReader *r) HT_HIDDEN;
/* A sealed tape's aggregate figures (the AGG body, src/analyze/agg.c), or
** NULL when it has none or the sealed file itself is damaged. */
const uint8_t *ht_reader_agg(const HtReader *r, size_t *len) HT_HIDDEN;
/* The AGG body with its snapshot fields (HT_A_SNAPS, HT_A_SNAPN, HT_A_RSS),
** which version 10 keeps in SNAPS packets that only html and `report --at`
** read: loaded onto the AGG body the first time; NULL when absent or a
** piece is damaged (the caller makes its pass). */
const uint8_t *ht_reader_agg_snaps(HtReader *r, size_t *len) HT_HIDDEN;
/* Free the AGG body (ht_reader_agg is NULL from then on): a command that
** has loaded its figures (cc1plus: 8 MB, mostly the html page's snapshots). */
void ht_reader_agg_release(HtReader *r) HT_HIDDEN;
/* The tape's bytes: its header (*hdrlen bytes, checksum included) first. */
const uint8_t *ht_reader_bytes(const HtReader *r, size_t *hdrlen) HT_HIDDEN;
/* Whole DICT packet i (header and body, as on the tape), NULL past the end. */
const uint8_t *ht_reader_dict_packet(const HtReader *r, size_t i, size_t *len) HT_HIDDEN;
const HtReadStats *ht_reader_stats(const HtReader *r) HT_HIDDEN;
/* A sealed tape's count of ops (allocations and resolved frees) as its sealer
** counted them: 1 and *ops, or 0 when not known (a journal, a damaged tape). */
int ht_reader_sealed_ops(const HtReader *r, uint64_t *ops) HT_HIDDEN;

/* -- ACCESS packets (decoded by src/analyze/access.c) --------------------- */

/* A packet header's fields; ts0 is in ns since the tape's start. */
typedef struct HtPacketInfo {
  uint64_t off;              /* offset of the packet in the tape */
  uint32_t rawlen;           /* bytes of its body */
  uint32_t tid;              /* thread */
  uint64_t seq0, seq1;       /* sequence range */
  uint64_t ts0;              /* time of its first record */
  uint32_t nev;              /* records it announces */
} HtPacketInfo;

/* ACCESS packets of the tape's process, in file order (*accesses: the
** accesses they announce, if not NULL). */
size_t ht_reader_access_count(const HtReader *r, uint64_t *accesses) HT_HIDDEN;
/* Time zero of a journal's times (ns on its clock): what the reader
** subtracts from each packet's; 0 for a sealed tape (its times are from it). */
uint64_t ht_reader_time_zero(const HtReader *r) HT_HIDDEN;
/* Whole ACCESS packet i (header and stored body), NULL past the end. */
const uint8_t *ht_reader_access_whole(const HtReader *r, size_t i, size_t *len) HT_HIDDEN;
/* Body of ACCESS packet i, decompressed into *own (free it) when needed,
** its header in *pk; NULL past the end or when the body is damaged. */
const uint8_t *ht_reader_access_packet(HtReader *r, size_t i, HtPacketInfo *pk,
                                       uint8_t **own) HT_HIDDEN;

/* -- Stacks: global ids, the same for equal stacks of any thread --------- */

/* Frame value of a stack node (ip << 1, or loc id << 1 | 1). */
uint64_t ht_reader_stack_frame(const HtReader *r, uint32_t stack) HT_HIDDEN;
/* Parent node (0 at the outermost frame). */
uint32_t ht_reader_stack_parent(const HtReader *r, uint32_t stack) HT_HIDDEN;
/* Frames of a stack, innermost first, into out[max]; returns the depth. */
size_t ht_reader_stack_frames(const HtReader *r, uint32_t stack, uint64_t *out,
                              size_t max) HT_HIDDEN;
/* Frames of a stack (the nodes from it to the outermost), without a walk. */
uint32_t ht_reader_stack_depth(const HtReader *r, uint32_t stack) HT_HIDDEN;
/* Number of stack nodes known so far (ids are 1..count). */
uint32_t ht_reader_stack_count(const HtReader *r) HT_HIDDEN;
/* Begin loading a sealed tape's dictionaries and stack table on a thread
** of their own, for a caller with other work before its first question
** about a name or a stack (which waits for them). */
void ht_reader_names_start(HtReader *r) HT_HIDDEN;

#define HT_FRAME_IS_LOC(v) ((v) & 1)
#define HT_FRAME_IP(v)     ((v) >> 1)
#define HT_FRAME_LOC(v)    ((v) >> 1)

/* -- Symbols -------------------------------------------------------------- */

typedef struct HtSymbol {
  const char *func;          /* function (demangled), or NULL */
  const char *file;          /* source file, or NULL */
  uint32_t line;             /* line, 0 if unknown */
} HtSymbol;

typedef struct HtLocation {
  unsigned kind;             /* HT_L_* */
  const char *name;          /* symbol or trace name, or NULL */
  const char *file;          /* chunk or file, or NULL */
  uint64_t line;             /* current line */
  uint64_t aux;              /* see HT_L_* */
} HtLocation;

/* Inline chain of a native address, innermost first; returns its length
** (0 if the tape has no symbol for it) and points *out at the frames. */
size_t ht_reader_symbol(const HtReader *r, uint64_t ip, const HtSymbol **out) HT_HIDDEN;
/* The native addresses on the tape's stacks, each once (*addrs), and how
** many of them have no symbol (*missing); 0, or -1 out of memory. */
int ht_reader_symbol_cover(HtReader *r, uint64_t *addrs, uint64_t *missing) HT_HIDDEN;
/* Runtime location by id, or NULL if undeclared. */
const HtLocation *ht_reader_location(const HtReader *r, uint64_t id) HT_HIDDEN;
/* 1 if the dictionary declares Python or Ruby locations (lkind
** HT_L_RTLOC_MIN or later): a tape of version HT_VERSION_RTLOC at least. */
int ht_reader_rtlocs(const HtReader *r) HT_HIDDEN;
/* A number that changes whenever the tape names more: a dictionary
** loaded, a module learned. A cache of frame names or of plumbing is valid
** while it stays the same. */
uint64_t ht_reader_names_gen(const HtReader *r) HT_HIDDEN;
/* Module containing ip (from MODULE events seen so far or in the scan):
** path and base, or NULL. */
const char *ht_reader_module(const HtReader *r, uint64_t ip, uint64_t *base) HT_HIDDEN;
/* Modules seen so far, and module i (NULL past the end): its path, the
** address range its segments cover, its build id (valid with the reader). */
size_t ht_reader_module_count(const HtReader *r) HT_HIDDEN;
const char *ht_reader_module_info(const HtReader *r, size_t i, uint64_t *lo,
                                  uint64_t *hi, const uint8_t **build_id,
                                  size_t *build_id_len) HT_HIDDEN;

#endif
