/* heaptape -- the reader's insides, shared by its two halves: reader.c (the
** header, the scan, the journal's merge, the queries) and sealread.c (a
** sealed tape's summary packets and its blocks of columns). Nothing outside
** src/format/reader.c and sealread.c includes it: readers use reader.h. */
#ifndef HT_READINT_H
#define HT_READINT_H

#include <pthread.h>
#include <zstd.h>

#include "reader.h"
#include "../base/map.h"

typedef struct Cursor Cursor;           /* a journal packet being decoded (reader.c) */
typedef struct ThreadState ThreadState; /* a journal stream's stack ids (reader.c) */

typedef struct PacketRef {
  uint64_t off;              /* file offset of the packet header */
  uint32_t blen;             /* stored body bytes */
  uint32_t rawlen;           /* body bytes after decompression */
  uint32_t flags;            /* HT_PF_* */
  uint32_t gen;              /* stack generation at packet start */
  uint32_t pid, tid;         /* stream */
  uint64_t seq0, seq1;       /* sequence range */
  uint64_t ts0;              /* timestamp at packet start */
  uint32_t nev;              /* events announced */
  int crc_due;               /* a sealed block whose checksum is verified when
                             ** it is decoded, not by the scan */
  int head_due;              /* a sealed block known from INDEX only: its
                             ** header is read when it is decoded (blen,
                             ** rawlen, flags, seq1 until then unknown) */
  int peeked;                /* a followed journal: its leading EXT VOIDs
                             ** were looked for (reader_peek) */
} PacketRef;

typedef struct StackNode {
  uint64_t frame;            /* frame value */
  uint32_t parent;           /* parent global id, 0 = root */
  uint32_t depth;            /* frames of the stack it ends (a parent's id
                                is always below its child's) */
} StackNode;

typedef struct Module {
  char *path;                /* file path, then the build id (one owned block) */
  const uint8_t *build_id;   /* build id bytes, in path's block: stable as mods grows */
  size_t build_id_len;       /* bytes of build_id */
  uint64_t base;             /* load base */
  uint64_t lo, hi;           /* address range covered by its segments */
} Module;

typedef struct SymEntry {
  uint32_t first;            /* index of the first frame in syms */
  uint32_t n;                /* inline frames */
} SymEntry;

#define HT_READER_VOIDS 8         /* EXT VOIDs a reader remembers */

struct HtReader {
  const uint8_t *data;       /* the tape bytes */
  size_t size;               /* bytes of data */
  int mapped;                /* data is an mmap to unmap */
  int nocrc;                 /* fuzzing: trust checksums */
  HtHeader hdr;              /* parsed header */
  char *hdr_exe, *hdr_argv, *hdr_fe; /* owned header strings */
  HtReadStats st;            /* damage and totals */
  PacketRef *pk;             /* EVENTS packets sorted by seq0 */
  size_t npk, cappk;         /* packets, allocated */
  size_t next_pk;            /* next packet to activate */
  Cursor **heap;             /* active cursors, min-heap by ev.seq */
  size_t nheap, capheap;     /* cursors, allocated */
  uint64_t ts_base;          /* time zero: header T0, else smallest ts0 */
  uint64_t ts_last;          /* last delivered timestamp (monotone) */
  ThreadState **th;          /* streams, each its own block: open cursors point
                             ** at them while new threads grow this array */
  size_t nth, capth;         /* streams, allocated */
  HtMap thmap;               /* pid << 32 | tid -> index + 1 in th */
  StackNode *nodes;          /* global stack nodes, index = id */
  uint32_t nnodes, capnodes; /* nodes (node 0 unused), allocated */
  uint32_t *nhash;           /* open-addressing table of node ids */
  size_t nhmask;             /* slots - 1 */
  uint32_t unknown;          /* node standing for a lost stack, 0 = none */
  Module *mods;              /* modules seen */
  size_t nmods, capmods;     /* modules, allocated */
  HtMap strmap;              /* dict id << 32 | str id -> index + 1 in strs */
  char **strs;               /* dictionary strings (owned, kept until close:
                             ** symbols point at them) */
  size_t nstrs, capstrs;     /* strings, allocated */
  HtMap symmap;              /* address -> index + 1 in symtab */
  SymEntry *symtab;          /* symbols */
  size_t nsymtab, capsymtab; /* symbols, allocated */
  HtSymbol *syms;            /* inline frames of all symbols */
  size_t nsyms, capsyms;     /* frames, allocated */
  HtMap locmap;              /* location id -> index + 1 in locs */
  HtLocation *locs;          /* runtime locations */
  size_t nlocs, caplocs;     /* locations, allocated */
  ZSTD_DCtx *zd;             /* decompression context */
  Cursor *pending;           /* cursor whose event was just delivered */
  uint64_t id_budget;        /* stack ids the streams may still grow by */
  uint64_t open_bytes;       /* memory held by open cursors */
  int pass;                  /* passes started (damage is counted in the first) */
  size_t hdr_len;            /* bytes of the header, checksum included */
  uint64_t *dict_off;        /* DICT packets: offset, total bytes (pairs) */
  size_t ndict, capdict;     /* pairs, allocated (in uint64_t) */
  uint64_t *acc_off;         /* ACCESS packets of the process: offsets */
  size_t nacc, capacc;       /* packets, allocated */
  uint64_t acc_events;       /* accesses they announce */
  int sealed;                /* version 2: SEVENTS blocks in r->pk */
  int have_meta;             /* a sealed tape's META was read */
  int have_ops;              /* and its count of ops (allocations, resolved frees) */
  uint64_t meta_ops;         /* that count */
  HtReadStats meta;          /* the journal's reading, from META */
  uint8_t *agg;              /* a sealed tape's AGG body (owned), or NULL */
  size_t agglen;             /* its bytes */
  size_t aggcap;             /* bytes allocated at agg */
  uint8_t *scratch;          /* the scan's decompressed bodies (scan_body) */
  size_t scratchcap;         /* bytes allocated at scratch */
  int agg_bad;               /* a piece of it is missing or out of order */
  uint64_t *snap_off;        /* version 10: SNAPS packets (offsets), loaded
                             ** onto agg by ht_reader_agg_snaps */
  size_t nsnap, capsnap;     /* packets, allocated */
  int snaps_state;           /* 0 not loaded, 1 loaded, -1 damaged */
  uint64_t *stk_off;         /* a sealed tape's STACKS packets (offsets) while
                             ** its stack table waits for a first question
                             ** (ht_reader_stacks_load) */
  size_t nstk, capstk;       /* packets waiting, allocated */
  uint64_t stk_nodes;        /* the nodes their headers announce */
  uint64_t stk_bad, stk_bad_bytes, stk_bad_off; /* damaged STACKS packets:
                             ** count, bytes, the first's offset */
  uint64_t blocks_end;       /* version 12: HT_H_BLOCKS, the event blocks' end */
  int blocks_skipped;        /* the scan went past them: INDEX lists them */
  const uint8_t *index;      /* that INDEX's body (decompressed: owned when
                             ** index_own), or NULL */
  size_t index_len;
  uint8_t *index_own;
  int dict_wait;             /* a sealed tape's DICT packets (dict_off) wait
                             ** for a first question about a name */
  uint64_t dict_bad, dict_bad_off; /* damaged DICT packets, the first's offset */
  int names_thread;          /* threads loading the names (ht_reader_names_start):
                                1 names_thr the dictionaries, 2 stacks_thr
                                the stack table */
  pthread_t names_thr, stacks_thr;
  struct SealRead *sr;       /* a sealed tape's event reading (sealread.c), or NULL */
  int follow;                /* a growing tape: ht_reader_open_follow */
  int fd;                    /* followed tape's descriptor (fstat on poll) */
  size_t maplen;             /* bytes mapped (a followed tape: room to grow) */
  size_t rwlen;              /* a followed tape: of them, those made usable */
  uint64_t scan_off;         /* where the next scan starts (a partial packet) */
  uint64_t hold_ts;          /* events after this time wait for a gap to fill */
  uint64_t act_max;          /* a followed tape: largest seq0 opened so far */
  uint64_t reordered;        /* packets opened after one with a larger seq0 */
  uint64_t seq_last;         /* sequence number last delivered */
  uint64_t void_lo[HT_READER_VOIDS], void_end[HT_READER_VOIDS]; /* the
                                latest numbers said never to be used (EXT
                                VOID), [lo, end): a hold need not wait */
  unsigned nvoid;            /* VOIDs seen (the next slot: nvoid % VOIDS) */
  uint64_t names_gen;        /* bumped when a dictionary or module is loaded */
  int have_ts;               /* ts_base is set (from a packet) */
};


/* -- reader.c, for sealread.c ---------------------------------------------- */

/* Note the first damage at off: its description. */
void ht_reader_damage(HtReader *r, uint64_t off, const char *fmt, ...)
  __attribute__((format(printf, 3, 4))) HT_HIDDEN;
/* Body of a packet, decompressed by zd into *own when needed; NULL if
** damaged. */
/* Whether the packet at h (body blen bytes) matches its checksum. */
int ht_reader_crc_ok(const uint8_t *h, uint32_t blen) HT_HIDDEN;
const uint8_t *ht_reader_body(ZSTD_DCtx *zd, const uint8_t *b, uint32_t blen,
                              uint32_t rawlen, uint32_t flags, uint8_t **own) HT_HIDDEN;
/* Add stack node (parent, frame) as the next id, not interned (a sealed
** tape's STACKS name each node once, in id order): its id, 0 when out of
** memory. */
uint32_t ht_reader_node_append(HtReader *r, uint32_t parent, uint64_t frame) HT_HIDDEN;
/* Room for need stack nodes in r->nodes (r->nnodes stays): 0, or -1 when
** out of memory or past 2^32 - 2. */
int ht_reader_nodes_room(HtReader *r, size_t need) HT_HIDDEN;
/* Record a MODULE event's module so addresses can be attributed to it. */
void ht_reader_learn_module(HtReader *r, const HtEvent *ev) HT_HIDDEN;

/* -- sealstacks.c, for sealread.c ------------------------------------------ */

/* Load the nodes of a STACKS body (in id order) into r->nodes: 0, or -1
** when malformed (the nodes before the damage stay). */
int ht_sealstacks_load(HtReader *r, const uint8_t *p, const uint8_t *end) HT_HIDDEN;
/* Decode the n STACKS packets at r->stk_off into r's table, their damage
** into r->stk_bad...; the table's room is made. Runs on stacks_thr, or on
** the caller. */
void ht_sealstacks_decode(HtReader *r, size_t n) HT_HIDDEN;
/* Each frame of a STACKS body to fn, *next its first id (then the next
** body's): 0, or -1 when malformed. */
int ht_sealstacks_walk(const uint8_t *p, const uint8_t *end, uint32_t *next,
                       void (*fn)(void *ctx, uint64_t frame), void *ctx) HT_HIDDEN;
/* Decode the STACKS packets the scan left for later, or wait for them
** (reader.c). */
void ht_reader_stacks_load(HtReader *r) HT_HIDDEN;

/* -- sealread.c, for reader.c ---------------------------------------------- */

/* Load a sealed tape's META, STACKS or MODULES body met by the scan: 0, or
** -1 when malformed. */
int ht_sealread_packet(HtReader *r, unsigned kind, const uint8_t *p, const uint8_t *end)
  HT_HIDDEN;
/* After the scan of a sealed tape: take the journal's damage and totals. */
void ht_sealread_scanned(HtReader *r) HT_HIDDEN;
/* Next event of a sealed tape (ht_reader_next): 1, 0 at the end, <0 error. */
int ht_sealread_next(HtReader *r, HtEvent *ev) HT_HIDDEN;
/* End the pass: the decoding thread and the block being decoded (rewind);
** with all, everything the reading holds (close). */
void ht_sealread_stop(HtReader *r, int all) HT_HIDDEN;

#endif
