/* heaptape -- runs a fuzz target over corpus files (the normal test suite
** does this under ASan and UBSan); ends with "N passed, N failed". */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int passed;

/* Run the target on one file (a crash ends the process: that is the failure). */
static void run_file(const char *path)
{
  FILE *f = fopen(path, "rb");
  if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(1); }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
  if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) { fprintf(stderr, "short read %s\n", path); exit(1); }
  fclose(f);
  LLVMFuzzerTestOneInput(buf, (size_t)(n > 0 ? n : 0));
  free(buf);
  passed++;
}

/* Run a file, or every file of a directory. */
static void run_path(const char *path)
{
  struct stat sb;
  if (stat(path, &sb)) { fprintf(stderr, "cannot stat %s\n", path); exit(1); }
  if (!S_ISDIR(sb.st_mode)) { run_file(path); return; }
  DIR *d = opendir(path);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char sub[4096];
    snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
    run_path(sub);
  }
  if (d) closedir(d);
}

int main(int argc, char **argv)
{
  for (int i = 1; i < argc; i++) run_path(argv[i]);
  printf("%d passed, 0 failed\n", passed);
  return 0;
}
