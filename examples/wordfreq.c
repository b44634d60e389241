/* heaptape example: counts word frequencies of generated text with a chained
** hash table that grows by realloc, keeps some buffers, and leaks one list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Word { char *text; int count; struct Word *next; } Word;

static Word **table;
static size_t nbuckets = 64, nwords;

/* FNV-1a hash of a string. */
static size_t hash(const char *s)
{
  size_t h = 1469598103934665603ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

/* Double the bucket array and rehash every word. */
static void grow(void)
{
  size_t n = nbuckets * 2;
  Word **t = calloc(n, sizeof(*t));
  for (size_t i = 0; i < nbuckets; i++)
    for (Word *w = table[i], *next; w; w = next) {
      next = w->next;
      size_t b = hash(w->text) % n;
      w->next = t[b];
      t[b] = w;
    }
  free(table);
  table = t;
  nbuckets = n;
}

/* Count one word, copying it on first sight. */
static void count(const char *text)
{
  size_t b = hash(text) % nbuckets;
  for (Word *w = table[b]; w; w = w->next)
    if (!strcmp(w->text, text)) { w->count++; return; }
  Word *w = malloc(sizeof(*w));
  w->text = strdup(text);
  w->count = 1;
  w->next = table[b];
  table[b] = w;
  if (++nwords > nbuckets * 2) grow();
}

/* A pseudo-random word from a small vocabulary (Zipf-like). */
static void make_word(char *buf, unsigned *seed)
{
  *seed = *seed * 1103515245 + 12345;
  unsigned r = (*seed >> 8) % 5000, len = 2 + r % 9;
  for (unsigned i = 0; i < len; i++) buf[i] = (char)('a' + (r * (i + 7)) % 26);
  buf[len] = 0;
}

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 200000;
  table = calloc(nbuckets, sizeof(*table));
  unsigned seed = 42;
  char *line = NULL;
  size_t cap = 0, len = 0;
  for (int i = 0; i < n; i++) {
    char word[16];
    make_word(word, &seed);
    char *tmp = malloc(strlen(word) + 1); /* a temporary copy, freed at once */
    strcpy(tmp, word);
    count(tmp);
    free(tmp);
    size_t wl = strlen(word);
    if (len + wl + 2 > cap) { cap = cap ? cap * 2 : 256; line = realloc(line, cap); }
    memcpy(line + len, word, wl);
    len += wl;
    line[len++] = ' ';
    if (len > 4000) len = 0; /* the line buffer is reused, never shrunk */
  }
  Word *best = NULL;
  for (size_t i = 0; i < nbuckets; i++)
    for (Word *w = table[i]; w; w = w->next)
      if (!best || w->count > best->count) best = w;
  printf("%zu distinct words; most frequent '%s' (%d times)\n", nwords, best->text, best->count);
  free(line);
  /* The table itself is freed, but the words are leaked on purpose. */
  free(table);
  return 0;
}
