/* heaptape -- a tiny unit-test helper: CHECK, TEST, and a closing summary.
** Every test binary ends with the line "N passed, N failed". */
#ifndef HT_TESTHELPER_H
#define HT_TESTHELPER_H

#include <stdio.h>
#include <stdlib.h>

static int th_passed, th_failed, th_cur_failed;
static const char *th_name;

/* Record a failed check in the current test without stopping it. */
#define CHECK(cond) do { if (!(cond)) { \
  fprintf(stderr, "  FAIL %s: %s:%d: %s\n", th_name, __FILE__, __LINE__, #cond); \
  th_cur_failed = 1; } } while (0)
#define CHECK_EQ(a, b) do { long long _a = (long long)(a), _b = (long long)(b); \
  if (_a != _b) { fprintf(stderr, "  FAIL %s: %s:%d: %s == %s (%lld != %lld)\n", \
  th_name, __FILE__, __LINE__, #a, #b, _a, _b); th_cur_failed = 1; } } while (0)

/* Run one test function and count it. */
#define TEST(fn) do { th_name = #fn; th_cur_failed = 0; fn(); \
  if (th_cur_failed) th_failed++; else th_passed++; \
  printf("%s %s\n", th_cur_failed ? "FAIL" : "ok  ", #fn); } while (0)

/* Print the summary and return the exit status. */
static inline int th_summary(void)
{
  printf("%d passed, %d failed\n", th_passed, th_failed);
  return th_failed ? 1 : 0;
}

#endif
