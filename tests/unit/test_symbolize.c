/* heaptape -- unit tests of the symboliser: addresses inside this binary,
** inline chains, build-id checks, and tapes finalised in place. */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testhelper.h"
#include "analyze/symbolize.h"
#include "format/reader.h"
#include "format/writer.h"
#include "../../include/heaptape.h"

/* -- Functions to find ---------------------------------------------------- */

static volatile int sink_v;          /* defeats tail calls */
static int line_mid, line_inl, line_outer; /* lines of the calls below */

/* Return the address this function returns to. */
__attribute__((noinline)) static uintptr_t tsym_leaf(void)
{
  sink_v++;
  return (uintptr_t)__builtin_return_address(0);
}

/* Caller of tsym_leaf: its return address lies here. */
__attribute__((noinline)) uintptr_t tsym_mid(void)
{
  line_mid = __LINE__ + 1;
  uintptr_t r = tsym_leaf();
  sink_v++;
  return r;
}

/* Inlined into tsym_outer; the call to tsym_leaf sits in its body. */
static inline __attribute__((always_inline)) uintptr_t tsym_inl(void)
{
  line_inl = __LINE__ + 1;
  uintptr_t r = tsym_leaf();
  sink_v++;
  return r;
}

/* Out-of-line caller of the inlined function. */
__attribute__((noinline)) uintptr_t tsym_outer(void)
{
  line_outer = __LINE__ + 1;
  uintptr_t r = tsym_inl();
  sink_v++;
  return r;
}

/* A C function carrying a C++ mangled symbol name: ns::cpp_fn(int). */
__attribute__((noinline)) uintptr_t tsym_cpp(int x) __asm__("_ZN2ns6cpp_fnEi");
__attribute__((noinline)) uintptr_t tsym_cpp(int x)
{
  uintptr_t r = tsym_leaf() + (uintptr_t)x * 0;
  sink_v++;
  return r;
}

/* -- This process's modules ----------------------------------------------- */

typedef struct TMod {
  char path[512];            /* file */
  uint64_t base;             /* load bias */
  uint8_t bid[64];           /* build id */
  size_t bid_len;            /* bytes of bid */
  HtSegment segs[16];        /* PT_LOAD segments */
  size_t nseg;               /* segments */
} TMod;

static TMod tmods[64];       /* loaded objects */
static size_t ntmods;        /* count */

/* Collect one loaded object: path, bias, segments, build id from its notes. */
static int tmod_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
  (void)size; (void)arg;
  if (ntmods == HT_COUNTOF(tmods)) return 1;
  TMod *m = &tmods[ntmods];
  memset(m, 0, sizeof(*m));
  if (!info->dlpi_name[0]) {
    ssize_t n = readlink("/proc/self/exe", m->path, sizeof(m->path) - 1);
    if (n > 0) m->path[n] = 0;
  } else {
    snprintf(m->path, sizeof(m->path), "%s", info->dlpi_name);
  }
  m->base = info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD && m->nseg < HT_COUNTOF(m->segs)) {
      m->segs[m->nseg].vaddr = ph->p_vaddr;
      m->segs[m->nseg].memsz = ph->p_memsz;
      m->segs[m->nseg].prot = ph->p_flags;
      m->nseg++;
    } else if (ph->p_type == PT_NOTE && !m->bid_len) {
      const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
      const uint8_t *end = p + ph->p_memsz;
      while (p + sizeof(ElfW(Nhdr)) <= end) {
        const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
        const uint8_t *name = p + sizeof(*nh);
        const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);
        if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
            !memcmp(name, "GNU", 4) && nh->n_descsz <= sizeof(m->bid)) {
          memcpy(m->bid, desc, nh->n_descsz);
          m->bid_len = nh->n_descsz;
          break;
        }
        p = desc + ((nh->n_descsz + 3) & ~3u);
      }
    }
  }
  ntmods++;
  return 0;
}

/* Fill tmods once. */
static void tmods_load(void)
{
  if (!ntmods) dl_iterate_phdr(tmod_cb, NULL);
}

/* A symboliser knowing every module of this process. */
static HtSymbolizer *tsym_new(void)
{
  tmods_load();
  HtSymbolizer *s = ht_symbolizer_new(HT_SYM_QUIET);
  for (size_t i = 0; s && i < ntmods; i++)
    ht_symbolizer_module(s, tmods[i].path, tmods[i].base, tmods[i].bid,
                         tmods[i].bid_len, tmods[i].segs, tmods[i].nseg);
  return s;
}

/* Whether path ends with the given file name. */
static int ends_with(const char *path, const char *name)
{
  size_t a = path ? strlen(path) : 0, b = strlen(name);
  return a >= b && !strcmp(path + a - b, name);
}

/* -- Symboliser tests ----------------------------------------------------- */

/* A plain return address names its function, file and line. */
static void test_plain(void)
{
  HtSymbolizer *s = tsym_new();
  CHECK(s != NULL);
  if (!s) return;
  HtSymOut out[16];
  size_t n = ht_symbolizer_lookup(s, tsym_mid(), out, 16);
  CHECK_EQ(n, 1);
  CHECK(!strcmp(out[0].func, "tsym_mid"));
  CHECK(ends_with(out[0].file, "test_symbolize.c"));
  CHECK_EQ(out[0].line, line_mid);
  ht_symbolizer_destroy(s);
}

/* A return address inside an inlined function yields the whole chain. */
static void test_inline(void)
{
  HtSymbolizer *s = tsym_new();
  if (!s) { CHECK(0); return; }
  HtSymOut out[16];
  size_t n = ht_symbolizer_lookup(s, tsym_outer(), out, 16);
  CHECK_EQ(n, 2);
  if (n == 2) {
    CHECK(!strcmp(out[0].func, "tsym_inl"));
    CHECK_EQ(out[0].line, line_inl);
    CHECK(ends_with(out[0].file, "test_symbolize.c"));
    CHECK(!strcmp(out[1].func, "tsym_outer"));
    CHECK_EQ(out[1].line, line_outer);
    CHECK(ends_with(out[1].file, "test_symbolize.c"));
  }
  ht_symbolizer_destroy(s);
}

/* Mangled names come out demangled. */
static void test_demangle(void)
{
  HtSymbolizer *s = tsym_new();
  if (!s) { CHECK(0); return; }
  HtSymOut out[16];
  size_t n = ht_symbolizer_lookup(s, tsym_cpp(1), out, 16);
  CHECK(n >= 1);
  CHECK(!strcmp(out[0].func, "ns::cpp_fn(int)"));
  ht_symbolizer_destroy(s);
}

/* A libc address resolves through the shared library's symbol table. */
static void test_shared(void)
{
  HtSymbolizer *s = tsym_new();
  if (!s) { CHECK(0); return; }
  HtSymOut out[16];
  uintptr_t a = (uintptr_t)dlsym(RTLD_DEFAULT, "qsort") + 1;
  size_t n = ht_symbolizer_lookup(s, a + 1, out, 16);
  CHECK(n >= 1);
  CHECK(strstr(out[0].func, "qsort") != NULL);
  ht_symbolizer_destroy(s);
}

/* Unknown addresses, file-less modules and wrong build ids still get names. */
static void test_fallbacks(void)
{
  tmods_load();
  HtSymbolizer *s = ht_symbolizer_new(HT_SYM_QUIET);
  if (!s) { CHECK(0); return; }
  HtSegment seg = {0, 0x2000, 5};
  ht_symbolizer_module(s, "linux-vdso.so.1", 0x7000, NULL, 0, &seg, 1);
  uint8_t bad[20];
  memset(bad, 0xab, sizeof(bad));
  ht_symbolizer_module(s, tmods[0].path, tmods[0].base, bad, sizeof(bad),
                       tmods[0].segs, tmods[0].nseg);
  HtSymOut out[4];
  CHECK_EQ(ht_symbolizer_lookup(s, 0x10, out, 4), 1);
  CHECK(!strcmp(out[0].func, "0x10"));
  CHECK_EQ(ht_symbolizer_lookup(s, 0x7123, out, 4), 1);
  CHECK(!strcmp(out[0].func, "linux-vdso.so.1+0x123"));
  uintptr_t ip = tsym_mid();
  CHECK_EQ(ht_symbolizer_lookup(s, ip, out, 4), 1);
  char want[600];
  const char *base = strrchr(tmods[0].path, '/') + 1;
  snprintf(want, sizeof(want), "%s+0x%llx", base,
           (unsigned long long)(ip - tmods[0].base));
  CHECK(!strcmp(out[0].func, want));
  ht_symbolizer_destroy(s);
}

/* -- Tapes finalised in place --------------------------------------------- */

/* Sink writing to a file descriptor. */
static size_t tape_sink(const void *d, size_t n, void *arg)
{
  return (size_t)write(*(int *)arg, d, n);
}

/* Write a tape: header, this process's modules, one stack of ips (outermost
** first), allocations on it; with_trailer 0 leaves it unfinished. */
static void tape_write(const char *path, const uint64_t *ips, size_t nip,
                       int with_trailer)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  HtWriter *w = ht_writer_new(tape_sink, &fd, 1);
  HtTapeInfo info;
  memset(&info, 0, sizeof(info));
  info.pid = (uint32_t)getpid();
  info.exe = tmods[0].path;
  info.clock = HT_CLOCK_MONOTONIC;
  info.clock_res = 1;
  info.unwind = HT_UNWIND_FP;
  info.frames = 64;
  info.frontend = "native";
  ht_writer_header(w, &info);
  static uint8_t body[HT_PACKET_DEFAULT];
  HtStream st;
  ht_stream_init(&st, body, sizeof(body), info.pid, info.pid, NULL, NULL);
  uint64_t seq = 1;
  for (size_t i = 0; i < ntmods; i++)
    ht_stream_module(&st, seq++, 0, i == 0 ? "" : tmods[i].path, tmods[i].base,
                     tmods[i].bid, tmods[i].bid_len, tmods[i].segs, tmods[i].nseg);
  uint64_t vals[64];
  for (size_t i = 0; i < nip; i++) vals[i] = ips[i] << 1;
  ht_stream_stack_define(&st, 1, 0, vals, nip);
  ht_stream_alloc(&st, seq++, 0, 100, 0x1000, nip, 0, 0);
  ht_stream_alloc(&st, seq++, 0, 50, 0x2000, nip, 0, 0);
  ht_stream_free(&st, seq++, 0, 0x1000, 0);
  ht_stream_alloc(&st, seq++, 0, 30, 0x3000, nip - 1, 0, 0);
  ht_writer_stream(w, &st);
  if (with_trailer) {
    HtTrailer t = {seq - 1, 0, 1000, 0};
    ht_writer_trailer(w, &t);
  }
  ht_writer_destroy(w);
  close(fd);
}

/* Check that the finalised tape names the functions of ips. */
static void tape_check(const char *path, const uint64_t *ips, size_t nip)
{
  HtReader *r;
  char err[256];
  int rc = ht_reader_open(&r, path, err, sizeof(err));
  CHECK_EQ(rc, 0);
  if (rc) { fprintf(stderr, "  %s\n", err); return; }
  CHECK(ht_reader_header(r)->flags & HT_F_SYMBOLIZED);
  const HtSymbol *sym;
  size_t n = ht_reader_symbol(r, ips[nip - 1], &sym);   /* innermost: tsym_outer */
  CHECK_EQ(n, 2);
  if (n == 2) {
    CHECK(sym[0].func && !strcmp(sym[0].func, "tsym_inl"));
    CHECK_EQ(sym[0].line, line_inl);
    CHECK(sym[1].func && !strcmp(sym[1].func, "tsym_outer"));
    CHECK_EQ(sym[1].line, line_outer);
    CHECK(ends_with(sym[1].file, "test_symbolize.c"));
  }
  n = ht_reader_symbol(r, ips[nip - 2], &sym);
  CHECK_EQ(n, 1);
  if (n == 1) CHECK(sym[0].func && !strcmp(sym[0].func, "tsym_mid"));
  n = ht_reader_symbol(r, ips[0], &sym);              /* outside every module */
  CHECK_EQ(n, 1);
  if (n == 1) CHECK(sym[0].func && !strcmp(sym[0].func, "0x42"));
  ht_reader_close(r);
}

/* A whole tape: symbols appended, totals right, a second pass adds nothing. */
static void test_tape(void)
{
  tmods_load();
  char path[] = "/tmp/ht_symtest_XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  uint64_t ips[3] = {0x42, tsym_mid(), tsym_outer()};
  tape_write(path, ips, 3, 1);
  HtSymSummary sum;
  char err[256];
  int rc = ht_symbolize_run(path, HT_SYM_QUIET, &sum, err, sizeof(err));
  CHECK_EQ(rc, 0);
  if (rc) fprintf(stderr, "  %s\n", err);
  CHECK_EQ(sum.addrs, 3);
  CHECK_EQ(sum.allocated, 180);
  CHECK_EQ(sum.peak, 150);
  CHECK_EQ(sum.modules, ntmods);
  CHECK(!sum.truncated);
  CHECK(sum.dict_bytes > 0);
  tape_check(path, ips, 3);
  struct stat st1, st2;
  stat(path, &st1);
  rc = ht_symbolize_run(path, HT_SYM_QUIET, &sum, err, sizeof(err));
  CHECK_EQ(rc, 0);
  CHECK_EQ(sum.addrs, 0);
  stat(path, &st2);
  CHECK_EQ(st1.st_size, st2.st_size);
  unlink(path);
}

/* A tape cut inside its last packet is finalised from what it holds. */
static void test_truncated(void)
{
  tmods_load();
  char path[] = "/tmp/ht_symtest_XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  uint64_t ips[3] = {0x42, tsym_mid(), tsym_outer()};
  tape_write(path, ips, 3, 0);
  fd = open(path, O_WRONLY | O_APPEND);     /* a partial packet: header only */
  CHECK(write(fd, "HTPK\001\000\000\000\377\000\000\000", 12) == 12);
  close(fd);
  HtSymSummary sum;
  char err[256];
  int rc = ht_symbolize_run(path, HT_SYM_QUIET, &sum, err, sizeof(err));
  CHECK_EQ(rc, 0);
  if (rc) fprintf(stderr, "  %s\n", err);
  CHECK(sum.truncated);
  CHECK_EQ(sum.addrs, 3);
  tape_check(path, ips, 3);
  HtReader *r;
  if (!ht_reader_open(&r, path, err, sizeof(err))) {
    CHECK_EQ(ht_reader_stats(r)->truncated_bytes, 0);
    CHECK_EQ(ht_reader_stats(r)->damaged, 0);
    ht_reader_close(r);
  }
  unlink(path);
}

/* Run every test; ends with "N passed, N failed". */
int main(void)
{
  TEST(test_plain);
  TEST(test_inline);
  TEST(test_demangle);
  TEST(test_shared);
  TEST(test_fallbacks);
  TEST(test_tape);
  TEST(test_truncated);
  return th_summary();
}
