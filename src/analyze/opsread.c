/* heaptape -- the text form of the operations stream read back: one line
** at a time into HtOp, with the live bytes and the peak kept. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "opsread.h"
#include "../base/parse.h"

/* Whether the file at path starts as an operations log. */
int ht_opsread_is(const char *path)
{
  char buf[sizeof(HT_OPSREAD_MAGIC)] = {0};
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  return n == sizeof(buf) - 1 && !memcmp(buf, HT_OPSREAD_MAGIC, n);
}

/* Open path. */
int ht_opsread_open(HtOpsRead *o, const char *path, char *err, size_t errlen)
{
  memset(o, 0, sizeof(*o));
  o->path = path;
  o->f = fopen(path, "r");
  if (!o->f) { snprintf(err, errlen, "%s: %s", path, strerror(errno)); return -1; }
  if (ht_map_init(&o->live, 64)) {
    fclose(o->f);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  return 0;
}

/* Close and release. */
void ht_opsread_close(HtOpsRead *o)
{
  if (o->f) fclose(o->f);
  ht_map_free(&o->live);
  memset(o, 0, sizeof(*o));
}

/* Back to the first line. */
int ht_opsread_rewind(HtOpsRead *o)
{
  ht_map_clear(&o->live);
  o->line = o->nops = o->max_handle = o->live_bytes = o->peak = o->peak_index = 0;
  return fseek(o->f, 0, SEEK_SET) ? -1 : 0;
}

/* The next whitespace-separated field of *s (NUL-terminated in place), or NULL. */
static char *opsread_field(char **s)
{
  char *p = *s;
  while (*p == ' ' || *p == '\t') p++;
  if (!*p) return NULL;
  char *q = p;
  while (*q && *q != ' ' && *q != '\t') q++;
  if (*q) *q++ = 0;
  *s = q;
  return p;
}

/* A whole number field, or -1. */
static int opsread_uint(const char *s, uint64_t *v)
{
  return s && !ht_parse_uint(s, v) ? 0 : -1;
}

/* A New's flag field: C, A<align>, R<old>. */
static int opsread_flag(const char *f, HtOp *op)
{
  uint64_t v;
  if (!strcmp(f, "C")) { op->flags = HT_OPF_CALLOC; return 0; }
  if (f[0] == 'A' && !opsread_uint(f + 1, &v) && v && !(v & (v - 1))) {
    op->flags = HT_OPF_ALIGN;
    op->align = v;
    return 0;
  }
  if (f[0] == 'R' && !opsread_uint(f + 1, &v) && v) {
    op->flags = HT_OPF_REALLOC;
    op->old = v;
    return 0;
  }
  return -1;
}

/* The next operation. */
int ht_opsread_next(HtOpsRead *o, HtOp *op, char *err, size_t errlen)
{
  char line[512];
  const char *why = "not an operation line";
  for (;;) {
    if (!fgets(line, sizeof(line), o->f)) {
      if (ferror(o->f)) { snprintf(err, errlen, "%s: read error", o->path); return -1; }
      return 0;
    }
    o->line++;
    size_t n = strlen(line);
    if (n && line[n - 1] == '\n') line[--n] = 0;
    else if (!feof(o->f)) { why = "line too long"; goto bad; }
    if (o->line == 1 && strncmp(line, HT_OPSREAD_MAGIC, strlen(HT_OPSREAD_MAGIC))) {
      snprintf(err, errlen, "%s: not a tape or an operations log (no '%s' first line)",
               o->path, HT_OPSREAD_MAGIC);
      return -1;
    }
    if (!n || line[0] == '#') continue;
    char *s = line, *f[7];
    int nf = 0;
    while (nf < 7 && (f[nf] = opsread_field(&s))) nf++;
    memset(op, 0, sizeof(*op));
    uint64_t tid, *pv;
    if (nf < 4 || opsread_uint(f[0], &op->seq) || opsread_uint(f[1], &tid) ||
        tid > UINT32_MAX || strlen(f[2]) != 1) goto bad;
    op->tid = (uint32_t)tid;
    op->op = (uint8_t)f[2][0];
    if (!strchr("NFKULSM", op->op)) continue;  /* another kind: not ours */
    if (strchr("LSM", op->op)) {  /* an access: SEQ TID L|S|M HANDLE 0xADDR SIZE */
      uint64_t size;
      if (opsread_uint(f[3], &op->handle) || !ht_map_get(&o->live, op->handle)) continue;
      if (nf == 6 && !opsread_uint(f[5], &size) && size <= UINT32_MAX) op->size = size;
      if (nf >= 5) op->addr = strtoull(f[4], NULL, 16);
      op->index = o->nops ? o->nops - 1 : 0;
      op->live = o->live_bytes;
      return 1;
    }
    if (opsread_uint(f[3], &op->handle) || !op->handle) goto bad;
    pv = ht_map_get(&o->live, op->handle);
    if (op->op == HT_OP_NEW) {
      if (nf < 5 || nf > 6 || opsread_uint(f[4], &op->size)) goto bad;
      if (nf == 6 && opsread_flag(f[5], op)) goto bad;
      if (pv) { why = "a New of a block already live"; goto bad; }
      if (op->size >= UINT64_MAX / 2 || ht_map_put(&o->live, op->handle, op->size + 1)) {
        why = "block too large, or out of memory";
        goto bad;
      }
      o->live_bytes += op->size;
      op->index = o->nops++;
      if (o->live_bytes > o->peak) { o->peak = o->live_bytes; o->peak_index = op->index; }
      if (op->handle > o->max_handle) o->max_handle = op->handle;
    } else if (op->op == HT_OP_FREE) {
      if (nf > 5 || (nf == 5 && strcmp(f[4], "R"))) goto bad;
      if (!pv) { why = "a Free of a block not live"; goto bad; }
      if (nf == 5) op->flags = HT_OPF_REALLOC;
      op->size = *pv - 1;
      ht_map_del(&o->live, op->handle, NULL);
      o->live_bytes -= op->size;
      op->index = o->nops++;
    } else {
      if (nf != 4) goto bad;
      if (!pv) { why = "a lock or unlock of a block not live"; goto bad; }
      op->index = o->nops ? o->nops - 1 : 0;
    }
    op->live = o->live_bytes;
    return 1;
  bad:
    snprintf(err, errlen, "%s:%" PRIu64 ": %s", o->path, o->line, why);
    return -1;
  }
}
