// heaptape tests -- C++ sites merged by location: three callers reach one
// allocating line (three stacks, one row), and std::vector / std::string
// growth, whose allocator frames (std::, libstdc++) the report looks past.
#include <cstdio>
#include <string>
#include <vector>

#define NOINLINE __attribute__((noinline))

static char *volatile keep[64];  // defeats dead-store elimination

// The one allocating line that three stacks reach: 1000 bytes, kept.
NOINLINE static char *make_buf(int i)
{
  return keep[i] = new char[1000];
}

// Caller one: two buffers.
NOINLINE static void caller_a(void) { make_buf(0); make_buf(1); }
// Caller two: three buffers.
NOINLINE static void caller_b(void) { for (int i = 2; i < 5; i++) make_buf(i); }
// Caller three: one buffer.
NOINLINE static void caller_c(void) { make_buf(5); }

// A vector of ints grown by push_back from empty to 1000 elements.
NOINLINE static size_t grow_vector(void)
{
  std::vector<int> v;
  for (int i = 0; i < 1000; i++) v.push_back(i);
  return v.size();
}

// A string grown by appending until it is 10000 characters long.
NOINLINE static size_t grow_string(void)
{
  std::string s;
  for (int i = 0; i < 1000; i++) s += "0123456789";
  return s.size();
}

int main()
{
  caller_a();
  caller_b();
  caller_c();
  size_t n = grow_vector() + grow_string();
  std::printf("%zu\n", n);
  return 0;
}
