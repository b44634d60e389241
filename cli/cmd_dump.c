/* heaptape -- `heaptape dump FILE`: every event of a tape as one text line,
** then the stack table with symbols; for debugging and for the tests. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cmds.h"
#include "../src/format/reader.h"
#include "heaptape.h"

/* Name of an allocation or free kind. */
static const char *kind_name(unsigned kind)
{
  static const char *names[] = {
    "malloc", "calloc", "realloc", "aligned", "valloc", "new", "new[]",
    "new-aligned", "new[]-aligned", "sized", "aligned-sized", "runtime",
  };
  unsigned f = HT_K_FAMILY(kind);
  return f < HT_COUNTOF(names) ? names[f] : "?";
}

/* Print bytes as a quoted string with non-printables escaped. */
static void put_quoted(const char *s, size_t n)
{
  putchar('"');
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '"' || ch == '\\') printf("\\%c", ch);
    else if (ch < 0x20 || ch >= 0x7f) printf("\\x%02x", ch);
    else putchar(ch);
  }
  putchar('"');
}

/* Print one event line. */
static void dump_event(const HtEvent *e)
{
  printf("%" PRIu64 " %" PRIu64 " %u/%u ", e->seq, e->ts, e->pid, e->tid);
  const char *dom = (e->kind & HT_K_DOMAIN_RT) ? "rt:" : "";
  switch (e->type) {
  case HT_EV_ALLOC:
    printf("ALLOC %s%s 0x%" PRIx64 " %" PRIu64 " stack=%u", dom, kind_name(e->kind),
           e->addr, e->size, e->stack);
    if (e->align) printf(" align=%" PRIu64, e->align);
    if (e->weight != e->size) printf(" weight=%" PRIu64, e->weight);
    break;
  case HT_EV_FREE:  /* a sealed tape names the block freed, not its address */
    if (e->back) printf("FREE %s%s handle=%" PRIu64, dom, kind_name(e->kind), e->back);
    else printf("FREE %s%s 0x%" PRIx64, dom, kind_name(e->kind), e->addr);
    if (HT_K_HAS_SIZE(e->kind)) printf(" size=%" PRIu64, e->size);
    break;
  case HT_EV_THREAD: printf("THREAD "); put_quoted(e->str, e->len); break;
  case HT_EV_MARK: printf("MARK "); put_quoted(e->str, e->len); break;
  case HT_EV_MODULE:
  case HT_EV_UNLOAD:
    printf("%s 0x%" PRIx64 " ", e->type == HT_EV_MODULE ? "MODULE" : "UNLOAD", e->addr);
    put_quoted(e->str, e->len);
    if (e->build_id_len) {
      printf(" build-id=");
      for (size_t i = 0; i < e->build_id_len; i++) printf("%02x", e->build_id[i]);
    }
    for (size_t i = 0; i < e->nseg; i++)
      printf(" seg=0x%" PRIx64 "+0x%" PRIx64 "/%u", e->segs[i].vaddr, e->segs[i].memsz,
             e->segs[i].prot);
    break;
  case HT_EV_RSS: printf("RSS %" PRIu64, e->size); break;
  case HT_EV_LOST: printf("LOST %" PRIu64, e->size); break;
  default: printf("EVENT %u", e->type); break;
  }
  putchar('\n');
}

/* Print one stack node with what its frame stands for. */
static void dump_node(const HtReader *r, uint32_t id)
{
  uint64_t v = ht_reader_stack_frame(r, id);
  printf("STACK %u parent=%u ", id, ht_reader_stack_parent(r, id));
  if (HT_FRAME_IS_LOC(v)) {
    const HtLocation *l = ht_reader_location(r, HT_FRAME_LOC(v));
    printf("loc=%" PRIu64, HT_FRAME_LOC(v));
    if (l) printf(" kind=%u name=%s file=%s line=%" PRIu64 " aux=%" PRIu64, l->kind,
                  l->name ? l->name : "-", l->file ? l->file : "-", l->line, l->aux);
    putchar('\n');
    return;
  }
  printf("ip=0x%" PRIx64, HT_FRAME_IP(v));
  const HtSymbol *s;
  size_t n = ht_reader_symbol(r, HT_FRAME_IP(v), &s);
  for (size_t i = 0; i < n; i++)
    printf("%s%s %s:%u", i ? " inlined-in " : " ", s[i].func ? s[i].func : "??",
           s[i].file ? s[i].file : "??", s[i].line);
  putchar('\n');
}

/* Print the header as comment lines. */
static void dump_header(const HtHeader *h)
{
  printf("# heaptape tape version %u, pid %u, frontend %s\n", h->version, h->pid,
         h->frontend);
  printf("# exe %s\n# argv", h->exe);
  for (size_t i = 0; i < h->argv_len;) {
    size_t n = strnlen(h->argv + i, h->argv_len - i);
    printf(" %.*s", (int)n, h->argv + i);
    i += n + 1;
  }
  printf("\n# clock %u resolution %" PRIu64 "ns, start %" PRIu64 ", sample %" PRIu64
         ", unwind %u, frames %u\n", h->clock, h->clock_res, h->start_ns, h->sample,
         h->unwind, h->frames);
}

static const char dump_usage[] =
  "usage: heaptape dump [--no-stacks] FILE\n"
  "Print every event of the tape in global order, one per line:\n"
  "  SEQ TIME_NS PID/TID TYPE FIELDS...\n"
  "then the stack table (STACK id parent frame symbol) and the totals.\n";

/* `heaptape dump`: parse its arguments and run it; returns the exit status. */
int cmd_dump(int argc, char **argv)
{
  static const HtOpt opts[] = {{"--no-stacks", 0, 0, 1}, {NULL, 0, 0, 0}};
  int stacks = 1, k;
  const char *path = NULL;
  HtArgs a;
  ht_args_init(&a, argc, argv, "dump", dump_usage, opts);
  while ((k = ht_args_next(&a)) != HT_ARG_END) {
    if (k == HT_ARG_HELP) return HT_EXIT_OK;
    if (k == HT_ARG_BAD) return HT_EXIT_USAGE;
    if (k == 1) stacks = 0;
    else if (path) return ht_args_extra(&a, "tape", a.val);
    else path = a.val;
  }
  if (!path) return ht_args_missing(&a, "tape");
  HtReader *r;
  if (ht_cli_open_tape(path, &r)) return HT_EXIT_FAIL;
  dump_header(ht_reader_header(r));
  HtEvent e;
  int rc;
  while ((rc = ht_reader_next(r, &e)) > 0) dump_event(&e);
  if (stacks)
    for (uint32_t i = 1; i <= ht_reader_stack_count(r); i++) dump_node(r, i);
  const HtReadStats *st = ht_reader_stats(r);
  printf("# packets %" PRIu64 ", events %" PRIu64 ", lost %" PRIu64 ", damaged %" PRIu64
         " (%" PRIu64 " bytes), truncated %" PRIu64 " bytes, trailer %s\n",
         st->packets, st->events, st->lost, st->damaged, st->damaged_bytes,
         st->truncated_bytes, st->has_trailer ? "yes" : "no");
  ht_cli_warn_damage(path, r);
  ht_reader_close(r);
  if (rc < 0) {
    ht_cli_error("%s: %s", path, heaptape_strerror(rc));
    return HT_EXIT_FAIL;
  }
  return HT_EXIT_OK;
}
