/* heaptape -- the tape writer: header, sealed packets, dictionary, trailer.
** Emits through a (sink, arg) callback; never writes to a FILE *. */
#ifndef HT_WRITER_H
#define HT_WRITER_H

#include "stream.h"

/* Returns the bytes written; anything short of len is an error. */
typedef size_t (*HtSink)(const void *data, size_t len, void *arg);

typedef struct HtTapeInfo {
  uint32_t pid;              /* process id */
  const char *exe;           /* executable path, or NULL */
  const char *argv;          /* arguments separated by NUL, or NULL */
  size_t argv_len;           /* bytes of argv */
  uint32_t clock;            /* HT_CLOCK_* */
  uint64_t clock_res;        /* clock resolution in ns */
  uint64_t sample;           /* mean sampling interval in bytes, 0 = all */
  uint64_t start_ns;         /* start, ns since the epoch */
  uint32_t unwind;           /* HT_UNWIND_* */
  uint32_t frames;           /* maximum frames per stack */
  const char *frontend;      /* "native", "lua5.4", ... or NULL */
  uint16_t flags;            /* HT_F_* */
  uint16_t version;          /* format version; 0 = HT_VERSION (HT_VERSION_RTLOC
                                for a runtime declaring Python or Ruby locations) */
  uint64_t clock_start;      /* packet clock (ns) at the start, 0 = unknown */
  uint64_t late_ns;          /* ns from the process's start to the recording's
                                (attached), 0 = recorded from the start */
} HtTapeInfo;

typedef struct HtTrailer {
  uint64_t events;           /* seq-bearing records written */
  uint64_t lost;             /* events dropped */
  uint64_t end_ns;           /* end timestamp, same clock as packets */
  uint64_t status;           /* exit status, or UINT64_MAX when unknown */
} HtTrailer;

typedef struct HtWriter HtWriter;

/* A growable buffer and the sink that appends to it: tapes in memory, for
** tests, benchmarks and embedders that ship tapes elsewhere. Owner frees p. */
typedef struct HtMemTape {
  uint8_t *p;                /* bytes (malloc'd), NULL until the first write */
  size_t n, cap;             /* bytes used, allocated */
} HtMemTape;
/* HtSink appending to the HtMemTape at arg; returns 0 when out of memory. */
size_t ht_mem_sink(const void *data, size_t len, void *arg) HT_HIDDEN;

/* Create a writer; zstd_level 0 stores packets uncompressed. The writer
** allocates its scratch space here and never during ht_writer_packet.
** Returns NULL when out of memory. */
HtWriter *ht_writer_new(HtSink sink, void *arg, int zstd_level) HT_HIDDEN;
/* Free the writer (does not call the sink). */
void ht_writer_destroy(HtWriter *w) HT_HIDDEN;
/* Emit the file header. Returns 0 or HEAPTAPE_E_IO. */
int ht_writer_header(HtWriter *w, const HtTapeInfo *info) HT_HIDDEN;
/* Seal the body of s as an EVENTS packet and emit it, then reset s.
** Thread-safe (serialised inside); empty bodies are not emitted. */
int ht_writer_stream(HtWriter *w, HtStream *s) HT_HIDDEN;
/* Store packets uncompressed while on (a backlog to catch up with). */
void ht_writer_raw(HtWriter *w, int on) HT_HIDDEN;
/* Emit any packet from its parts. Thread-safe. */
int ht_writer_packet(HtWriter *w, unsigned kind, uint32_t pid, uint32_t tid,
                     uint64_t seq0, uint64_t seq1, uint64_t ts0, uint32_t nev,
                     const uint8_t *body, size_t len) HT_HIDDEN;
/* Emit the trailer packet. */
int ht_writer_trailer(HtWriter *w, const HtTrailer *t) HT_HIDDEN;
/* First error the sink reported (0 if none); errors are sticky. */
int ht_writer_error(const HtWriter *w) HT_HIDDEN;
/* Packets and bytes emitted so far. */
uint64_t ht_writer_packets(const HtWriter *w) HT_HIDDEN;
uint64_t ht_writer_bytes(const HtWriter *w) HT_HIDDEN;
/* Go on after the sink was cut back to packets/bytes (a trailer taken back). */
void ht_writer_resume(HtWriter *w, uint64_t packets, uint64_t bytes) HT_HIDDEN;

/* -- Dictionary builder: strings, native symbols, runtime locations ------- */

typedef struct HtDict HtDict;
/* A growable DICT body, split into packets of at most HT_PACKET_DEFAULT. */
HtDict *ht_dict_new(void) HT_HIDDEN;
void ht_dict_destroy(HtDict *d) HT_HIDDEN;
/* Intern a string; returns its reference (id + 1), 0 for NULL, -1 on OOM. */
int64_t ht_dict_str(HtDict *d, const char *s) HT_HIDDEN;
/* One inline frame of a symbol: function, file (string refs), line. */
typedef struct HtSymFrame { uint64_t func, file, line; } HtSymFrame;
/* Declare the symbol of a native address; frames innermost first. */
int ht_dict_sym(HtDict *d, uint64_t addr, const HtSymFrame *f, size_t n) HT_HIDDEN;
/* Declare a runtime location id. */
int ht_dict_loc(HtDict *d, uint64_t id, unsigned lkind, uint64_t name,
                uint64_t file, uint64_t line, uint64_t aux) HT_HIDDEN;
/* Name this dictionary (default 0). String ids are scoped to a dictionary:
** every writer of a tape that adds a DICT uses its own id (the recorder and
** runtimes 0, `heaptape record`'s symboliser 1). */
void ht_dict_set_id(HtDict *d, uint32_t id) HT_HIDDEN;
/* Emit what was declared since the last call as DICT packets (the packet
** header's tid field carries the dictionary id). */
int ht_dict_flush(HtDict *d, HtWriter *w, uint32_t pid) HT_HIDDEN;

#endif
