// heaptape tests -- C++: every operator new/delete form, exceptions thrown and
// caught across allocating frames, bad_alloc, and four threads of containers.
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

struct alignas(128) Wide { char b[200]; };

static int thrower(int depth)
{
  std::vector<std::string> v(depth, std::string(40, 'x'));
  if (depth == 0) throw std::runtime_error("bottom reached with a long message");
  return thrower(depth - 1) + (int)v.size();
}

int main()
{
  int caught = 0;
  for (int i = 0; i < 100; i++) {
    try { thrower(5); } catch (const std::exception &e) { caught++; }
  }
  try {
    volatile size_t huge = (size_t)1 << 62;
    char *p = new char[huge];
    p[0] = 1;
  } catch (const std::bad_alloc &) { caught++; }
  int *a = new int(1); delete a;
  int *b = new int[10]; delete[] b;
  Wide *w = new Wide; delete w;
  Wide *wa = new Wide[3]; delete[] wa;
  int *n = new (std::nothrow) int; delete n;
  char *nt = new (std::nothrow) char[(size_t)1 << 62];
  std::mutex m;
  std::map<int, std::string> shared;
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; t++)
    ts.emplace_back([t, &m, &shared] {
      for (int i = 0; i < 20000; i++) {
        auto s = std::make_unique<std::string>(std::to_string(i * (t + 1)) + "-payload-payload");
        std::lock_guard<std::mutex> g(m);
        shared[(i * 7 + t) % 500] = *s;
      }
    });
  for (auto &t : ts) t.join();
  size_t total = 0;
  for (auto &kv : shared) total += kv.second.size();
  std::printf("caught %d nothrow-null %d entries %zu chars %zu\n", caught, nt == nullptr,
              shared.size(), total);
  return 0;
}
