/* heaptape -- the string and memory functions of libc replaced, in the
** tool's preload (vgpreload_heaptape), by plain loops that touch exactly the
** bytes the function is defined on: DHAT's preload does the same, so that a
** program's bytes read and written are counted alike by both tools.
**
** libc's own versions are vector loops: strlen reads aligned 32-byte words
** past the string's end, memcpy of 20 bytes makes two overlapping 16-byte
** copies; under heaptape's tool those bytes counted (3-5% more bytes read and
** written than DHAT on sqlite3, docs/ACCESS.md). These run as client code,
** instrumented as any other. Copies and fills go 8 bytes at a time (fewer
** accesses, the same bytes); searches go a byte at a time (a word would read
** past the end). Valgrind routes calls by name (pub_tool_redir.h's
** VG_REPLACE_FUNCTION_EZU: a tag shared by aliases of one function, as libc's
** index and strchr). Built -fno-builtin -fno-tree-loop-distribute-patterns,
** so that no loop here becomes a call of the function it replaces. */
#include "pub_tool_basics.h"
#include "pub_tool_redir.h"

#define HV_LIBC VG_Z_LIBC_SONAME           /* libc.so* */
#define HV_LDSO VG_Z_LD_LINUX_X86_64_SO_2  /* ld-linux-x86-64.so.2 */

void __chk_fail(void) __attribute__((noreturn));  /* libc's: "buffer overflow detected" */

typedef ULong __attribute__((may_alias, aligned(1))) Word8;  /* an unaligned 8-byte word */

/* -- The functions, once --------------------------------------------------- */

static inline SizeT sm_strlen(const HChar *s)
{
  const HChar *p = s;
  while (*p) p++;
  return (SizeT)(p - s);
}

static inline SizeT sm_strnlen(const HChar *s, SizeT max)
{
  SizeT n = 0;
  while (n < max && s[n]) n++;
  return n;
}

static inline HChar *sm_strchr(const HChar *s, Int c)
{
  for (;; s++) {
    if (*s == (HChar)c) return (HChar *)s;
    if (!*s) return NULL;
  }
}

static inline HChar *sm_strchrnul(const HChar *s, Int c)
{
  while (*s && *s != (HChar)c) s++;
  return (HChar *)s;
}

static inline HChar *sm_strrchr(const HChar *s, Int c)
{
  const HChar *last = NULL;
  for (;; s++) {
    if (*s == (HChar)c) last = s;
    if (!*s) return (HChar *)last;
  }
}

static inline void *sm_memchr(const void *s, Int c, SizeT n)
{
  const UChar *p = s;
  for (; n; n--, p++)
    if (*p == (UChar)c) return (void *)p;
  return NULL;
}

static inline void *sm_memrchr(const void *s, Int c, SizeT n)
{
  const UChar *p = (const UChar *)s + n;
  while (n--)
    if (*--p == (UChar)c) return (void *)p;
  return NULL;
}

static inline void *sm_rawmemchr(const void *s, Int c)
{
  const UChar *p = s;
  while (*p != (UChar)c) p++;
  return (void *)p;
}

static inline Int sm_strcmp(const HChar *a, const HChar *b)
{
  const UChar *p = (const UChar *)a, *q = (const UChar *)b;
  while (*p && *p == *q) p++, q++;
  return (Int)*p - (Int)*q;
}

static inline Int sm_strncmp(const HChar *a, const HChar *b, SizeT n)
{
  const UChar *p = (const UChar *)a, *q = (const UChar *)b;
  for (; n; n--, p++, q++)
    if (*p != *q || !*p) return (Int)*p - (Int)*q;
  return 0;
}

/* Bytes up to the first difference (whole words while they are equal). */
static inline Int sm_memcmp(const void *a, const void *b, SizeT n)
{
  const UChar *p = a, *q = b;
  for (; n >= 8 && *(const Word8 *)p == *(const Word8 *)q; n -= 8) p += 8, q += 8;
  for (; n; n--, p++, q++)
    if (*p != *q) return (Int)*p - (Int)*q;
  return 0;
}

/* memmove's semantics for every copy: a forward copy when dst is below src
** (or far enough above), else backwards; n bytes read, n written. */
static inline void *sm_memmove(void *dst, const void *src, SizeT n)
{
  UChar *d = dst;
  const UChar *s = src;
  if ((Addr)d - (Addr)s >= n) {
    for (; n >= 8; n -= 8, d += 8, s += 8) *(Word8 *)d = *(const Word8 *)s;
    for (; n; n--) *d++ = *s++;
  } else {
    d += n; s += n;
    for (; n >= 8; n -= 8) { d -= 8; s -= 8; *(Word8 *)d = *(const Word8 *)s; }
    while (n--) *--d = *--s;
  }
  return dst;
}

static inline void *sm_memset(void *dst, Int c, SizeT n)
{
  UChar *d = dst;
  ULong w = (UChar)c * 0x0101010101010101ull;
  for (; n >= 8; n -= 8, d += 8) *(Word8 *)d = w;
  for (; n; n--) *d++ = (UChar)c;
  return dst;
}

/* Copy s with its NUL to d; the NUL's place in d. */
static inline HChar *sm_stpcpy(HChar *d, const HChar *s)
{
  while ((*d = *s)) d++, s++;
  return d;
}

/* strcpy's fortified form: at most dn bytes into d. */
static inline HChar *sm_stpcpy_chk(HChar *d, const HChar *s, SizeT dn)
{
  for (;; d++, s++, dn--) {
    if (!dn) __chk_fail();
    if (!(*d = *s)) return d;
  }
}

/* At most n bytes of s, the rest of d's n bytes zeroed; where the copy ended. */
static inline HChar *sm_stpncpy(HChar *d, const HChar *s, SizeT n)
{
  SizeT i = 0;
  for (; i < n && s[i]; i++) d[i] = s[i];
  HChar *end = d + i;
  for (; i < n; i++) d[i] = 0;
  return end;
}

static inline HChar *sm_strncat(HChar *d, const HChar *s, SizeT n)
{
  HChar *p = d + sm_strlen(d);
  for (; n && *s; n--) *p++ = *s++;
  *p = 0;
  return d;
}

/* Whether c is in the NUL-terminated set. */
static inline Bool sm_in(const HChar *set, HChar c)
{
  for (; *set; set++)
    if (*set == c) return True;
  return False;
}

static inline SizeT sm_strspn(const HChar *s, const HChar *accept)
{
  SizeT n = 0;
  while (s[n] && sm_in(accept, s[n])) n++;
  return n;
}

static inline SizeT sm_strcspn(const HChar *s, const HChar *reject)
{
  SizeT n = 0;
  while (s[n] && !sm_in(reject, s[n])) n++;
  return n;
}

static inline HChar *sm_strpbrk(const HChar *s, const HChar *accept)
{
  for (; *s; s++)
    if (sm_in(accept, *s)) return (HChar *)s;
  return NULL;
}

static inline HChar *sm_strstr(const HChar *h, const HChar *n)
{
  if (!*n) return (HChar *)h;
  for (; *h; h++) {
    SizeT i = 0;
    while (n[i] && h[i] == n[i]) i++;
    if (!n[i]) return (HChar *)h;
  }
  return NULL;
}

/* Case-blind compares fold with libc's tolower (the locale's own table). */
int tolower(int c);
int tolower_l(int c, void *locale);

static inline Int sm_strncasecmp(const HChar *a, const HChar *b, SizeT n, void *loc, Bool has_loc)
{
  const UChar *p = (const UChar *)a, *q = (const UChar *)b;
  for (; n; n--, p++, q++) {
    Int x = has_loc ? tolower_l(*p, loc) : tolower(*p), y = has_loc ? tolower_l(*q, loc) : tolower(*q);
    if (x != y || !*p) return x - y;
  }
  return 0;
}

/* Wide strings: elements of 4 bytes (wchar_t), a load each. */
typedef Int Wch;

static inline SizeT sm_wcsnlen(const Wch *s, SizeT max)
{
  SizeT n = 0;
  while (n < max && s[n]) n++;
  return n;
}

static inline Int sm_wcsncmp(const Wch *a, const Wch *b, SizeT n)
{
  for (; n; n--, a++, b++)
    if (*a != *b || !*a) return *a < *b ? -1 : *a > *b;
  return 0;
}

static inline Wch *sm_wcschr(const Wch *s, Wch c)
{
  for (;; s++) {
    if (*s == c) return (Wch *)s;
    if (!*s) return NULL;
  }
}

static inline Wch *sm_wcsrchr(const Wch *s, Wch c)
{
  const Wch *last = NULL;
  for (;; s++) {
    if (*s == c) last = s;
    if (!*s) return (Wch *)last;
  }
}

static inline Wch *sm_wmemchr(const Wch *s, Wch c, SizeT n)
{
  for (; n; n--, s++)
    if (*s == c) return (Wch *)s;
  return NULL;
}

static inline Wch *sm_wcscpy(Wch *d, const Wch *s)
{
  Wch *r = d;
  while ((*d++ = *s++)) {}
  return r;
}

/* -- The names they replace ------------------------------------------------ */
/* R(tag, soname, name, ret, params, body): one replacement. */
#define R(tag, so, fn, ret, params, body) \
  ret VG_REPLACE_FUNCTION_EZU(tag, so, fn) params; \
  ret VG_REPLACE_FUNCTION_EZU(tag, so, fn) params { body; }
#define RZ(tag, so, fn, ret, params, body) \
  ret VG_REPLACE_FUNCTION_EZZ(tag, so, fn) params; \
  ret VG_REPLACE_FUNCTION_EZZ(tag, so, fn) params { body; }

#define STRLEN(so, fn) R(20100, so, fn, SizeT, (const HChar *s), return sm_strlen(s))
STRLEN(HV_LIBC, strlen)
STRLEN(HV_LIBC, __GI_strlen)
STRLEN(HV_LDSO, strlen)

#define STRNLEN(so, fn) R(20110, so, fn, SizeT, (const HChar *s, SizeT m), return sm_strnlen(s, m))
STRNLEN(HV_LIBC, strnlen)
STRNLEN(HV_LIBC, __GI_strnlen)

#define STRCHR(so, fn) R(20120, so, fn, HChar *, (const HChar *s, Int c), return sm_strchr(s, c))
STRCHR(HV_LIBC, strchr)
STRCHR(HV_LIBC, __GI_strchr)
STRCHR(HV_LIBC, index)

#define STRRCHR(so, fn) R(20130, so, fn, HChar *, (const HChar *s, Int c), return sm_strrchr(s, c))
STRRCHR(HV_LIBC, strrchr)
STRRCHR(HV_LIBC, __GI_strrchr)
STRRCHR(HV_LIBC, rindex)
STRRCHR(HV_LDSO, rindex)

R(20140, HV_LIBC, strchrnul, HChar *, (const HChar *s, Int c), return sm_strchrnul(s, c))

#define MEMCHR(so, fn) R(20150, so, fn, void *, (const void *s, Int c, SizeT n), return sm_memchr(s, c, n))
MEMCHR(HV_LIBC, memchr)
MEMCHR(HV_LIBC, __GI_memchr)
R(20160, HV_LIBC, memrchr, void *, (const void *s, Int c, SizeT n), return sm_memrchr(s, c, n))
#define RAWMEMCHR(so, fn) R(20170, so, fn, void *, (const void *s, Int c), return sm_rawmemchr(s, c))
RAWMEMCHR(HV_LIBC, rawmemchr)
RAWMEMCHR(HV_LIBC, __GI___rawmemchr)

#define STRCMP(so, fn) R(20180, so, fn, Int, (const HChar *a, const HChar *b), return sm_strcmp(a, b))
STRCMP(HV_LIBC, strcmp)
STRCMP(HV_LIBC, __GI_strcmp)
STRCMP(HV_LDSO, strcmp)

#define STRNCMP(so, fn) R(20190, so, fn, Int, (const HChar *a, const HChar *b, SizeT n), \
                          return sm_strncmp(a, b, n))
STRNCMP(HV_LIBC, strncmp)
STRNCMP(HV_LIBC, __GI_strncmp)

#define MEMCMP(so, fn) R(20200, so, fn, Int, (const void *a, const void *b, SizeT n), \
                         return sm_memcmp(a, b, n))
MEMCMP(HV_LIBC, memcmp)
MEMCMP(HV_LIBC, __GI_memcmp)
MEMCMP(HV_LIBC, bcmp)

/* memcpy is memmove here (glibc's old memcpy@GLIBC_2.2.5 is memmove). */
#define MEMMOVE(so, fn) R(20210, so, fn, void *, (void *d, const void *s, SizeT n), \
                          return sm_memmove(d, s, n))
MEMMOVE(HV_LIBC, memcpy)
MEMMOVE(HV_LIBC, __GI_memcpy)
MEMMOVE(HV_LIBC, memmove)
MEMMOVE(HV_LIBC, __GI_memmove)
MEMMOVE(HV_LDSO, memcpy)
RZ(20210, HV_LIBC, memcpyZAGLIBCZu2Zd2Zd5, void *, (void *d, const void *s, SizeT n),
   return sm_memmove(d, s, n))
RZ(20210, HV_LIBC, memcpyZAZAGLIBCZu2Zd14, void *, (void *d, const void *s, SizeT n),
   return sm_memmove(d, s, n))

#define MEMMOVE_CHK(so, fn) R(20220, so, fn, void *, (void *d, const void *s, SizeT n, SizeT dn), \
                              if (dn < n) __chk_fail(); return sm_memmove(d, s, n))
MEMMOVE_CHK(HV_LIBC, __memcpy_chk)
MEMMOVE_CHK(HV_LIBC, __memmove_chk)

#define MEMPCPY(so, fn) R(20230, so, fn, void *, (void *d, const void *s, SizeT n), \
                          return (UChar *)sm_memmove(d, s, n) + n)
MEMPCPY(HV_LIBC, mempcpy)
MEMPCPY(HV_LIBC, __GI_mempcpy)
MEMPCPY(HV_LDSO, mempcpy)

R(20240, HV_LIBC, bcopy, void, (const void *s, void *d, SizeT n), sm_memmove(d, s, n))
R(20250, HV_LIBC, memset, void *, (void *d, Int c, SizeT n), return sm_memset(d, c, n))

#define STRCPY(so, fn) R(20260, so, fn, HChar *, (HChar *d, const HChar *s), \
                         sm_stpcpy(d, s); return d)
STRCPY(HV_LIBC, strcpy)
STRCPY(HV_LIBC, __GI_strcpy)
#define STPCPY(so, fn) R(20270, so, fn, HChar *, (HChar *d, const HChar *s), return sm_stpcpy(d, s))
STPCPY(HV_LIBC, stpcpy)
STPCPY(HV_LIBC, __GI_stpcpy)
STPCPY(HV_LDSO, stpcpy)
R(20280, HV_LIBC, __strcpy_chk, HChar *, (HChar *d, const HChar *s, SizeT dn),
  sm_stpcpy_chk(d, s, dn); return d)
R(20290, HV_LIBC, __stpcpy_chk, HChar *, (HChar *d, const HChar *s, SizeT dn),
  return sm_stpcpy_chk(d, s, dn))

#define STRNCPY(so, fn) R(20300, so, fn, HChar *, (HChar *d, const HChar *s, SizeT n), \
                          sm_stpncpy(d, s, n); return d)
STRNCPY(HV_LIBC, strncpy)
STRNCPY(HV_LIBC, __GI_strncpy)
R(20310, HV_LIBC, stpncpy, HChar *, (HChar *d, const HChar *s, SizeT n), return sm_stpncpy(d, s, n))

#define STRCAT(so, fn) R(20320, so, fn, HChar *, (HChar *d, const HChar *s), \
                         sm_stpcpy(d + sm_strlen(d), s); return d)
STRCAT(HV_LIBC, strcat)
STRCAT(HV_LIBC, __GI_strcat)
R(20330, HV_LIBC, strncat, HChar *, (HChar *d, const HChar *s, SizeT n), return sm_strncat(d, s, n))

R(20340, HV_LIBC, strspn, SizeT, (const HChar *s, const HChar *a), return sm_strspn(s, a))
#define STRCSPN(so, fn) R(20350, so, fn, SizeT, (const HChar *s, const HChar *r), return sm_strcspn(s, r))
STRCSPN(HV_LIBC, strcspn)
STRCSPN(HV_LIBC, __GI_strcspn)
R(20360, HV_LIBC, strpbrk, HChar *, (const HChar *s, const HChar *a), return sm_strpbrk(s, a))
R(20370, HV_LIBC, strstr, HChar *, (const HChar *h, const HChar *n), return sm_strstr(h, n))

R(20380, HV_LIBC, wcslen, SizeT, (const Wch *s), return sm_wcsnlen(s, (SizeT)-1))
#define WCSNLEN(so, fn) R(20390, so, fn, SizeT, (const Wch *s, SizeT m), return sm_wcsnlen(s, m))
WCSNLEN(HV_LIBC, wcsnlen)
WCSNLEN(HV_LIBC, __GI_wcsnlen)
R(20400, HV_LIBC, wcscmp, Int, (const Wch *a, const Wch *b), return sm_wcsncmp(a, b, (SizeT)-1))
R(20410, HV_LIBC, wcsncmp, Int, (const Wch *a, const Wch *b, SizeT n), return sm_wcsncmp(a, b, n))
R(20420, HV_LIBC, wcschr, Wch *, (const Wch *s, Wch c), return sm_wcschr(s, c))
R(20430, HV_LIBC, wcsrchr, Wch *, (const Wch *s, Wch c), return sm_wcsrchr(s, c))
#define WMEMCHR(so, fn) R(20440, so, fn, Wch *, (const Wch *s, Wch c, SizeT n), return sm_wmemchr(s, c, n))
WMEMCHR(HV_LIBC, wmemchr)
WMEMCHR(HV_LIBC, __GI_wmemchr)
R(20450, HV_LIBC, wcscpy, Wch *, (Wch *d, const Wch *s), return sm_wcscpy(d, s))

#define STRCASECMP(so, fn) R(20460, so, fn, Int, (const HChar *a, const HChar *b), \
                             return sm_strncasecmp(a, b, (SizeT)-1, NULL, False))
STRCASECMP(HV_LIBC, strcasecmp)
STRCASECMP(HV_LIBC, __GI_strcasecmp)
#define STRNCASECMP(so, fn) R(20470, so, fn, Int, (const HChar *a, const HChar *b, SizeT n), \
                              return sm_strncasecmp(a, b, n, NULL, False))
STRNCASECMP(HV_LIBC, strncasecmp)
STRNCASECMP(HV_LIBC, __GI_strncasecmp)
#define STRCASECMP_L(so, fn) R(20480, so, fn, Int, (const HChar *a, const HChar *b, void *l), \
                               return sm_strncasecmp(a, b, (SizeT)-1, l, True))
STRCASECMP_L(HV_LIBC, strcasecmp_l)
STRCASECMP_L(HV_LIBC, __GI_strcasecmp_l)
STRCASECMP_L(HV_LIBC, __GI___strcasecmp_l)
#define STRNCASECMP_L(so, fn) R(20490, so, fn, Int, (const HChar *a, const HChar *b, SizeT n, void *l), \
                                return sm_strncasecmp(a, b, n, l, True))
STRNCASECMP_L(HV_LIBC, strncasecmp_l)
STRNCASECMP_L(HV_LIBC, __GI_strncasecmp_l)
STRNCASECMP_L(HV_LIBC, __GI___strncasecmp_l)
