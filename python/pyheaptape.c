/* heaptape -- `import heaptape` for CPython 3.11: sessions, the raw, mem and
** object allocator hooks, and the Python API (docs/PYTHON.md). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "ph.h"

PhProf ph = { .lock = ATOMIC_FLAG_INIT };

/* The calling thread's state in the hooks: one TLS block, one address. */
typedef struct PhThread {
  int busy;                /* inside a hook: nested allocations pass through */
  uint32_t session;        /* the session that left belongs to */
  int64_t left;            /* sampled sessions: bytes until the next sample
                              point, counted down here so that an allocation
                              the sampler skips makes no call into
                              libheaptape (the gaps are the recorder's,
                              heaptape_rt_gap) */
} PhThread;
static __thread PhThread ph_t __attribute__((tls_model("initial-exec")));
#define ph_busy (ph_t.busy)

enum { PH_RAW, PH_MEM, PH_OBJ };
static const PyMemAllocatorDomain ph_domain[3] = {
  PYMEM_DOMAIN_RAW, PYMEM_DOMAIN_MEM, PYMEM_DOMAIN_OBJ
};

/* -- The allocator hooks ------------------------------------------------------ */

/*
** Sampled at PH_SPLIT_MIN bytes or more, with pymalloc as the mem and object
** domains' allocator (the default), a session runs split: those two domains
** keep pymalloc's own free. The interpreter's build calls pymalloc's free
** inline when it is the domain's free (any other function costs every
** dealloc an indirect call and pymalloc out of line: half the module's
** overhead). Their frees are still seen for every block the sampler may
** record: such a block is asked of pymalloc as PH_SMALL + 1 bytes at least,
** which pymalloc hands to the raw domain (counting it as its own), and
** pymalloc passes every block outside its arenas to PyMem_RawFree, whose
** hook reports it. Code objects are followed through their type's
** tp_dealloc, in every mode.
*/
#define PH_SMALL 512              /* pymalloc's largest request (3.11's
                                     SMALL_REQUEST_THRESHOLD) */
#define PH_SPLIT_MIN (16u << 10)  /* split from this sampling interval: a
                                     sampled block costs ~PH_SMALL bytes more,
                                     1/32 of the interval at most */

/* The name of the interpreter's allocators ("pymalloc": the defaults);
** exported by 3.11, declared in its internal headers. */
extern const char *_PyMem_GetCurrentAllocatorName(void);

/* Whether a session runs and this thread is not inside a hook already. */
static inline int ph_free_to_hook(void)
{
  return !ph_busy && atomic_load_explicit(&ph.active, memory_order_relaxed);
}

/* The calling thread's state: the raw domain runs without the GIL, so the
** GIL holder is not necessarily this thread. */
static inline PyThreadState *ph_tstate(const PyMemAllocatorEx *o)
{
  return o == &ph.orig[PH_RAW] ? PyGILState_GetThisThreadState()
                               : _PyThreadState_UncheckedGet();
}

/* A pymalloc domain of a split session. */
static inline int ph_split_dom(const PyMemAllocatorEx *o)
{
  return ph.split && o != &ph.orig[PH_RAW];
}

/* Bytes to ask of o for a block of n bytes that may be recorded: out of
** pymalloc's arenas in a pymalloc domain of a split session. */
static inline size_t ph_due_size(const PyMemAllocatorEx *o, size_t n)
{
  return ph_split_dom(o) && n <= PH_SMALL ? PH_SMALL + 1 : n;
}

/* A sample point fell in the calling thread's last n bytes, or its
** countdown belongs to an earlier session: draw (rarely called). */
static __attribute__((noinline)) int ph_due_draw(size_t n)
{
  PhThread *t = &ph_t;
  if (t->session != ph.session) {       /* the thread's first allocation */
    t->session = ph.session;
    t->left = (int64_t)heaptape_rt_gap() - (int64_t)n;
    if (t->left > 0) return 0;
  }
  while (t->left <= 0) {
    int64_t g = (int64_t)heaptape_rt_gap();
    if (g <= 0) { t->left = INT64_MAX; return 0; }   /* the recording stopped */
    t->left += g;
  }
  return heaptape_rt_take(0);            /* its weight is implied by its size */
}

/* Sampled, and the sampler skips an allocation of n bytes (counted down
** here; 0: not sampling, or ph_due_draw decides). */
static inline int ph_skip(size_t n)
{
  PhThread *t = &ph_t;
  return ph.sample && PH_LIKELY(t->session == ph.session) &&
         PH_LIKELY((t->left -= (int64_t)n) > 0);
}

/* After ph_skip's 0: whether the allocation is recorded (every one when not
** sampling; the recorder's Poisson draw by bytes, as heaptape_rt_due's). */
static inline int ph_due_after(size_t n) { return !ph.sample || ph_due_draw(n); }

/* Whether an allocation of n bytes is recorded. */
static inline int ph_due(size_t n) { return !ph_skip(n) && ph_due_after(n); }

/* Record a new block with the calling thread's stack (out of line: the
** hooks' common path keeps no frame buffer). */
static __attribute__((noinline)) void ph_record_alloc(const PyMemAllocatorEx *o, void *p, size_t n)
{
  uint64_t fr[PH_MAXDEPTH + PH_MAXNATIVE];
  int d = ph_stack_where(ph_tstate(o), fr);
  heaptape_rt_alloc_frames(fr, (size_t)d, p, n);
}

/* malloc whose block may be recorded (ph_skip said 0). */
static __attribute__((noinline)) void *ph_malloc_due(PyMemAllocatorEx *o, size_t n)
{
  ph_busy = 1;
  void *p = o->malloc(o->ctx, ph_due_size(o, n));
  if (p && ph_due_after(n)) ph_record_alloc(o, p, n);
  ph_busy = 0;
  return p;
}

/* malloc the sampler skips, busy over the call: an object allocator calling
** the raw one (blocks over PH_SMALL bytes) is one allocation, counted once. */
static __attribute__((noinline)) void *ph_malloc_busy(PyMemAllocatorEx *o, size_t n)
{
  ph_busy = 1;
  void *p = o->malloc(o->ctx, n);
  ph_busy = 0;
  return p;
}

/* malloc of a domain (ctx = its previous allocator). The sampler's decision
** comes first, so that a skipped block keeps nothing across the call. */
static void *ph_malloc(void *ctx, size_t n)
{
  PyMemAllocatorEx *o = ctx;
  if (!ph_free_to_hook()) return o->malloc(o->ctx, n);
  if (!ph_skip(n)) return ph_malloc_due(o, n);
  /* split: pymalloc's small requests and the raw domain call no other hook */
  if (PH_LIKELY(ph.split) && (n <= PH_SMALL || o == &ph.orig[PH_RAW]))
    return o->malloc(o->ctx, n);
  return ph_malloc_busy(o, n);
}

/* malloc of a pymalloc domain in a split session: the common case (no
** other hook below, the sampler skips it) in a few instructions. */
static void *ph_malloc_split(void *ctx, size_t n)
{
  PyMemAllocatorEx *o = ctx;
  PhThread *t = &ph_t;
  if (PH_UNLIKELY(t->busy || t->session != ph.session || n > PH_SMALL))
    return ph_malloc(ctx, n);
  if (PH_UNLIKELY((t->left -= (int64_t)n) <= 0)) return ph_malloc_due(o, n);
  return o->malloc(o->ctx, n);
}

/* calloc of a domain. */
static void *ph_calloc(void *ctx, size_t nelem, size_t elsize)
{
  PyMemAllocatorEx *o = ctx;
  if (!ph_free_to_hook()) return o->calloc(o->ctx, nelem, elsize);
  size_t n = nelem * elsize;
  ph_busy = 1;
  void *p;
  if (ph_skip(n)) {
    p = o->calloc(o->ctx, nelem, elsize);
  } else {
    int out = ph_due_size(o, n) != n && (!elsize || nelem <= SIZE_MAX / elsize);
    p = out ? o->calloc(o->ctx, 1, PH_SMALL + 1) : o->calloc(o->ctx, nelem, elsize);
    if (p && ph_due_after(n)) ph_record_alloc(o, p, n);
  }
  ph_busy = 0;
  return p;
}

/* Report the free of ptr, unless the sampler's filter says it was never
** recorded (an inline look instead of a call: most blocks of a sampled
** recording). */
static inline void ph_report_free(void *ptr)
{
  if (!ph.filt || heaptape_rt_filter_maybe(ph.filt, ptr)) heaptape_rt_free(ptr);
}

/* A realloc whose new block is recorded: the stack is read and the old
** block's free reported before the real call, as the native recorder orders a realloc (the raw
** domain runs without the GIL: once the call returns, another thread may get
** the old address, and its ALLOC must come after this FREE). */
static __attribute__((noinline)) void *ph_record_realloc(const PyMemAllocatorEx *o,
                                                          void *ptr, size_t n)
{
  uint64_t fr[PH_MAXDEPTH + PH_MAXNATIVE];
  int d = ph_stack_where(ph_tstate(o), fr);
  if (ptr) heaptape_rt_realloc_frames(NULL, 0, ptr, NULL, 0);   /* FREE(realloc) */
  void *q = o->realloc(o->ctx, ptr, n);
  /* the new block; on failure the old one is live again (its size unknown here) */
  void *live = q ? q : ptr;
  if (ph_due_size(o, n) != n) {
    /* split: a small block moves out of pymalloc's arenas, where its free
    ** would not be seen (unrecorded if it cannot) */
    void *m = q ? o->malloc(o->ctx, PH_SMALL + 1) : NULL;
    if (m) { memcpy(m, q, n); o->free(o->ctx, q); q = m; }
    live = m;
  }
  if (live) heaptape_rt_realloc_frames(fr, (size_t)d, NULL, live, n);
  return q;
}

/* realloc of a domain: a block the sampler skips only reports the old
** block's free (it may have been sampled). */
static void *ph_realloc(void *ctx, void *ptr, size_t n)
{
  PyMemAllocatorEx *o = ctx;
  if (!ph_free_to_hook()) return o->realloc(o->ctx, ptr, n);
  ph_busy = 1;
  void *q;
  if (ph_due(n)) {
    q = ph_record_realloc(o, ptr, n);
  } else {
    if (ptr) ph_report_free(ptr);
    q = o->realloc(o->ctx, ptr, n);
  }
  ph_busy = 0;
  return q;
}

/* free of every block, reported before the block is gone (busy over the
** real call: an object allocator's free of a large block calls the raw one). */
static __attribute__((noinline)) void ph_free_exact(PyMemAllocatorEx *o, void *ptr)
{
  ph_busy = 1;
  heaptape_rt_free(ptr);
  o->free(o->ctx, ptr);
  ph_busy = 0;
}

/* free of a domain (the raw one only, in a split session). Sampled, most
** blocks were never recorded and the filter turns them away; a block
** reported twice (an object allocator passing a large block to the raw
** one) is not on the tape the second time, so nothing is busy. */
static void ph_free(void *ctx, void *ptr)
{
  PyMemAllocatorEx *o = ctx;
  if (ptr && ph_free_to_hook()) {
    if (!ph.sample) { ph_free_exact(o, ptr); return; }
    ph_report_free(ptr);
  }
  o->free(o->ctx, ptr);
}

/* A code object goes: its (code, offset) keys leave the frame cache (the
** address may hold another code object next). */
static void ph_code_dealloc(PyObject *op)
{
  ph_stack_forget(op);
  ph.code_dealloc(op);
}

/* Put our hooks in front of the three domains' allocators (split: not the
** pymalloc domains' free), and ours before the code objects' tp_dealloc. */
static void ph_install(void)
{
  if (ph.installed) return;
  const char *name = _PyMem_GetCurrentAllocatorName();
  ph.split = ph.sample >= PH_SPLIT_MIN && name && !strcmp(name, "pymalloc");
  for (int d = 0; d < 3; d++) {
    PyMem_GetAllocator(ph_domain[d], &ph.orig[d]);
    int pym = ph.split && d != PH_RAW;
    PyMemAllocatorEx a = { &ph.orig[d], pym ? ph_malloc_split : ph_malloc, ph_calloc,
                           ph_realloc, pym ? ph.orig[d].free : ph_free };
    PyMem_SetAllocator(ph_domain[d], &a);
  }
  ph.code_dealloc = PyCode_Type.tp_dealloc;
  PyCode_Type.tp_dealloc = ph_code_dealloc;
  ph.installed = 1;
}

/* Give the domains their allocators back (blocks stay theirs: we only pass
** through), and the code objects their tp_dealloc. */
static void ph_uninstall(void)
{
  if (!ph.installed) return;
  for (int d = 0; d < 3; d++) PyMem_SetAllocator(ph_domain[d], &ph.orig[d]);
  if (PyCode_Type.tp_dealloc == ph_code_dealloc) PyCode_Type.tp_dealloc = ph.code_dealloc;
  ph.installed = 0;
}

/* -- Fork ----------------------------------------------------------------------- */

/* Before fork: no hook of another thread holds the tables in the child. */
static void ph_atfork_prepare(void)
{
  while (atomic_flag_test_and_set_explicit(&ph.lock, memory_order_acquire)) sched_yield();
}

/* After fork, either side. */
static void ph_atfork_after(void) { atomic_flag_clear_explicit(&ph.lock, memory_order_release); }

/* -- Sessions ------------------------------------------------------------------ */

/* on_stop of a tape file: close it. */
static int ph_fd_close(void *arg) { return close((int)(intptr_t)arg) ? -1 : 0; }

/* Raise RuntimeError("heaptape: ...") and return NULL. */
static PyObject *ph_error(const char *msg)
{
  PyErr_Format(PyExc_RuntimeError, "heaptape: %s", msg);
  return NULL;
}

/* Begin a session: into path (own tape), or attached to a running recording. */
static PyObject *ph_begin(const char *path, int frames, int native, int attach)
{
  if (PyInterpreterState_Get() != PyInterpreterState_Main())
    return ph_error("sub-interpreters are not supported: start heaptape from the main interpreter");
  if (atomic_load(&ph.active) || (!attach && heaptape_is_running()))
    return ph_error("profiler is running already");
  if (frames < 0 || frames > 256) {
    PyErr_SetString(PyExc_ValueError, "heaptape: frames must be from 1 to 256");
    return NULL;
  }
  const char *why = ph_stack_verify();
  if (why) return ph_error(why);
  if (!attach) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
    struct heaptape_options o = HEAPTAPE_OPTIONS_INIT;
    o.writer = heaptape_fd_writer;
    o.on_stop = ph_fd_close;
    o.arg = (void *)(intptr_t)fd;
    o.unwind = native ? HEAPTAPE_UNWIND_DEFAULT : HEAPTAPE_UNWIND_NONE;
    o.frames = frames;
    o.frontend = "python3.11";
    o.loc_kinds = 1u << HEAPTAPE_LOC_PYTHON | 1u << HEAPTAPE_LOC_INTERNAL;  /* version 6 */
    int rc = heaptape_start(&o);
    if (rc) {
      close(fd);
      return ph_error(rc == HEAPTAPE_E_RUNNING ? "profiler is running already"
                      : heaptape_strerror(rc));
    }
    ph.own_tape = 1;
  } else {
    if (!heaptape_is_running()) return ph_error("no recording to attach to");
    ph.own_tape = 0;
  }
  if (ph_stack_tables()) {
    if (ph.own_tape) { heaptape_stop(); ph.own_tape = 0; }
    return PyErr_NoMemory();
  }
  int nfr = frames ? frames : heaptape_frames();
  ph.maxdepth = nfr >= 1 && nfr < PH_MAXDEPTH ? nfr : PH_MAXDEPTH;
  ph.native = native;
  ph.sample = heaptape_sample_bytes();
  ph.filt = heaptape_rt_filter(HEAPTAPE_FILTER_LAYOUT);
  ph.session++;                         /* threads draw a fresh countdown */
  ph_install();
  atomic_store(&ph.active, 1);
  Py_RETURN_NONE;
}

/* End the session: hooks, then the tape. Returns the stop rc. */
static int ph_finish(void)
{
  atomic_store(&ph.active, 0);
  ph_uninstall();
  int rc = HEAPTAPE_OK;
  if (ph.own_tape) {
    rc = heaptape_stop();
    if (rc == HEAPTAPE_E_NOTRUNNING) rc = HEAPTAPE_OK;
    ph.own_tape = 0;
  }
  return rc;
}

/* -- Python API ------------------------------------------------------------------- */

/* heaptape.start(path, *, frames=0, native=False) -> None */
static PyObject *ph_start(PyObject *self, PyObject *args, PyObject *kw)
{
  (void)self;
  static char *names[] = { "path", "frames", "native", NULL };
  PyObject *pathobj;
  int frames = 0, native = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|$ip:start", names,
                                   PyUnicode_FSConverter, &pathobj, &frames, &native))
    return NULL;
  PyObject *r = ph_begin(PyBytes_AS_STRING(pathobj), frames, native, 0);
  Py_DECREF(pathobj);
  return r;
}

/* heaptape.stop() -> None */
static PyObject *ph_stop(PyObject *self, PyObject *unused)
{
  (void)self; (void)unused;
  if (!atomic_load(&ph.active)) return ph_error("profiler is not running");
  int rc = ph_finish();
  if (rc) return ph_error(heaptape_strerror(rc));
  Py_RETURN_NONE;
}

/* heaptape.is_running() -> bool */
static PyObject *ph_is_running(PyObject *self, PyObject *unused)
{
  (void)self; (void)unused;
  return PyBool_FromLong(atomic_load(&ph.active) && heaptape_is_running());
}

/* heaptape._record(): start for `heaptape record --python` (HEAPTAPE_PYTHON_*). */
static PyObject *ph_record(PyObject *self, PyObject *unused)
{
  (void)self; (void)unused;
  if (atomic_load(&ph.active)) Py_RETURN_NONE;
  const char *out = getenv("HEAPTAPE_PYTHON_OUTPUT");
  const char *nat = getenv("HEAPTAPE_PYTHON_NATIVE");
  int native = nat && *nat == '1';
  PyObject *r = heaptape_is_running() ? ph_begin(NULL, 0, native, 1)
              : out ? ph_begin(out, 0, native, 0) : (Py_INCREF(Py_None), Py_None);
  return r;
}

/* atexit: end a session left running before the interpreter goes away. */
static PyObject *ph_atexit(PyObject *self, PyObject *unused)
{
  (void)self; (void)unused;
  if (atomic_load(&ph.active)) ph_finish();
  Py_RETURN_NONE;
}

/* -- heaptape.recording: the context manager ---------------------------------------- */

/* A pending session: its arguments until __enter__. */
typedef struct PhRecording {
  PyObject_HEAD
  PyObject *path;          /* bytes (fs-encoded) */
  int frames;              /* as start() */
  int native;              /* as start() */
} PhRecording;

/* heaptape.recording(path, *, frames=0, native=False) */
static int ph_rec_init(PyObject *o, PyObject *args, PyObject *kw)
{
  PhRecording *r = (PhRecording *)o;
  static char *names[] = { "path", "frames", "native", NULL };
  PyObject *p;
  r->frames = 0; r->native = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|$ip:recording", names,
                                   PyUnicode_FSConverter, &p, &r->frames, &r->native))
    return -1;
  Py_XSETREF(r->path, p);
  return 0;
}

/* Release the path. */
static void ph_rec_dealloc(PyObject *o)
{
  Py_XDECREF(((PhRecording *)o)->path);
  Py_TYPE(o)->tp_free(o);
}

/* __enter__: start; returns the recording. */
static PyObject *ph_rec_enter(PyObject *o, PyObject *unused)
{
  (void)unused;
  PhRecording *r = (PhRecording *)o;
  if (!r->path) return ph_error("recording has no path");
  PyObject *x = ph_begin(PyBytes_AS_STRING(r->path), r->frames, r->native, 0);
  if (!x) return NULL;
  Py_DECREF(x);
  Py_INCREF(o);
  return o;
}

/* __exit__: stop (an exception in the block passes on). */
static PyObject *ph_rec_exit(PyObject *o, PyObject *args)
{
  (void)o; (void)args;
  if (atomic_load(&ph.active)) {
    int rc = ph_finish();
    if (rc) return ph_error(heaptape_strerror(rc));
  }
  Py_RETURN_FALSE;
}

static PyMethodDef ph_rec_methods[] = {
  { "__enter__", ph_rec_enter, METH_NOARGS, NULL },
  { "__exit__", ph_rec_exit, METH_VARARGS, NULL },
  { NULL, NULL, 0, NULL }
};

static PyTypeObject ph_rec_type = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "heaptape.recording",
  .tp_basicsize = sizeof(PhRecording),
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_doc = "with heaptape.recording(path, frames=0, native=False): record the block",
  .tp_new = PyType_GenericNew,
  .tp_init = ph_rec_init,
  .tp_dealloc = ph_rec_dealloc,
  .tp_methods = ph_rec_methods,
};

/* -- Module ------------------------------------------------------------------------ */

static PyMethodDef ph_funcs[] = {
  { "start", (PyCFunction)(void (*)(void))ph_start, METH_VARARGS | METH_KEYWORDS,
    "start(path, *, frames=0, native=False): record Python allocations into path" },
  { "stop", ph_stop, METH_NOARGS, "stop(): end the recording and write the tape" },
  { "is_running", ph_is_running, METH_NOARGS, "is_running() -> bool" },
  { "_record", ph_record, METH_NOARGS, "start for `heaptape record --python`" },
  { "_atexit", ph_atexit, METH_NOARGS, "end a session at interpreter exit" },
  { NULL, NULL, 0, NULL }
};

static struct PyModuleDef ph_module = {
  PyModuleDef_HEAD_INIT, "heaptape",
  "heaptape: record Python allocations onto a heaptape tape (docs/PYTHON.md)",
  -1, ph_funcs, NULL, NULL, NULL, NULL
};

/* import heaptape */
PH_API PyMODINIT_FUNC PyInit_heaptape(void)
{
  if (PyInterpreterState_Get() != PyInterpreterState_Main())
    return ph_error("sub-interpreters are not supported: import heaptape in the main interpreter");
  if (PyType_Ready(&ph_rec_type) < 0) return NULL;
  PyObject *m = PyModule_Create(&ph_module);
  if (!m) return NULL;
  Py_INCREF(&ph_rec_type);
  if (PyModule_AddObject(m, "recording", (PyObject *)&ph_rec_type) < 0) {
    Py_DECREF(&ph_rec_type);
    Py_DECREF(m);
    return NULL;
  }
  static int once;
  if (!once++) pthread_atfork(ph_atfork_prepare, ph_atfork_after, ph_atfork_after);
  /* stop before finalisation tears the interpreter down */
  PyObject *ax = PyImport_ImportModule("atexit");
  PyObject *fn = ax ? PyObject_GetAttrString(m, "_atexit") : NULL;
  PyObject *r = fn ? PyObject_CallMethod(ax, "register", "O", fn) : NULL;
  Py_XDECREF(r); Py_XDECREF(fn); Py_XDECREF(ax);
  if (!r) { Py_DECREF(m); return NULL; }
  return m;
}
