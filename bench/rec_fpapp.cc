/* heaptape bench -- a C++ workload built with frame pointers (bench_record.sh):
** a word index over generated text, a priority queue of jobs, string churn. */
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

struct Job {
  int prio;                    /* ordering key */
  std::string name;            /* heap-allocated label */
  std::vector<int> data;       /* payload */
  bool operator<(const Job &o) const { return prio < o.prio; }
};

/* Next value of a fixed-seed LCG. */
static unsigned lcg(unsigned &s) { return s = s * 1103515245u + 12345u; }

/* A pseudo-random word of 3..12 letters. */
static std::string word(unsigned &s)
{
  std::string w;
  int n = 3 + (int)(lcg(s) >> 16) % 10;
  for (int i = 0; i < n; i++) w.push_back((char)('a' + (lcg(s) >> 16) % 26));
  return w;
}

/* Index words by their first two letters and count them. */
__attribute__((noinline)) static size_t index_text(unsigned &s, int words)
{
  std::map<std::string, std::unordered_map<std::string, int>> idx;
  for (int i = 0; i < words; i++) {
    std::string w = word(s);
    idx[w.substr(0, 2)][w]++;
  }
  size_t n = 0;
  for (auto &kv : idx) n += kv.second.size();
  return n;
}

/* Push and pop jobs with payloads through a priority queue. */
__attribute__((noinline)) static long run_jobs(unsigned &s, int jobs)
{
  std::priority_queue<Job> q;
  long sum = 0;
  for (int i = 0; i < jobs; i++) {
    Job j{(int)(lcg(s) >> 8), word(s), std::vector<int>((lcg(s) >> 20) % 64 + 1, i)};
    q.push(std::move(j));
    if (q.size() > 1000) { sum += q.top().data.size(); q.pop(); }
  }
  return sum + (long)q.size();
}

/* Build and drop trees of shared objects. */
__attribute__((noinline)) static long trees(unsigned &s, int rounds)
{
  struct Node { std::shared_ptr<Node> l, r; std::string tag; };
  long n = 0;
  for (int k = 0; k < rounds; k++) {
    std::vector<std::shared_ptr<Node>> v;
    for (int i = 0; i < 2000; i++) {
      auto x = std::make_shared<Node>();
      x->tag = word(s);
      if (!v.empty()) x->l = v[(lcg(s) >> 16) % v.size()];
      v.push_back(x);
    }
    n += (long)v.size();
  }
  return n;
}

int main(int argc, char **argv)
{
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  unsigned s = 42;
  size_t a = index_text(s, 300000 * scale);
  long b = run_jobs(s, 300000 * scale);
  long c = trees(s, 150 * scale);
  printf("%zu %ld %ld\n", a, b, c);
  return 0;
}
