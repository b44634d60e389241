# heaptape -- build, test, fuzz and benchmark.
#
# make            the `heaptape` command and libheaptape.so in build/
# make test       everything, then the whole test suite (ends "N passed, N failed")
# make fuzz       libFuzzer targets (clang) in build/fuzz/, run briefly
# make bench      benchmarks (see docs/PERFORMANCE.md)
# make asan       the command under ASan + UBSan, in build-asan/
# make asan-test  the whole suite with that command (not part of `make test`)
# make install    the command, recorder, headers, pkg-config file, Lua and Python
#                 modules and man pages under PREFIX (default /usr/local), below DESTDIR
#
# -- Options ---------------------------------------------------------------
#
# Debug asserts: 1 cheap, 2 internal, 3 expensive (see src/base/ht_def.h).
#CFLAGS+= -DHT_DEBUG=2
#
# Default native stack depth and per-thread buffer size of the recorder.
#CFLAGS+= -DHT_DEFAULT_FRAMES=64
#
# Compression level of tape packets (zstd); 0 stores them raw.
#CFLAGS+= -DHT_DEFAULT_ZSTD=1
# ---------------------------------------------------------------------------

CC      ?= cc
OPT     ?= -O2
CFLAGS  ?=
BASEFLAGS = -std=c11 -D_GNU_SOURCE -g $(OPT) -Wall -Wextra -fvisibility=hidden -fPIC \
            -Iinclude
LDLIBS_FORMAT = -lzstd -lz -lpthread
B = build

# src/base/ files that print (stdio) serve the tools only: never in libheaptape.so.
BASE_TOOL_SRC = src/base/escape.c src/base/msg.c
BASE_SRC    = $(filter-out $(BASE_TOOL_SRC),$(wildcard src/base/*.c))
WRITER_SRC  = src/format/stream.c src/format/writer.c
READER_SRC  = src/format/reader.c src/format/sealread.c src/format/sealstacks.c src/format/sealw.c \
              src/format/squeeze.c
RECORD_SRC  = $(wildcard src/record/*.c)
ANALYZE_SRC = $(wildcard src/analyze/*.c)
OUTPUT_SRC  = $(wildcard src/output/*.c)
REPLAY_SRC  = $(wildcard src/replay/*.c)
CLI_SRC     = $(wildcard cli/*.c)
HEADERS     = $(wildcard include/*.h src/*/*.h)

CORE_SRC = $(BASE_SRC) $(WRITER_SRC) $(READER_SRC)
TOOL_SRC = $(CORE_SRC) $(BASE_TOOL_SRC) $(ANALYZE_SRC) $(OUTPUT_SRC) $(REPLAY_SRC)

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))

all: $(B)/heaptape $(B)/libheaptape.so

$(B)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(CFLAGS) -c $< -o $@

# The library loaded into profiled programs: base, writer and recorder only.
$(B)/libheaptape.so: $(call obj,$(BASE_SRC) $(WRITER_SRC) $(RECORD_SRC))
	$(CC) -shared -Wl,-soname,libheaptape.so -o $@ $^ $(LDFLAGS) \
	  -lunwind $(LDLIBS_FORMAT) -ldl

# The tools' code, shared by the command, the unit tests and the benchmarks.
$(B)/libheaptape_tool.a: $(call obj,$(TOOL_SRC))
	@rm -f $@
	ar rcs $@ $^

# The tools' libraries are linked from their static archives (the same -dev
# packages ship them): loading them as 13 shared libraries cost every command
# half a millisecond of start-up, a sixth to a third of a command reading a
# small sealed tape (docs/PERFORMANCE.md). STATIC_LIBS=0 links them shared.
STATIC_LIBS ?= 1
TOOL_DEPS = -ldw -lelf -lbz2 -llzma
# The live view (src/output/live.c, cli/live_term.c) draws with ncurses.
TOOL_DEPS += -lncursesw -ltinfo
ifeq ($(STATIC_LIBS),1)
TOOL_LIBS = $(B)/libheaptape_tool.a -Wl,-Bstatic $(TOOL_DEPS) -lzstd -lz -Wl,-Bdynamic \
            -lm -ldl -lpthread
else
TOOL_LIBS = $(B)/libheaptape_tool.a $(TOOL_DEPS) $(LDLIBS_FORMAT) -lm -ldl
endif

# -- pprof: protobuf-c code generated from proto/profile.proto -------------
# protoc-c (Debian protobuf-c-compiler) writes $(B)/gen/profile.pb-c.{c,h} at
# build time; its object joins the tool library, and the files that include
# the generated header see $(B)/gen. Nothing generated is committed.
PROTO_GEN = $(B)/gen/profile.pb-c.c $(B)/gen/profile.pb-c.h
$(PROTO_GEN) &: proto/profile.proto
	@mkdir -p $(B)/gen
	protoc-c --proto_path=proto --c_out=$(B)/gen proto/profile.proto
$(B)/gen/profile.pb-c.o: $(PROTO_GEN)
	$(CC) $(BASEFLAGS) $(CFLAGS) -Wno-unused-parameter -c $(B)/gen/profile.pb-c.c -o $@
$(B)/libheaptape_tool.a: $(B)/gen/profile.pb-c.o
$(B)/obj/src/output/pprof.o $(B)/tests/test_pprof: $(B)/gen/profile.pb-c.h
$(B)/obj/src/output/pprof.o $(B)/tests/test_pprof: BASEFLAGS += -I$(B)/gen
TOOL_DEPS += -lprotobuf-c

$(B)/heaptape: $(call obj,$(CLI_SRC)) $(B)/libheaptape_tool.a
	$(CC) -o $@ $(call obj,$(CLI_SRC)) $(LDFLAGS) $(TOOL_LIBS)

$(B)/examples/%: examples/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -g -O2 -o $@ $<

# -- The Valgrind tool of `record --access` (src/vgtool/) ----------------------
# Built out of tree against Debian's valgrind package (pkg-config valgrind:
# headers, libcoregrind/libvex, the tool load address) into $(B)/valgrind/:
# the tool, its replacemalloc preload, and links to the core's own files, so
# VALGRIND_LIB=$(B)/valgrind valgrind --tool=heaptape runs it. Skipped with a
# message when pkg-config does not know valgrind.
VG_PC := $(shell pkg-config --exists valgrind 2>/dev/null && echo yes)
ifeq ($(VG_PC),yes)
VG_PLAT  = amd64-linux
VG_CORE  = /usr/libexec/valgrind
VG_LIBDIR := $(shell pkg-config --variable=libdir valgrind)/valgrind
VG_LOAD  := $(shell pkg-config --variable=valt_load_address valgrind)
VG_CFLAGS = -std=gnu11 -m64 -O2 -g -Wall -fno-strict-aliasing -fno-builtin -fno-stack-protector \
            -fno-pie -fno-pic $(shell pkg-config --cflags valgrind) -DVGA_amd64=1 -DVGO_linux=1 \
            -DVGP_amd64_linux=1 -DVGPV_amd64_linux_vanilla=1
VG_TOOL  = $(B)/valgrind/heaptape-$(VG_PLAT)
VG_PRELOAD = $(B)/valgrind/vgpreload_heaptape-$(VG_PLAT).so
all: $(VG_TOOL) $(VG_PRELOAD)
$(VG_TOOL): src/vgtool/ht_vg_main.c src/format/stream.c src/format/stream.h \
            src/format/accessw.h src/format/format.h src/base/varint.h
	@mkdir -p $(dir $@)
	$(CC) $(VG_CFLAGS) -o $@ src/vgtool/ht_vg_main.c src/format/stream.c -static \
	  -nodefaultlibs -nostartfiles -u _start -no-pie -Wl,--build-id=none \
	  -Wl,-Ttext-segment=$(VG_LOAD) $(shell pkg-config --libs valgrind)
	@for f in $(VG_CORE)/*; do case $$f in *heaptape*) ;; \
	  *) ln -sfn $$f $(B)/valgrind/ ;; esac; done
# The preload: the allocator replacement and the string functions
# (ht_vg_strmem.c: client code, so no loop there may become a libc call).
$(VG_PRELOAD): $(VG_LIBDIR)/libreplacemalloc_toolpreload-$(VG_PLAT).a src/vgtool/ht_vg_strmem.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -m64 -O2 -g -Wall -fPIC -fno-builtin -fno-tree-loop-distribute-patterns \
	  -fno-stack-protector $(shell pkg-config --cflags valgrind) -DVGA_amd64=1 -DVGO_linux=1 \
	  -DVGP_amd64_linux=1 -shared -nodefaultlibs -Wl,-z,interpose,-z,initfirst -o $@ \
	  src/vgtool/ht_vg_strmem.c -Wl,--whole-archive $< -Wl,--no-whole-archive
else
all: vg-skip
vg-skip:
	@echo "heaptape: pkg-config does not know valgrind: record --access is not built (sh scripts/install-deps.sh)"
.PHONY: vg-skip
endif

# -- Lua modules (lua/, owner: Lua frontend) --------------------------------
# `require "heaptape"` for Lua 5.4 and LuaJIT 2.1: $(B)/lua/5.4/heaptape.so and
# $(B)/lua/jit/heaptape.so. They link libheaptape.so through an $ORIGIN rpath
# (the same instance as the LD_PRELOAD recorder when that is loaded) and take
# the Lua API from the interpreter, so they never link liblua. `make
# lua-install` copies them to $(LUA_CDIR_54) / $(LUA_CDIR_JIT). See docs/LUA.md.
LUA_MODS = $(B)/lua/5.4/heaptape.so $(B)/lua/jit/heaptape.so
LUA_MODFLAGS = -shared -fPIC -Wl,-rpath,'$$ORIGIN/../..' -L$(B) -lheaptape -lpthread -ldl
LUA_CDIR_54 ?= $(LIBDIR)/lua/5.4
LUA_CDIR_JIT ?= $(LIBDIR)/lua/5.1
all: $(LUA_MODS)
# The common files and one VM file each (lua/lh.h is the interface between them).
LUA_COMMON = lua/lheaptape.c lua/lh_dump.c
LUA_DEPS = $(LUA_COMMON) lua/lh.h lua/lheaptape.h include/heaptape.h \
           include/heaptape_errors.h src/base/hash.h $(B)/libheaptape.so
$(B)/lua/5.4/heaptape.so: lua/lh_vm54.c $(LUA_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(CFLAGS) -I/usr/include/lua5.4 -o $@ $(LUA_COMMON) $< $(LUA_MODFLAGS)
$(B)/lua/jit/heaptape.so: lua/lh_vmjit.c $(LUA_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(CFLAGS) -I/usr/include/luajit-2.1 -o $@ $(LUA_COMMON) $< $(LUA_MODFLAGS)
lua-install: $(LUA_MODS)
	install -d $(DESTDIR)$(LUA_CDIR_54) $(DESTDIR)$(LUA_CDIR_JIT)
	install -m 755 $(B)/lua/5.4/heaptape.so $(DESTDIR)$(LUA_CDIR_54)/heaptape.so
	install -m 755 $(B)/lua/jit/heaptape.so $(DESTDIR)$(LUA_CDIR_JIT)/heaptape.so
.PHONY: lua-install
# -- end of the Lua modules block ---------------------------------------------

# -- Python module (python/, owner: Python frontend) ---------------------------
# `import heaptape` for CPython 3.11 (Debian's python3.11-dev):
# $(B)/python/heaptape$(PY_EXT), and python/sitecustomize.py beside it for
# `heaptape record --python`. The module links libheaptape.so through an
# $ORIGIN rpath (build/ from build/python/, LIBDIR from LIBDIR/python3.11/
# dist-packages), takes the C API from the interpreter and never links
# libpython. `make python-install` (part of `make install`) copies it to
# $(PY_SITEDIR) and sitecustomize.py to $(HELPERDIR)/python. See docs/PYTHON.md.
PYTHON311 ?= /usr/bin/python3.11
PY_INC ?= /usr/include/python3.11
PY_EXT := $(shell $(PYTHON311) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null || echo .cpython-311-x86_64-linux-gnu.so)
PY_MOD = $(B)/python/heaptape$(PY_EXT)
PY_SITEDIR ?= $(LIBDIR)/python3.11/dist-packages
all: $(PY_MOD) $(B)/python/sitecustomize.py
PY_SRC = python/pyheaptape.c python/ph_stack.c
$(PY_MOD): $(PY_SRC) python/ph.h include/heaptape.h include/heaptape_errors.h $(B)/libheaptape.so
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(CFLAGS) -fno-strict-aliasing -I$(PY_INC) -o $@ $(PY_SRC) \
	  -shared -fPIC -Wl,-rpath,'$$ORIGIN/..:$$ORIGIN/../..' -L$(B) -lheaptape -lpthread -ldl
$(B)/python/sitecustomize.py: python/sitecustomize.py
	@mkdir -p $(dir $@)
	cp $< $@
python-install: $(PY_MOD)
	install -d $(DESTDIR)$(PY_SITEDIR) $(DESTDIR)$(HELPERDIR)/python
	install -m 755 $(PY_MOD) $(DESTDIR)$(PY_SITEDIR)/heaptape$(PY_EXT)
	install -m 644 python/sitecustomize.py $(DESTDIR)$(HELPERDIR)/python/sitecustomize.py
.PHONY: python-install
# -- end of the Python module block --------------------------------------------

# -- Ruby extension (ruby/, owner: Ruby frontend) --------------------------------
# `require "heaptape"` for Ruby 3.1 (Debian's ruby-dev): $(B)/ruby/heaptape.so,
# and ruby/heaptape_record.rb beside it for `heaptape record --ruby`. It links
# libheaptape.so through an $ORIGIN rpath, takes the C API from the
# interpreter (never links libruby). `make ruby-install` copies both to
# $(RUBY_SITEDIR) (part of `make install`). See docs/RUBY.md.
RUBY_INC ?= -I/usr/include/ruby-3.1.0 -I/usr/include/x86_64-linux-gnu/ruby-3.1.0
RUBY_MOD = $(B)/ruby/heaptape.so
RUBY_SITEDIR ?= $(LIBDIR)/site_ruby
all: $(RUBY_MOD) $(B)/ruby/heaptape_record.rb
$(RUBY_MOD): ruby/rheaptape.c include/heaptape.h include/heaptape_errors.h $(B)/libheaptape.so
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(CFLAGS) -std=gnu11 -Wno-unused-parameter $(RUBY_INC) -o $@ ruby/rheaptape.c \
	  -shared -fPIC -Wl,-rpath,'$$ORIGIN/..:$$ORIGIN/../..' -L$(B) -lheaptape -lpthread -lm
$(B)/ruby/heaptape_record.rb: ruby/heaptape_record.rb
	@mkdir -p $(dir $@)
	cp $< $@
ruby-install: $(RUBY_MOD)
	install -d $(DESTDIR)$(RUBY_SITEDIR)
	install -m 755 $(RUBY_MOD) $(DESTDIR)$(RUBY_SITEDIR)/heaptape.so
	install -m 644 ruby/heaptape_record.rb $(DESTDIR)$(RUBY_SITEDIR)/heaptape_record.rb
.PHONY: ruby-install
# -- end of the Ruby extension block --------------------------------------------

# -- Installation ------------------------------------------------------------
# `make install` (PREFIX, DESTDIR as usual) puts in place:
#   $(BINDIR)/heaptape              the command
#   $(LIBDIR)/libheaptape.so        the recorder (LD_PRELOAD, or linked by embedders)
#   $(HELPERDIR)/                   what the command finds through ../lib/heaptape/:
#                                   a link to the recorder, heaptape-replay, drivers
#   $(INCLUDEDIR)/heaptape*.h       the public headers
#   $(LIBDIR)/pkgconfig/heaptape.pc `pkg-config --cflags --libs heaptape`
#   $(LUA_CDIR_54), $(LUA_CDIR_JIT) the Lua modules (their rpath finds the
#                                   recorder two directories up, in $(LIBDIR))
#   $(PY_SITEDIR)                   the Python module (the same rpath), and
#   $(HELPERDIR)/python/            the start-up file of `record --python`
#   $(RUBY_SITEDIR)                 the Ruby extension and `record --ruby`'s file
#   $(MANDIR)/man1/heaptape*.1      man pages made from the --help texts
# install-files copies what is built without building (the tests use it).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
HELPERDIR = $(PREFIX)/lib/heaptape
VERSION = $(shell sed -n 's/^\#define HEAPTAPE_VERSION_M[AI][JN]OR* \([0-9]*\).*/\1/p' include/heaptape.h | paste -sd.)
PUBLIC_HEADERS = include/heaptape.h include/heaptape_errors.h include/heaptape_driver.h

# Man pages: scripts/man.sh runs the built command's --help texts.
$(B)/man/heaptape.1: $(B)/heaptape scripts/man.sh
	@rm -rf $(B)/man
	sh scripts/man.sh $(B)/heaptape $(B)/man
man: $(B)/man/heaptape.1

install: all man
	$(MAKE) install-files
install-files: $(B)/man/heaptape.1
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(HELPERDIR) \
	  $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(B)/heaptape $(DESTDIR)$(BINDIR)/heaptape
	install -m 755 $(B)/libheaptape.so $(DESTDIR)$(LIBDIR)/libheaptape.so
	if [ "$(LIBDIR)" = "$(PREFIX)/lib" ]; then ln -sf ../libheaptape.so $(DESTDIR)$(HELPERDIR)/libheaptape.so; \
	else ln -sf $(LIBDIR)/libheaptape.so $(DESTDIR)$(HELPERDIR)/libheaptape.so; fi
	install -m 755 $(REPLAY_BIN) $(DESTDIR)$(HELPERDIR)/
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(INCLUDEDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	  -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	  scripts/heaptape.pc.in >$(DESTDIR)$(LIBDIR)/pkgconfig/heaptape.pc
	install -m 644 $(B)/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -d $(DESTDIR)$(LUA_CDIR_54) $(DESTDIR)$(LUA_CDIR_JIT)
	install -m 755 $(B)/lua/5.4/heaptape.so $(DESTDIR)$(LUA_CDIR_54)/heaptape.so
	install -m 755 $(B)/lua/jit/heaptape.so $(DESTDIR)$(LUA_CDIR_JIT)/heaptape.so
	install -d $(DESTDIR)$(PY_SITEDIR) $(DESTDIR)$(HELPERDIR)/python
	install -m 755 $(PY_MOD) $(DESTDIR)$(PY_SITEDIR)/heaptape$(PY_EXT)
	install -m 644 python/sitecustomize.py $(DESTDIR)$(HELPERDIR)/python/sitecustomize.py
	install -d $(DESTDIR)$(RUBY_SITEDIR)
	install -m 755 $(RUBY_MOD) $(DESTDIR)$(RUBY_SITEDIR)/heaptape.so
	install -m 644 ruby/heaptape_record.rb $(DESTDIR)$(RUBY_SITEDIR)/heaptape_record.rb
	if [ -d $(B)/valgrind ]; then install -d $(DESTDIR)$(HELPERDIR)/valgrind && \
	  cp -P $(B)/valgrind/* $(DESTDIR)$(HELPERDIR)/valgrind/; fi
.PHONY: man install install-files

# -- Tests -----------------------------------------------------------------
UNIT_SRC = $(wildcard tests/unit/test_*.c)
UNIT_BIN = $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
HELPER_SRC = $(wildcard tests/progs/*.c tests/progs/*.cc)
HELPER_BIN = $(patsubst tests/progs/%,$(B)/progs/%,$(basename $(HELPER_SRC)))

$(B)/tests/%: tests/unit/%.c $(B)/libheaptape_tool.a tests/unit/testhelper.h
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(CFLAGS) -Isrc -o $@ $< $(TOOL_LIBS)

$(B)/progs/%: tests/progs/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -g -O1 -fno-omit-frame-pointer -o $@ $< -lpthread -ldl $(PROG_LIBS_$*)
PROG_LIBS_hard_alloc = -lstdc++
PROG_LIBS_attach_static = -static
$(B)/progs/%: tests/progs/%.cc
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -g -O1 -fno-omit-frame-pointer -o $@ $< -lpthread

# Each fuzz target's corpus replayed under AddressSanitizer and UBSan.
SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_TARGETS = $(patsubst tests/fuzz/%.c,%,$(filter-out tests/fuzz/regression_driver.c,$(wildcard tests/fuzz/*.c)))
REGRESS_BIN = $(patsubst %,$(B)/san/regress_%,$(FUZZ_TARGETS))
# The fuzz targets get the reader and writer, and the model with the sealed
# tape's aggregate section and the heap map's layout (fuzz_sealed loads them).
FUZZ_SRC = $(CORE_SRC) $(BASE_TOOL_SRC) $(addprefix src/analyze/,model.c agg.c snaps.c frames.c resolve.c pump.c timeline.c access.c maplayout.c aggnames.c callers.c)
$(B)/san/regress_%: tests/fuzz/%.c tests/fuzz/regression_driver.c $(FUZZ_SRC) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(SAN) -Isrc -o $@ tests/fuzz/regression_driver.c $< $(FUZZ_SRC) $(LDLIBS_FORMAT) -lm

test: all $(UNIT_BIN) $(HELPER_BIN) $(REGRESS_BIN) $(B)/examples/wordfreq
	@sh tests/run.sh

# -- Fuzzing (clang + libFuzzer) -------------------------------------------
FUZZTIME ?= 60
fuzz:
	@mkdir -p $(B)/fuzz
	@for t in $(FUZZ_TARGETS); do \
	  clang $(BASEFLAGS) -fsanitize=fuzzer,address,undefined -Isrc -o $(B)/fuzz/$$t \
	    tests/fuzz/$$t.c $(FUZZ_SRC) $(LDLIBS_FORMAT) -lm || exit 1; \
	  mkdir -p $(B)/fuzz/corpus-$$t; \
	  $(B)/fuzz/$$t -max_total_time=$(FUZZTIME) $(B)/fuzz/corpus-$$t tests/fuzz/corpus/$$t || exit 1; \
	done

# -- Benchmarks --------------------------------------------------------------
BENCH_SRC = $(wildcard bench/*.c)
BENCH_BIN = $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRC))
$(B)/bench/%: bench/%.c $(B)/libheaptape_tool.a
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(CFLAGS) -O2 -Isrc -o $@ $< $(TOOL_LIBS)
bench: all $(BENCH_BIN)
	@sh bench/run.sh

# Regenerate the report tests' golden tapes (tests/data/rep_*.tape).
tapes: $(B)/tests/rep_gentapes
	$(B)/tests/rep_gentapes tests/data

# -- Sanitised build ----------------------------------------------------------
# Only the tools are sanitised (build-asan/heaptape, the unit tests). What runs
# inside other programs is copied unsanitised from the normal build:
# libheaptape.so is LD_PRELOADed into uninstrumented programs, where the ASan
# runtime cannot come first in the library list and would fight the recorder
# over malloc; the Lua modules load into lua5.4 and luajit; heaptape-replay
# re-executes itself with an allocator preloaded, and loads the drivers.
# `heaptape record` takes the libheaptape.so next to it, so build-asan must
# hold the unsanitised copy. The test programs (tests/progs) are built with
# flags of their own, unsanitised: they are the programs being profiled.
# asan-test takes more than twice as long as `make test`, so CI does not run
# it.
ASAN_MAKE = $(MAKE) B=build-asan OPT="-O1 $(SAN)" LDFLAGS="$(SAN)"
asan:
	$(MAKE) all $(TEST_DRIVER_SO)
	+$(ASAN_MAKE) build-asan/heaptape
	@mkdir -p build-asan/tests
	cp -pR $(B)/libheaptape.so $(B)/lua $(REPLAY_BIN) build-asan/
	cp -pR $(B)/tests/drivers build-asan/tests/

asan-test: asan
	+$(ASAN_MAKE) asan-bins
	@B=build-asan sh tests/run.sh

# What else tests/run.sh runs, built in the sanitised directory.
asan-bins: $(UNIT_BIN) $(HELPER_BIN) $(REGRESS_BIN) $(B)/examples/wordfreq

clean:
	rm -rf build build-asan

.PHONY: all test fuzz bench asan asan-test asan-bins clean

# -- Allocator studies: replay runner, driver .so files, test drivers ---------
# (ops / lifetimes / replay / heapmap; see docs/ALLOCATORS.md). The runner and
# the drivers never enter libheaptape_tool.a: they live below src/replay/ in
# subdirectories the tool library's wildcard does not reach.
REPLAY_DRIVERS = glibc jemalloc mimalloc tcmalloc compact
REPLAY_BIN = $(B)/heaptape-replay $(patsubst %,$(B)/driver_%.so,$(REPLAY_DRIVERS))
TEST_DRIVER_SO = $(patsubst tests/drivers/%.c,$(B)/tests/drivers/%.so,$(wildcard tests/drivers/alloc_*.c))
$(B)/heaptape-replay: src/replay/runner/runner.c $(HEADERS)
	$(CC) $(BASEFLAGS) $(CFLAGS) -o $@ $< -ldl
$(B)/driver_%.so: src/replay/drivers/%.c src/replay/drivers/libc_common.h include/heaptape_driver.h
	$(CC) $(BASEFLAGS) $(CFLAGS) -shared -o $@ $< -ldl
$(B)/tests/drivers/%.so: tests/drivers/%.c include/heaptape_driver.h
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(CFLAGS) -shared -o $@ $< -ldl
TOOL_DEPS += -lpng16
all: $(REPLAY_BIN)
test: $(TEST_DRIVER_SO)
