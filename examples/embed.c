/* heaptape example -- a program that embeds the recorder: a small arena
** allocator reports the blocks it carves out and takes back, and the
** program records them onto a tape of its own.
**
**   cc embed.c $(pkg-config --cflags --libs heaptape) -o embed
**   ./embed pool.tape && heaptape report pool.tape
**
** It also prints what each call returns outside a recording (see "Not
** recording" in heaptape.h); the install test checks those lines. */
#define _POSIX_C_SOURCE 200809L  /* O_CLOEXEC */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <heaptape.h>

#define ARENA 65536

static _Alignas(16) unsigned char arena[ARENA];  /* the pool's memory */
static size_t used;                               /* bump pointer */

/* Carve n bytes out of the arena and report the block. */
static void *pool_get(size_t n)
{
  n = (n + 15) & ~(size_t)15;
  if (used + n > ARENA) return NULL;
  void *p = arena + used;
  used += n;
  heaptape_pool_alloc(p, n);
  return p;
}

/* Report that the pool takes p back (this toy pool never reuses it). */
static void pool_put(void *p) { heaptape_pool_free(p); }

/* A named call chain, so that the tape has a site to show. */
__attribute__((noinline)) static void *make_node(size_t n) { return pool_get(n); }

/* on_stop: close the tape's descriptor. */
static int close_tape(void *arg) { return close((int)(intptr_t)arg); }

int main(int argc, char **argv)
{
  if (argc != 2) { fprintf(stderr, "usage: embed TAPE\n"); return 2; }
  /* Outside a recording: event calls are no-ops, requests say NOTRUNNING. */
  printf("idle: mark %s, pool_alloc %s, pool_alloc(NULL) %s, loc_declare %s\n",
         heaptape_strerror(heaptape_mark("x")), heaptape_strerror(heaptape_pool_alloc(arena, 1)),
         heaptape_strerror(heaptape_pool_alloc(NULL, 1)),
         heaptape_strerror(heaptape_loc_declare(1, HEAPTAPE_LOC_OTHER, "f", NULL, 0, 0)));
  struct heaptape_options bad = { 0 };      /* size not set */
  printf("start without size: %s\n", heaptape_strerror(heaptape_start(&bad)));

  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) { perror(argv[1]); return 1; }
  struct heaptape_options o = HEAPTAPE_OPTIONS_INIT;
  o.writer = heaptape_fd_writer;
  o.on_stop = close_tape;
  o.arg = (void *)(intptr_t)fd;
  o.frontend = "embed-example";
  int rc = heaptape_start(&o);
  if (rc) { fprintf(stderr, "embed: %s\n", heaptape_strerror(rc)); return 1; }
  heaptape_thread_name("main");
  void *keep[100];
  for (int i = 0; i < 100; i++) keep[i] = make_node(64);
  heaptape_mark("built");
  for (int i = 0; i < 100; i += 2) pool_put(keep[i]);   /* half go back */
  rc = heaptape_stop();
  printf("recorded: %s; stop again: %s\n", heaptape_strerror(rc),
         heaptape_strerror(heaptape_stop()));
  return rc ? 1 : 0;
}
