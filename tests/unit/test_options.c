/* heaptape -- unit tests of what the recorder and `heaptape record` share:
** the value parsers, the options table and the tape name template. */
#include <string.h>

#include "testhelper.h"
#include "base/options.h"
#include "base/parse.h"
#include "base/tapename.h"

/* Sizes: K/M/G in powers of 1024, with or without i and B; nothing else. */
static void parse_sizes(void)
{
  uint64_t v = 0;
  CHECK(!ht_parse_size("0", &v) && v == 0);
  CHECK(!ht_parse_size("512K", &v) && v == 512 << 10);
  CHECK(!ht_parse_size("1KiB", &v) && v == 1024);
  CHECK(!ht_parse_size("1kib", &v) && v == 1024);
  CHECK(!ht_parse_size("64MB", &v) && v == 64ull << 20);
  CHECK(!ht_parse_size("2g", &v) && v == 2ull << 30);
  const char *bad[] = { "", "K", "-1", " 1", "1X", "1KiBB", "1B", "1.5M", "99999999999999999999",
                        "17179869184G" };
  for (size_t i = 0; i < HT_COUNTOF(bad); i++) CHECK(ht_parse_size(bad[i], &v) == -1);
}

/* Counts, yes/no and seconds. */
static void parse_others(void)
{
  uint64_t v = 0;
  int b = -1;
  CHECK(!ht_parse_uint("18446744073709551615", &v) && v == UINT64_MAX);
  CHECK(ht_parse_uint("18446744073709551616", &v) == -1);
  CHECK(ht_parse_uint("1K", &v) == -1 && ht_parse_uint("+1", &v) == -1);
  CHECK(!ht_parse_bool("YES", &b) && b == 1 && !ht_parse_bool("off", &b) && b == 0);
  CHECK(ht_parse_bool("2", &b) == -1);
  CHECK(!ht_parse_seconds("0.25", &v) && v == 250000000);
  CHECK(!ht_parse_seconds("3", &v) && v == 3000000000ull);
  CHECK(ht_parse_seconds("-1", &v) == -1 && ht_parse_seconds("1s", &v) == -1);
}

/* The table: names, defaults, ranges and choices as documented. */
static void table_values(void)
{
  const HtOptDef *d = &ht_options[HT_OPTION_SAMPLE];
  uint64_t v = 0;
  CHECK(!strcmp(d->env, "HEAPTAPE_SAMPLE") && !strcmp(d->flag, "sample"));
  CHECK(!ht_option_parse(d, "1KiB", &v) && v == 1024);
  d = &ht_options[HT_OPTION_FRAMES];
  CHECK(ht_option_parse(d, "0", &v) == -1 && ht_option_parse(d, "257", &v) == -1);
  CHECK(!ht_option_parse(d, "256", &v) && v == 256);
  d = &ht_options[HT_OPTION_UNWIND];
  CHECK(!ht_option_parse(d, "fp", &v) && v == 2);
  CHECK(!ht_option_parse(d, "none", &v) && v == 0);
  CHECK(!ht_option_parse(d, "libunwind", &v) && v == 1);
  CHECK(ht_option_parse(d, "lib", &v) == -1 && ht_option_parse(d, "dwarf", &v) == -1);
  CHECK(!ht_option_parse(&ht_options[HT_OPTION_NO_MEMBARRIER], "yes", &v) && v == 1);
  CHECK(ht_options[HT_OPTION_NO_MEMBARRIER].flag == NULL);
  HtOptions o;
  memset(&o, 0xff, sizeof(o));
  ht_options_defaults(&o);
  CHECK(o.output[0] == 0 && o.sample == 0 && o.unwind == 1 && o.frames == HT_DEFAULT_FRAMES);
  CHECK(o.seed == 1 && o.zstd == HT_DEFAULT_ZSTD && o.follow_fork == 0 && o.no_membarrier == 0);
  ht_option_store(&ht_options[HT_OPTION_OUTPUT], &o, 0, "x.%p.tape");
  CHECK(!strcmp(o.output, "x.%p.tape"));
}

/* Tape names: the default, %p and %e, what the template named. */
static void tape_names(void)
{
  char b[256];
  int hp = -1, he = -1;
  CHECK_EQ(ht_tapename(b, sizeof(b), NULL, "sqlite3", "42", &hp, &he), 24);
  CHECK(!strcmp(b, "heaptape.sqlite3.42.tape") && hp == 1 && he == 1);
  ht_tapename(b, sizeof(b), "out/%e-%p%%.tape", "a", "7", &hp, &he);
  CHECK(!strcmp(b, "out/a-7%%.tape"));
  ht_tapename(b, sizeof(b), "plain.tape", "a", "7", &hp, &he);
  CHECK(!strcmp(b, "plain.tape") && hp == 0 && he == 0);
  char small[70];
  memset(small, 0, sizeof(small));
  ht_tapename(small, sizeof(small), "abcdefghijklmnopqrstuvwxyz", "a", "7", NULL, NULL);
  CHECK_EQ(strlen(small), 6);                 /* cap - 64: room left for suffixes */
}

int main(void)
{
  TEST(parse_sizes);
  TEST(parse_others);
  TEST(table_values);
  TEST(tape_names);
  return th_summary();
}
