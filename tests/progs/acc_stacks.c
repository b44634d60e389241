/* heaptape test program -- allocation stacks that a reuse of the last walk's
** outer frames could get wrong (record --access, tests/integration/
** access_stacks.sh runs it with the tool's --stack-check=yes, which walks
** every reused stack whole too and counts those that differ):
** - the same 14 frames at the same stack addresses under two callers
**   (only the return address into the caller differs);
** - recursion of alternating depths, one deeper than the 64 frames kept;
** - a longjmp out of a recursion, then allocations from shallower frames;
** - a coroutine on a stack that is a heap block (swapcontext), allocating
**   there and back on the thread's own stack;
** - a signal handler that allocates (raise: synchronous, outside malloc);
** - a second thread allocating beside the first. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <ucontext.h>

static void *volatile sink;
static jmp_buf jump;

__attribute__((noinline)) static void leaf(size_t n) { sink = malloc(n); free(sink); }
__attribute__((noinline)) static void mid(size_t n) { leaf(n); __asm__ volatile("" ::: "memory"); }
/* 12 frames, the same from any caller at the same stack depth. */
__attribute__((noinline)) static void chain(int depth, size_t n)
{
  if (depth == 0) { mid(n); return; }
  chain(depth - 1, n);
  __asm__ volatile("" ::: "memory");
}
/* Two callers with the same frame: the frames inside them are at the same
** addresses from both; only the return address into via_a or via_b differs. */
__attribute__((noinline)) static void via_a(size_t n) { volatile char pad[32]; pad[0] = 1; chain(12, n); }
__attribute__((noinline)) static void via_b(size_t n) { volatile char pad[32]; pad[0] = 2; chain(12, n); }

__attribute__((noinline)) static void recurse(int depth, size_t n)
{
  if (depth == 0) { leaf(n); return; }
  recurse(depth - 1, n);
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void recurse_jump(int depth)
{
  if (depth == 0) { leaf(24); longjmp(jump, 1); }
  recurse_jump(depth - 1);
  __asm__ volatile("" ::: "memory");
}

static ucontext_t main_ctx, co_ctx;

static void coroutine(void)
{
  for (int i = 0; i < 50; i++) {
    mid(40);
    swapcontext(&co_ctx, &main_ctx);
  }
}

static void on_signal(int sig) { (void)sig; mid(56); }

static void *thread_main(void *arg)
{
  (void)arg;
  for (int i = 0; i < 300; i++) {
    if (i & 1) via_a(72); else recurse(i % 7, 72);
  }
  return NULL;
}

int main(void)
{
  for (int i = 0; i < 500; i++) {
    if (i % 3 == 0) via_a(8);
    else if (i % 3 == 1) via_b(8);
    else mid(8);
  }
  for (int i = 0; i < 200; i++) recurse(i % 2 ? 3 : 90, 16);  /* 90: past 64 frames */
  for (int i = 0; i < 100; i++) recurse(i % 11, 32);
  for (int i = 0; i < 20; i++) {
    if (!setjmp(jump)) recurse_jump(5 + i % 4);
    leaf(24);
    via_b(24);
  }
  size_t size = 256 * 1024;
  char *stack = malloc(size);
  if (!stack || getcontext(&co_ctx)) return 1;
  co_ctx.uc_stack.ss_sp = stack;
  co_ctx.uc_stack.ss_size = size;
  co_ctx.uc_link = &main_ctx;
  makecontext(&co_ctx, coroutine, 0);
  for (int i = 0; i < 50; i++) {
    swapcontext(&main_ctx, &co_ctx);
    via_a(48);
  }
  signal(SIGUSR1, on_signal);
  for (int i = 0; i < 20; i++) {
    raise(SIGUSR1);
    mid(56);
  }
  pthread_t t;
  if (pthread_create(&t, NULL, thread_main, NULL)) return 1;
  for (int i = 0; i < 300; i++) via_b(80);
  pthread_join(t, NULL);
  free(stack);
  return 0;
}
