/* heaptape -- the tools' one way to print a message line on stderr.
** Tools only (stdio): not part of libheaptape.so. */
#ifndef HT_MSG_H
#define HT_MSG_H

#include <stdarg.h>
#include "ht_def.h"

/* Print "heaptape: <fmt>" and a newline on stderr. */
void ht_msg(const char *fmt, ...) HT_HIDDEN __attribute__((format(printf, 1, 2)));
/* The same with a va_list. */
void ht_vmsg(const char *fmt, va_list ap) HT_HIDDEN;

#endif
