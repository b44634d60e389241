/* heaptape -- fuzz target: bytes drive a writer (threads, events, stacks,
** resets); the tape is written twice and must be byte-identical, and the
** reader must give back every event in order with its stack. Up to 1024
** threads, so the reader's stream table grows while packets are open. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/reader.h"
#include "format/writer.h"

typedef HtMemTape Mem;
typedef struct Want { uint64_t seq, addr, size; uint32_t tid; int depth; uint64_t top; } Want;

/* Flush hook sealing through the writer. */
static void flush(HtStream *s, void *ctx) { ht_writer_stream(ctx, s); }

/* Consume one byte of input (0 when exhausted). */
static uint8_t take(const uint8_t **p, const uint8_t *end) { return *p < end ? *(*p)++ : 0; }

/* Write a tape from the input; return it, and fill want[] when non-NULL.
** An op's low two bits pick one of four threads of the current bank; an op
** of the last group with bit 6 set (and bit 7 clear) switches to the bank
** named by the next byte: 256 banks, 1024 threads. */
static Mem run(const uint8_t *data, size_t size, Want *want, size_t *nwant)
{
  Mem m = {0};
  HtWriter *w = ht_writer_new(ht_mem_sink, &m, data[0] & 1 ? 1 : 0);
  HtTapeInfo info = {.pid = 7};
  ht_writer_header(w, &info);
  enum { NT = 1024, BUF = 512 };
  static HtStream *s[NT];    /* made on a thread's first use (32 KiB each) */
  static uint8_t bufs[NT][BUF];
  static uint64_t next_id[NT];
  uint64_t seq = 0, addr = 0x10000;
  unsigned bank = 0;
  const uint8_t *p = data + 1, *end = data + size;
  size_t n = 0;
  while (p < end && n < 4096) {
    uint8_t op = take(&p, end);
    int t = (int)(bank * 4 + (op & 3));
    if (!s[t]) {
      if (!(s[t] = malloc(sizeof(HtStream)))) abort();
      ht_stream_init(s[t], bufs[t], BUF, 7, (uint32_t)t + 1, flush, w);
      next_id[t] = 1;
    }
    switch ((op >> 2) % 4) {
    case 0: case 1: { /* allocation with a fresh stack of up to 15 frames */
      uint64_t v[16];
      int d = take(&p, end) % 16;
      for (int i = 0; i < d; i++) v[i] = (uint64_t)take(&p, end) << ((i * 7) % 56);
      uint64_t id = 0;
      if (d) {
        ht_stream_stack_define(s[t], next_id[t], 0, v, (size_t)d);
        next_id[t] += (uint64_t)d;
        id = next_id[t] - 1;
      }
      addr += (uint64_t)take(&p, end) * 4096 - 300000;
      uint64_t size = (uint64_t)take(&p, end) << (take(&p, end) % 64);
      seq += 1 + take(&p, end) % 3;
      ht_stream_alloc(s[t], seq, 0, size, addr, id, 0, 0);
      want[n++] = (Want){seq, addr, size, (uint32_t)t + 1, d, d ? v[d - 1] : 0};
      break;
    }
    case 2:
      seq++;
      ht_stream_free(s[t], seq, 0, addr, 0);
      want[n++] = (Want){seq, addr, 0, (uint32_t)t + 1, -1, 0};
      break;
    default:
      if (op & 0x80) { ht_stream_stack_reset(s[t]); next_id[t] = 1; }
      else if (op & 0x40) bank = take(&p, end);
      else ht_stream_time(s[t], (uint64_t)take(&p, end) * 1000000);
      break;
    }
  }
  for (int i = 0; i < NT; i++)
    if (s[i]) { ht_writer_stream(w, s[i]); free(s[i]); s[i] = NULL; }
  ht_writer_destroy(w);
  *nwant = n;
  return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 1) return 0;
  static Want want[4096];
  size_t n, n2;
  Mem a = run(data, size, want, &n), b = run(data, size, want, &n2);
  if (a.n != b.n || memcmp(a.p, b.p, a.n)) abort();
  HtReader *r;
  char err[256];
  if (ht_reader_open_mem(&r, a.p, a.n, err, sizeof(err))) abort();
  HtEvent ev;
  size_t k = 0;
  while (ht_reader_next(r, &ev) > 0) {
    if (k >= n) abort();
    const Want *x = &want[k++];
    if (ev.seq != x->seq || ev.addr != x->addr || ev.tid != x->tid) abort();
    if (x->depth >= 0) {
      uint64_t fr[16];
      if (ev.size != x->size) abort();
      if (ht_reader_stack_frames(r, ev.stack, fr, 16) != (size_t)x->depth) abort();
      if (x->depth && fr[0] != x->top) abort();
    }
  }
  if (k != n || ht_reader_stats(r)->damaged) abort();
  ht_reader_close(r);
  free(a.p);
  free(b.p);
  return 0;
}
