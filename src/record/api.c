/* heaptape -- the public API (include/heaptape.h) over the recorder:
** embedded start/stop with a writer callback, marks, pools, runtime events. */
#include <string.h>
#include <unistd.h>

#include "tape.h"
#include "../../include/heaptape.h"

/* The caller's options as this library's struct: the first user->size
** bytes, zeroes for fields newer than the caller. 0, or -1 if unusable. */
static int api_options(const struct heaptape_options *user, struct heaptape_options *o)
{
  if (!user || user->size < HEAPTAPE_OPTIONS_SIZE_V1) return -1;
  memset(o, 0, sizeof(*o));
  memcpy(o, user, user->size < sizeof(*o) ? user->size : sizeof(*o));
  return 0;
}

/* Start recording through the caller's writer. */
HT_API int heaptape_start(const struct heaptape_options *user)
{
  struct heaptape_options o;
  if (api_options(user, &o)) return HEAPTAPE_E_MISUSE;
  const struct heaptape_options *opt = &o;
  if (!opt->writer || opt->frames < 0 || opt->frames > HT_MAXFRAMES ||
      opt->unwind < 0 || opt->unwind > HEAPTAPE_UNWIND_NONE ||
      opt->loc_kinds >> (HEAPTAPE_LOC_RUBY + 1))
    return HEAPTAPE_E_MISUSE;
  HtTapeInfo info = { 0 };
  /* Python and Ruby locations are version 6's (docs/FORMAT.md). */
  if (opt->loc_kinds >> HEAPTAPE_LOC_PYTHON) info.version = HT_VERSION_RTLOC;
  static const int unw[] = { HT_UNWIND_LIBUNWIND, HT_UNWIND_LIBUNWIND, HT_UNWIND_FP,
                             HT_UNWIND_NONE };
  info.unwind = (uint32_t)(opt->unwind == HEAPTAPE_UNWIND_DEFAULT ? ht_opt.unwind
                                                                  : unw[opt->unwind]);
  /* 0 frames, 0 sample_bytes: the recorder's configuration (HEAPTAPE_FRAMES,
  ** HEAPTAPE_SAMPLE, else the defaults of src/base/options.h: 64, all). */
  info.frames = (uint32_t)(opt->frames ? (uint64_t)opt->frames : ht_opt.frames);
  info.sample = opt->sample_bytes ? opt->sample_bytes : ht_opt.sample;
  info.frontend = opt->frontend ? opt->frontend : "native";
  static char exe[1024];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  exe[n > 0 ? n : 0] = 0;
  info.exe = exe;
  return ht_tape_start(opt->writer, opt->arg, opt->on_stop, &info, opt->native != 0,
                       HT_TAPE_SINK);
}

/* Stop recording: drain, dictionary, trailer, on_stop. */
HT_API int heaptape_stop(void) { return ht_tape_stop(UINT64_MAX, 0); }

/* 1 while recording. */
HT_API int heaptape_is_running(void) { return atomic_load(&ht_g.running); }

/* Frames per stack of the running recording, 0 when not recording. */
HT_API int heaptape_frames(void) { return atomic_load(&ht_g.running) ? ht_g.frames : 0; }

/* The recording's sampling interval in bytes (0: every allocation). */
HT_API uint64_t heaptape_sample_bytes(void) { return atomic_load(&ht_g.running) ? ht_g.sample : 0; }

/* A labelled mark. */
HT_API int heaptape_mark(const char *label)
{
  if (!atomic_load(&ht_g.running)) return HEAPTAPE_E_NOTRUNNING;
  return ht_record_event_string(HT_R_MARK, label ? label : "");
}

/* Name the calling thread. */
HT_API int heaptape_thread_name(const char *name)
{
  if (!atomic_load(&ht_g.running)) return HEAPTAPE_E_NOTRUNNING;
  return ht_record_event_string(HT_R_THREAD, name ? name : "");
}

/* A pool handed out a block: native stack, kind malloc. */
HT_API int heaptape_pool_alloc(const void *ptr, size_t size)
{
  return ptr ? ht_record_event_alloc(ptr, size, HT_K_MALLOC, NULL, 0) : HEAPTAPE_E_MISUSE;
}

/* A pool takes a block back. */
HT_API int heaptape_pool_free(const void *ptr)
{
  return ht_record_event_free(ptr, HT_K_MALLOC);
}

/* Declare a runtime location (written in the dictionary at stop). */
HT_API int heaptape_loc_declare(heaptape_loc_t id, int kind, const char *name,
                                const char *file, uint32_t line, uint64_t aux)
{
  if (kind < HEAPTAPE_LOC_INTERNAL || kind > HEAPTAPE_LOC_RUBY) return HEAPTAPE_E_MISUSE;
  return ht_tape_loc(id, kind, name, file, line, aux);
}

#define RT_KIND (HT_K_RUNTIME | HT_K_DOMAIN_RT)

/* Runtime allocation with the runtime's own stack (locs outermost first). */
HT_API int heaptape_rt_alloc(const heaptape_loc_t *locs, size_t depth,
                             const void *ptr, size_t size)
{
  if (!ptr || (depth && !locs)) return HEAPTAPE_E_MISUSE;
  uint64_t v[HT_MAXFRAMES];
  if (depth > HT_MAXFRAMES) { locs += depth - HT_MAXFRAMES; depth = HT_MAXFRAMES; }
  for (size_t i = 0; i < depth; i++) v[i] = locs[i] << 1 | 1;
  return ht_record_event_alloc(ptr, size, RT_KIND, v, depth);
}

/* Runtime free. On a sampled recording most blocks were never recorded:
** the sampler's filter (one byte load) turns them away before the call. */
HT_API int heaptape_rt_free(const void *ptr)
{
  if (!ptr || (ht_g.sample && atomic_load_explicit(&ht_g.running, memory_order_relaxed) &&
               !ht_sampler_maybe((uintptr_t)ptr)))
    return HEAPTAPE_OK;
  return ht_record_event_free(ptr, RT_KIND);
}

/* The sampled-address filter for a runtime's inline look (sampled only). */
HT_API const volatile unsigned char *heaptape_rt_filter(int layout)
{
  if (layout != HEAPTAPE_FILTER_LAYOUT || !ht_g.sample || !atomic_load(&ht_g.running))
    return NULL;
  return (const volatile unsigned char *)ht_sampler_filt;
}

/* Runtime realloc: FREE(old) then ALLOC(new), both of the realloc family so
** that readers pair them as one reallocation (memprof REALLOCATIONS). */
HT_API int heaptape_rt_realloc(const heaptape_loc_t *locs, size_t depth,
                               const void *old_ptr, const void *new_ptr, size_t size)
{
  const unsigned k = HT_K_REALLOC | HT_K_DOMAIN_RT;
  if (old_ptr) ht_record_event_free(old_ptr, k);
  if (!new_ptr) return 0;
  if (depth && !locs) return HEAPTAPE_E_MISUSE;
  uint64_t v[HT_MAXFRAMES];
  if (depth > HT_MAXFRAMES) { locs += depth - HT_MAXFRAMES; depth = HT_MAXFRAMES; }
  for (size_t i = 0; i < depth; i++) v[i] = locs[i] << 1 | 1;
  return ht_record_event_alloc(new_ptr, size, k, v, depth);
}

/* The calling thread's native stack, innermost first. */
HT_API int heaptape_native_stack(uintptr_t *ips, int max)
{
  if (!ips || max <= 0) return 0;
  return ht_record_native_stack(ips, max);
}

/* Runtime allocation with a stack of frame values (outermost first). */
HT_API int heaptape_rt_alloc_frames(const uint64_t *frames, size_t depth,
                                    const void *ptr, size_t size)
{
  if (!ptr || (depth && !frames)) return HEAPTAPE_E_MISUSE;
  if (depth > HT_MAXFRAMES) { frames += depth - HT_MAXFRAMES; depth = HT_MAXFRAMES; }
  return ht_record_event_alloc(ptr, size, RT_KIND, frames, depth);
}

/* Runtime realloc with a stack of frame values (see heaptape_rt_realloc). */
HT_API int heaptape_rt_realloc_frames(const uint64_t *frames, size_t depth,
                                      const void *old_ptr, const void *new_ptr, size_t size)
{
  const unsigned k = HT_K_REALLOC | HT_K_DOMAIN_RT;
  if (old_ptr) ht_record_event_free(old_ptr, k);
  if (!new_ptr) return 0;
  if (depth && !frames) return HEAPTAPE_E_MISUSE;
  if (depth > HT_MAXFRAMES) { frames += depth - HT_MAXFRAMES; depth = HT_MAXFRAMES; }
  return ht_record_event_alloc(new_ptr, size, k, frames, depth);
}

/* Whether a runtime allocation of size bytes is to be reported (sampling). */
HT_API int heaptape_rt_due(size_t size)
{
  return ht_record_event_due(size);
}

/* A sampler gap for a runtime that finds its own sample points. */
HT_API uint64_t heaptape_rt_gap(void)
{
  return ht_record_event_gap();
}

/* The next runtime allocation of the calling thread is a sample point. */
HT_API int heaptape_rt_take(uint64_t weight)
{
  return ht_record_event_take(weight);
}
