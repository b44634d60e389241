/* heaptape -- `heaptape record --ruby` (cli/record_ruby.c): the environment
** that makes ruby start the heaptape extension before the script. */
#ifndef HT_RECORD_RUBY_H
#define HT_RECORD_RUBY_H

#include <stdint.h>

/* In the child, before exec: RUBYLIB and RUBYOPT (keeping the user's in
** HEAPTAPE_RUBYLIB / HEAPTAPE_RUBYOPT), the tape; native 0 also takes
** libheaptape out of LD_PRELOAD; snap_ns (--pprof-every, 0 = off) is how
** often the extension brings object sizes up to date. 0 on success. */
int ht_record_ruby_env(const char *tape, int native, uint64_t snap_ns);

#endif
