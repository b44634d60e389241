/* heaptape tests -- dlopen/dlclose of a library that allocates (path in argv[1]). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
  if (argc < 2) return 2;
  for (int round = 0; round < 3; round++) {
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    void *(*alloc)(size_t) = (void *(*)(size_t))dlsym(h, "dl_alloc");
    void (*release)(void *) = (void (*)(void *))dlsym(h, "dl_release");
    for (int i = 0; i < 100; i++) release(alloc(8888));
    struct timespec ts = { 0, 250000000 };  /* let the writer notice the load */
    nanosleep(&ts, NULL);
    dlclose(h);
    nanosleep(&ts, NULL);
  }
  printf("dl done\n");
  return 0;
}
