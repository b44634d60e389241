/* heaptape tests -- 800 marks of 3000 bytes among allocations: 2.4 MB of
** strings in fewer events than a sealed block holds, so the sealer must end
** blocks early (version 7: a block's columns stay within a packet). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
  int (*mark)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "heaptape_mark");
  static char label[3001];
  void *keep[800];
  for (int i = 0; i < 800; i++) {
    memset(label, 'a' + i % 26, 3000);
    snprintf(label, 16, "mark %03d ", i);
    label[strlen(label)] = ' ';
    if (mark) mark(label);
    keep[i] = malloc(16 + (size_t)i);
    if (i % 2) { free(keep[i - 1]); keep[i - 1] = NULL; }
  }
  for (int i = 0; i < 800; i++) free(keep[i]);
  printf("%s\n", mark ? "marked" : "no heaptape");
  return 0;
}
