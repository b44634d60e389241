/* heaptape -- the tape format: grammar, tags and flags (versions 1 to 7).
** docs/FORMAT.md is the normative text; this comment is its summary. */
#ifndef HT_FORMAT_H
#define HT_FORMAT_H

#include "../base/ht_def.h"

/*
** tape        := header packet*
** header      := "HEAPTAPE" version:u16 flags:u16 len:u32 field* crc:u32
** field       := tag:uleb len:uleb payload         -- unknown tags are skipped
** packet      := phead body                         -- body is zstd when PF_ZSTD
** phead       := "HTPK" kind:u8 pflags:u8 gen:u16 blen:u32 rawlen:u32
**                pid:u32 tid:u32 seq0:u64 seq1:u64 ts0:u64 nev:u32 crc:u32
** body(EVENTS):= rec*                               -- one thread's stream
** body(DICT)  := drec*                              -- symbols, strings, locations
** body(TRAILER):= field*                            -- totals
** rec         := alloc | free | stack | time | thread | mark | module | rss
**              | reset | lost | ext
** alloc       := head(ALLOC)  gap? kind? size addr sref align? weight?
**              | head(ALLOC_BACK) gap? kind? size back sref align? weight?
** free        := head(FREE)   gap? kind? addr size?
**              | head(FREE_BACK) gap? kind? back size?
** stack       := head(STACK)  first:uleb parent:uleb n:uleb frame{n}
** time        := head(TIME)   dt:uleb
** thread      := head(THREAD) gap? name:str
** mark        := head(MARK)   gap? label:str
** module      := head(MODULE) gap? path:str base:uleb bid:str nseg:uleb seg{nseg}
** seg         := vaddr:uleb memsz:uleb prot:uleb
** rss         := head(RSS)    gap? bytes:uleb
** reset       := head(RESET)
** lost        := head(LOST)   gap? events:uleb
** ext         := head(EXT)    tag:uleb len:uleb payload  -- skippable
** drec        := str | sym | loc | dext
** str         := D_STR id:uleb s:str
** sym         := D_SYM addr:uleb n:uleb (func:uleb file:uleb line:uleb){n}
** loc         := D_LOC id:uleb lkind:u8 name:uleb file:uleb line:uleb aux:uleb
** dext        := D_EXT tag:uleb len:uleb payload
** str         := len:uleb bytes
**
** head: [X FF TTTTT]
**   TTTTT : record type (HT_R_*)
**   FF    : per-type flags (HT_RF_*)
**   X     : seq-bearing records only: an explicit gap follows; the record's
**           sequence number is prev + 1 + gap. Without X it is prev + 1.
** addr  : zigzag(addr - prev_addr), prev_addr reset to 0 at packet start
** back  : uleb k < HT_BACKREF_MAX: ALLOC_BACK's address is that of the
**         FREE (either form) k + 1 frees before it in this packet,
**         FREE_BACK's that of the ALLOC k + 1 allocations before it.
**         Back-references do not move prev_addr.
** sref  : zigzag(stack - prev_stack), prev_stack reset to 0 at packet start
** frame : zigzag(value - prev_value), prev_value starts at 0 in each STACK
**         record. value = ip << 1 (native) or id << 1 | 1 (runtime
**         location declared by D_LOC).
** stack ids are per (pid, tid) stream: 0 is the empty stack, a STACK record
** defines ids first..first+n-1, the first a child of parent, each next one a
** child of the one before it. Writers hand out ids in order from 1.
** gen   : EVENTS packets: RESET records the stream wrote before this packet
**         (mod 2^16). A reader that finds it changed without seeing the
**         RESET (a packet was lost) forgets the stream's stack ids.
** Strings in DICT packets are referred to by id + 1; 0 means "none".
**
** Version 6: a journal (as 1, ACCESS packets allowed) or a sealed tape (as
** 5) that may declare D_LOC lkinds 5 (Python) and 6 (Ruby); HT_F_SEALED
** says which.
**
** Version 2, the sealed tape (written by the sealer from a version 1
** journal; HT_F_SEALED set; the header's fields are the journal's):
** sealed      := header DICT* SEVENTS* META STACKS+ INDEX MODULES? AGG?
** MODULES     := n:uleb (base:uleb len:uleb path len:uleb bid nseg:uleb
**                (vaddr:uleb memsz:uleb prot:uleb){nseg}){n} -- version 3:
**                the MODULE events in order, known to a reader at once
** AGG         := field*                  -- version 3: the analyses' figures
**                (src/analyze/agg.c; docs/FORMAT.md "AGG")
** META        := field*                  -- the journal's damage and totals
** STACKS      := first:uleb n:uleb (up:uleb dframe:uleb){n} -- nodes first..
**                first+n-1 in order: node i's parent is i - up, its frame
**                prev + unzigzag(dframe) (prev = 0 in each packet)
** SEVENTS     := phead(seq0 seq1 ts0 nev) a0:uleb s0:uleb f0:uleb col{HT_SC_COUNT}
**                (f0 from version 8: resolved frees before the block, so
**                its events' op numbers are a0 + f0 + ops before them)
** col         := len:uleb bytes            -- one column of the block's events
**                (version 7: len:uleb zlen:uleb bytes, the column zstd-
**                compressed in zlen bytes, or stored in len when zlen is 0;
**                the packet itself not compressed; lens sum to at most
**                HT_PACKET_MAX)
** INDEX       := (seq0:uleb ts0:uleb off:uleb nev:uleb a0:uleb)*
** Events of a block are in global order; a0 is the allocation index of its
** first ALLOC (allocations are numbered from 0 over the tape), s0 the
** sequence number of its first event. Columns
** (HT_SC_*), each value present only for the events named:
**   TYPE  u8 every event: HT_EV_* | HT_SC_DUP (an ALLOC over a live block)
**         | HT_SC_REUSE (an ALLOC at a recently freed address)
**         | HT_SC_REL (a FREE named after the previous one, 0x40 too)
**   KIND  u8 ALLOC, FREE   SEQ zigzag every event: seq - prev - 1 (prev = s0 - 1)
**   TIME  uleb every event: ts - prev (prev = ts0)
**   TID   zigzag every event: tid - prev (prev = 0)
**   SIZE  uleb ALLOC, sized FREE, RSS, LOST
**   WEIGHT zigzag ALLOC: weight - size    ALIGN uleb ALLOC of aligned kinds
**   STACK zigzag ALLOC: global stack id - prev (prev = 0)
**   ADDR  ALLOC with HT_SC_CLASS (version 7): k, its address is the k-th
**         latest freed address of its size class the block knows (k <
**         HT_SEAL_CRING; version 9: all it knows, sealclass.h; 7 and 8:
**         the class's latest 64 pushed); with HT_SC_REUSE: k, its address is the k-th latest freed
**         address the block knows (k < HT_SEAL_REUSE); other ALLOCs,
**         unresolved FREEs, MODULE, UNLOAD: zigzag(addr - prev), prev the
**         last address of this column, + ht_seal_chunk(size) if an ALLOC's
**         (from version 5 an ALLOC with HT_SC_REUSE leaves prev as it
**         was: fresh blocks follow fresh blocks). Freed addresses a block knows: unresolved
**         FREEs' and those of blocks allocated in the same block, in order.
**   BACK  uleb FREE: 0 unresolved, else allocations before it - index of
**         the block it releases; FREE with HT_SC_REL: zigzag(index - last
**         - 1), last the index the block's previous resolved FREE released
**         (0 at the block's start); ALLOC with HT_SC_DUP: allocations
**         before it - index of the live block its address drops
**   BLOB  THREAD, MARK: len bytes; MODULE, UNLOAD: len path len bid nseg seg*
** From version 5, for a FREE with BACK and an ALLOC with HT_SC_DUP naming a
** block allocated in an earlier block (the reader has this block's ALLOCs),
** the block named as its allocation made it, so a reader needs no table:
**   BSTACK zigzag: its stack - prev (prev: the last BSTACK value, 0 at start)
**   BSIZE uleb: its size   BWEIGHT zigzag: weight - size
**   BTID  zigzag: its allocating thread - the event's thread
** From version 8, for a FREE with BACK naming a block allocated in an
** earlier block, its birth and place too, so lifetimes and heap maps need
** no table (the reader gives those of blocks of its own block); the
** address then counts among the freed addresses the block knows:
**   BTIME zigzag: its allocation's time - prev (prev: the last BTIME, 0)
**   BOP   zigzag: (its allocation's op number - its allocation index) - prev
**         (the resolved frees before it; prev: the last BOP, 0)
**   BADDR zigzag: its address - prev (prev: the last BADDR, 0)
*/

#define HT_MAGIC        "HEAPTAPE"
#define HT_MAGIC_LEN    8
#define HT_VERSION      1    /* journals: what the recorder writes */
#define HT_VERSION_SEALED 12 /* sealed tapes: what the sealer writes (the newest) */
#define HT_VERSION_SEALED_NAMES 12 /* from it: the sites' names (HT_A_NAMES) */
#define HT_VERSION_SEALED_LAYOUT 11 /* from it: the heap map's layout (HT_A_LAYOUT) */
#define HT_VERSION_SEALED_SNAPS 10 /* from it: the AGG's snapshot fields in SNAPS
                                   ** packets, read only by html and --at */
#define HT_VERSION_SEALED_CLASSES 9 /* from it: all of a block's freed addresses
                                    ** of a class count (sealclass.h) */
#define HT_VERSION_SEALED_BIRTH 8 /* from it: frees carry births (BTIME, BOP, BADDR) */
#define HT_VERSION_SEALED_COLZ 7 /* from it: each column compressed on its own */
#define HT_VERSION_SEALED_BLK 5 /* from it: frees carry their block (BSTACK...) */
#define HT_VERSION_SEALED_MIN 2 /* the oldest sealed tapes (no AGG) */
#define HT_VERSION_ACCESS 4  /* a journal or sealed tape (HT_F_SEALED says which)
                             ** that carries ACCESS packets */
#define HT_VERSION_RTLOC 6   /* from it, a journal or sealed tape (HT_F_SEALED
                             ** says which) may declare Python and Ruby
                             ** locations (D_LOC lkind 5, 6) */
#define HT_VERSION_MAX 12    /* the newest version a reader knows */
#define HT_HEADER_FIXED 16   /* magic + version + flags + len */

#define HT_PMAGIC       "HTPK"
#define HT_PHEAD_SIZE   56
#define HT_PACKET_MAX   (1u << 20)   /* largest raw body a reader accepts */
#define HT_PACKET_DEFAULT (64u << 10) /* raw body size writers aim for */

/* Header fields. */
enum {
  HT_H_PID = 1,       /* uleb: process id */
  HT_H_EXE = 2,       /* bytes: executable path */
  HT_H_ARGV = 3,      /* bytes: command line, arguments separated by NUL */
  HT_H_CLOCK = 4,     /* uleb clock id (HT_CLOCK_*), uleb resolution in ns */
  HT_H_SAMPLE = 5,    /* uleb: mean sampling interval in bytes, 0 = every event */
  HT_H_START = 6,     /* uleb: start, ns since the Unix epoch */
  HT_H_UNWIND = 7,    /* uleb: HT_UNWIND_* */
  HT_H_FRAMES = 8,    /* uleb: maximum frames per stack */
  HT_H_FRONTEND = 9,  /* bytes: "native", "lua5.4", "luajit", ... */
  HT_H_TICK = 10,     /* reserved (never written by version 1 writers) */
  HT_H_T0 = 11,       /* uleb: packet clock (ns) at the start: time zero */
  HT_H_LATE = 12,     /* uleb: recording began this many ns after the process
                      ** started (`heaptape attach`); absent: from the start */
  HT_H_BLOCKS = 14,   /* version 12, sealed: u64 (8 bytes): the event blocks
                         (SEVENTS, listed by INDEX) fill the file from the
                         header's end to this offset; 0 when they do not */
  HT_H_ACCESS = 13,   /* uleb: accesses recorded (ACCESS packets), 1 in this
                      ** many (1 = all); absent: none recorded */
};
#define HT_F_SYMBOLIZED 0x0001 /* header flag: writer promised a DICT at the end */
#define HT_F_SEALED     0x0002 /* header flag: a sealed tape (from version 2) */
#define HT_F_KNOWN      0x0003 /* header flags this version understands */

enum { HT_CLOCK_MONOTONIC = 1, HT_CLOCK_MOCK = 2 };
enum { HT_UNWIND_NONE = 0, HT_UNWIND_LIBUNWIND = 1, HT_UNWIND_FP = 2,
       HT_UNWIND_RUNTIME = 3 };

/* Packet kinds. Unknown kinds are skipped whole. */
enum { HT_P_EVENTS = 1, HT_P_DICT = 2, HT_P_TRAILER = 3,
       HT_P_META = 4, HT_P_STACKS = 5, HT_P_SEVENTS = 6, HT_P_INDEX = 7,
       HT_P_AGG = 8, HT_P_MODULES = 9, HT_P_ACCESS = 10, HT_P_SNAPS = 11 };
#define HT_PF_ZSTD  0x01  /* body is one zstd frame of rawlen bytes */
#define HT_PF_KNOWN 0x01

/* Record types in EVENTS packets. */
enum {
  HT_R_ALLOC = 1, HT_R_FREE = 2, HT_R_STACK = 3, HT_R_TIME = 4,
  HT_R_THREAD = 5, HT_R_MARK = 6, HT_R_MODULE = 7, HT_R_RSS = 8,
  HT_R_RESET = 9, HT_R_LOST = 10, HT_R_ALLOC_BACK = 11, HT_R_FREE_BACK = 12,
  HT_R_EXT = 31
};
/* EXT tags in EVENTS bodies. */
enum {
  HT_X_VOID = 1    /* first:uleb n:uleb -- numbers first..first+n-1 are never
                      used: a follower need not wait for them */
};
#define HT_HEAD_X        0x80
#define HT_HEAD_F1       0x20
#define HT_HEAD_F2       0x40
#define HT_HEAD_TYPE(h)  ((h) & 0x1f)
#define HT_RF_KIND   HT_HEAD_F1   /* ALLOC, FREE: a kind byte follows */
#define HT_RF_WEIGHT HT_HEAD_F2   /* ALLOC: explicit weight (bytes) follows */
#define HT_RF_UNLOAD HT_HEAD_F1   /* MODULE: the module was unloaded */
#define HT_BACKREF_MAX 4096  /* back-reference distances are below this */
#define HT_R_SEQ_MASK ((1u << HT_R_ALLOC) | (1u << HT_R_FREE) | \
  (1u << HT_R_ALLOC_BACK) | (1u << HT_R_FREE_BACK) | \
  (1u << HT_R_THREAD) | (1u << HT_R_MARK) | (1u << HT_R_MODULE) | \
  (1u << HT_R_RSS) | (1u << HT_R_LOST))

/* ACCESS packets (version 4): one stream of runs in global order, tid 0 in
** the packet header, seq0/seq1 the `before` of the first/last run, ts0 the
** time of the first, nev the accesses.
**   run := tid:zz blk:zz before:uleb dt:uleb acc+ 0
**     tid - prev (prev 0), block's ALLOC seq - prev (prev 0), before - prev
**     (prev seq0), ts - prev (prev ts0): deltas over the packet's runs
**   acc := op:u8 size:uleb? step:zz? rep:uleb?
**   op  := [R OO SSS KK]: KK kind (HT_AK_*, 0 ends the run); SSS size
**     2^SSS, 7: size follows; OO the step d (offset - previous offset; the
**     previous offset and size are 0 at the run's start): 0 d = previous
**     size, 1 d = 0, 2 d follows (zz); R: rep follows, the access repeats
**     rep + 1 more times, each d further on. */
enum { HT_AK_LOAD = 1, HT_AK_STORE = 2, HT_AK_MODIFY = 3 };
#define HT_AOP_KIND(op)   ((op) & 3)
#define HT_AOP_SIZE(op)   (((op) >> 2) & 7)
#define HT_AOP_STEP(op)   (((op) >> 5) & 3)
#define HT_AOP_REP        0x80
#define HT_AOP_SIZE_X     7        /* SSS: explicit size */
enum { HT_ASTEP_SEQ = 0, HT_ASTEP_SAME = 1, HT_ASTEP_X = 2 };

/* Allocation and free kinds: low 4 bits the call family, bit 4 the domain. */
enum {
  HT_K_MALLOC = 0, HT_K_CALLOC = 1, HT_K_REALLOC = 2, HT_K_ALIGNED = 3,
  HT_K_VALLOC = 4, HT_K_NEW = 5, HT_K_NEW_ARRAY = 6, HT_K_NEW_ALIGNED = 7,
  HT_K_NEW_ARRAY_ALIGNED = 8, HT_K_SIZED = 9, HT_K_ALIGNED_SIZED = 10,
  HT_K_RUNTIME = 11
};
#define HT_K_FAMILY(k)    ((k) & 0x0f)
#define HT_K_DOMAIN_RT    0x10  /* block belongs to a language runtime's heap */
#define HT_K_KNOWN        0x1f
/* Kinds whose ALLOC record carries an alignment; FREE records of sized kinds
** carry the size the caller passed. */
#define HT_K_HAS_ALIGN(k) (HT_K_FAMILY(k) == HT_K_ALIGNED || \
  HT_K_FAMILY(k) == HT_K_NEW_ALIGNED || HT_K_FAMILY(k) == HT_K_NEW_ARRAY_ALIGNED)
#define HT_K_HAS_SIZE(k)  (HT_K_FAMILY(k) == HT_K_SIZED || \
  HT_K_FAMILY(k) == HT_K_ALIGNED_SIZED)

/* Record types in DICT packets. */
enum { HT_D_STR = 1, HT_D_SYM = 2, HT_D_LOC = 3, HT_D_EXT = 31 };

/* Runtime location kinds (D_LOC lkind). */
enum {
  HT_L_INTERNAL = 0,  /* the runtime itself (GC, stack growth, compiler) */
  HT_L_LUA = 1,       /* a line in a chunk: file = chunk, line = current line,
                         aux = line where the function is defined */
  HT_L_CFUNC = 2,     /* a C function: name = symbol, aux = its address */
  HT_L_TRACE = 3,     /* a JIT trace: aux = trace number, file/line = start */
  HT_L_OTHER = 4,     /* anything else the runtime names */
  HT_L_PYTHON = 5,    /* a line in a Python function: name = qualname, file =
                         filename, line = current line, aux = first line */
  HT_L_RUBY = 6       /* a line in a Ruby method or block: name = label, file =
                         path, line = current line */
};
/* Tapes declaring locations of these kinds are version 6 or later. */
#define HT_L_RTLOC_MIN HT_L_PYTHON

/* Columns of a sealed block, in this order. */
enum {
  HT_SC_TYPE, HT_SC_KIND, HT_SC_SEQ, HT_SC_TIME, HT_SC_TID, HT_SC_SIZE, HT_SC_WEIGHT,
  HT_SC_ALIGN, HT_SC_STACK, HT_SC_ADDR, HT_SC_BACK, HT_SC_BLOB,
  HT_SC_COUNT_V3,            /* columns before version 5 */
  HT_SC_BSTACK = HT_SC_COUNT_V3, HT_SC_BSIZE, HT_SC_BWEIGHT, HT_SC_BTID,
  HT_SC_COUNT_V7,            /* columns of versions 5 to 7 */
  HT_SC_BTIME = HT_SC_COUNT_V7, HT_SC_BOP, HT_SC_BADDR, HT_SC_COUNT
};
#define HT_SC_DUP 0x80         /* TYPE: the ALLOC drops a live block (BACK) */
#define HT_SC_REUSE 0x40       /* TYPE: the ALLOC reuses a recently freed address */
#define HT_SC_REL   0x40       /* TYPE: the FREE's BACK is relative to the last freed */
#define HT_SC_CLASS 0x20       /* TYPE (version 7): the ALLOC reuses a recently freed
                                  address of its size class */
#define HT_SEAL_BLOCK 65536    /* events per sealed block (at most) */
#define HT_SEAL_ZLEVEL 9       /* zstd level of the sealed packets (the sealer has time) */
/* Version 8's prediction of a figure that grows with the allocations (the
** resolved frees) at the allocation of index i, from its value pv
** at index pi and its value x0 at a block's start (a0): it kept pace with
** the allocations between the two. */
HT_INLINE uint64_t ht_seal_pace(uint64_t i, uint64_t pi, uint64_t pv, uint64_t a0, uint64_t x0)
{
  uint64_t d = i > pi ? i - pi : pi - i;
  d = a0 ? (uint64_t)((unsigned __int128)d * x0 / a0) : 0;
  return i > pi ? pv + d : pv - d;
}

/* The address the ADDR column predicts after an ALLOC of size bytes at a:
** a + ht_seal_chunk(size), where glibc carves the next chunk from the top. */
HT_INLINE uint64_t ht_seal_chunk(uint64_t size)
{
  return size < 25 ? 32 : (size + 8 + 15) & ~(uint64_t)15;
}
#define HT_SEAL_FRING 4096     /* freed addresses a block remembers (a power of 2) */
#define HT_SEAL_REUSE 64       /* of which an ALLOC may name the latest these */
/* Take the address of rank k (0: the latest) out of a ring of freed
** addresses (mask + 1 entries, n written): an allocator hands a freed chunk
** out once, so the next allocation's is the next latest (version 7's
** classes: glibc's bins are LIFO). */
HT_INLINE uint64_t ht_seal_ring_take(uint64_t *ring, uint32_t *n, uint32_t mask, uint64_t k)
{
  uint64_t a = ring[(*n - 1 - k) & mask];
  for (uint64_t j = k; j > 0; j--) ring[(*n - 1 - j) & mask] = ring[(*n - j) & mask];
  --*n;
  return a;
}
#define HT_SEAL_CLASSES 4096   /* size classes (version 7): ht_seal_class */
#define HT_SEAL_CRING 64       /* an ALLOC names one of its class's latest these
                                  ** (versions 7 and 8: all a block remembered) */
/* The size class of a block: its chunk size in 16-byte steps, one class for
** the largest. glibc hands the latest freed chunk of a size out first. */
HT_INLINE unsigned ht_seal_class(uint64_t size)
{
  uint64_t k = ht_seal_chunk(size) >> 4;
  return k < HT_SEAL_CLASSES ? (unsigned)k : HT_SEAL_CLASSES - 1;
}

/* META fields: the journal's reading, as its reader ended it. */
enum {
  HT_M_DAMAGE = 1,    /* uleb damaged, damaged_bytes, truncated_bytes, foreign,
                         lost, has_trailer, trailer_events, trailer_status + 1,
                         end_ns, first_error_off + 1; then the message (len bytes) */
  HT_M_COUNTS = 2,    /* uleb events, allocations, ops, unresolved frees */
  HT_M_JOURNAL = 3,   /* uleb journal bytes, packets, event packets */
};

/* AGG fields (version 3): tag:uleb len:uleb payload, each payload ulebs. */
enum {
  HT_A_TOTALS = 1,    /* the model's totals (src/analyze/agg.c lists them) */
  HT_A_COUNTS = 2,    /* n, then n event counts by type, n allocations by
                         kind family, n allocations by log2 size */
  HT_A_THREADS = 3,   /* n, then per thread: tid, name (len bytes), events,
                         allocs, bytes, frees */
  HT_A_SITES = 4,     /* n, then per (stack, thread, domain): their figures */
  HT_A_OVERS = 5,     /* n, then n pairs of site indexes (realloc site,
                         site of the block it replaced) */
  HT_A_TIMELINE = 6,  /* resolution, n, heap now, n heaps, n RSS */
  HT_A_SNAPS = 7,     /* step, n, then per snapshot (docs/FORMAT.md): time
                         delta, heap, calls, temporaries, live sites, sites
                         with new calls */
  HT_A_RSS = 8,       /* n, then n (time, resident bytes) samples */
  HT_A_SNAPN = 9,     /* version 5: n, then per snapshot of SNAPS: k, and the
                         live blocks of its k live sites, in SNAPS's order;
                         z, and z (site delta, blocks) of sites with 0 bytes */
  HT_A_LAYOUT = 10,   /* version 11: the heap map's layout (maplayout.h): g,
                         g granules, l, l allocation indexes never freed, each
                         rising, as differences */
  HT_A_NAMES = 11,    /* version 12, before SITES: the names the sites were
                         named with (DICT packets, their bytes), the caller
                         groups' depth, n, l, g, then n location ids (below
                         l) and n caller group ids (below g) of the sites */
};

/* Trailer fields. */
enum {
  HT_T_EVENTS = 1,    /* uleb: seq-bearing records written */
  HT_T_LOST = 2,      /* uleb: events dropped by the writer */
  HT_T_PACKETS = 3,   /* uleb: packets written before the trailer */
  HT_T_END = 4,       /* uleb: end timestamp (ns, same clock as ts0) */
  HT_T_STATUS = 5,    /* uleb: program exit status (128+signal if killed) */
  HT_T_BYTES = 6,     /* uleb: bytes written before the trailer */
};

#endif
