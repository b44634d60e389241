/* heaptape bench -- the VM's own cost of internal event hooks (bench_ruby.sh):
** `ruby -rhookfloor` with HOOKFLOOR=gc enables empty GC_START, GC_END_MARK,
** GC_END_SWEEP, GC_ENTER and GC_EXIT hooks (what the sampled extension has on
** near sample points, always on), HOOKFLOOR=obj empty NEWOBJ and FREEOBJ
** hooks (what a hook on every object costs). Built by bench_ruby.sh against Debian's ruby-dev. */
#include <stdlib.h>
#include <string.h>

#include <ruby.h>
#include <ruby/debug.h>

/* The hook: does nothing. */
static void hf_event(VALUE tpval, void *data) { (void)tpval; (void)data; }

void Init_hookfloor(void)
{
  const char *m = getenv("HOOKFLOOR");
  rb_event_flag_t f = 0;
  if (m && !strcmp(m, "gc"))
    f = RUBY_INTERNAL_EVENT_GC_START | RUBY_INTERNAL_EVENT_GC_END_MARK | RUBY_INTERNAL_EVENT_GC_END_SWEEP |
        RUBY_INTERNAL_EVENT_GC_ENTER | RUBY_INTERNAL_EVENT_GC_EXIT;
  else if (m && !strcmp(m, "obj"))
    f = RUBY_INTERNAL_EVENT_NEWOBJ | RUBY_INTERNAL_EVENT_FREEOBJ;
  if (!f) return;
  VALUE tp = rb_tracepoint_new(0, f, hf_event, NULL);
  rb_gc_register_mark_object(tp);
  rb_tracepoint_enable(tp);
}
