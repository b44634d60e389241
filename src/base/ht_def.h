/* heaptape -- common definitions shared by every layer.
** Visibility, branch hints, asserts; nothing here allocates. */
#ifndef HT_DEF_H
#define HT_DEF_H

#include <stddef.h>
#include <stdint.h>

#define HT_API     __attribute__((visibility("default")))
#define HT_HIDDEN  __attribute__((visibility("hidden")))
#define HT_NOINLINE __attribute__((noinline))
#define HT_INLINE  static inline __attribute__((always_inline))
#define HT_LIKELY(x)   __builtin_expect(!!(x), 1)
#define HT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HT_UNUSED  __attribute__((unused))
#define HT_COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

/* Three assert levels selected by HT_DEBUG (0 none, 1 cheap, 2 internal, 3 expensive). */
#ifndef HT_DEBUG
#define HT_DEBUG 0
#endif
void ht_assert_fail(const char *expr, const char *file, int line) HT_HIDDEN;
#if HT_DEBUG >= 1
#define ht_assert(x) ((x) ? (void)0 : ht_assert_fail(#x, __FILE__, __LINE__))
#else
#define ht_assert(x) ((void)0)
#endif
#if HT_DEBUG >= 2
#define ht_assert_internal(x) ht_assert(x)
#else
#define ht_assert_internal(x) ((void)0)
#endif
#if HT_DEBUG >= 3
#define ht_assert_expensive(x) ht_assert(x)
#else
#define ht_assert_expensive(x) ((void)0)
#endif

#endif
