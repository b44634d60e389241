# heaptape bench -- the memory_profiler gem around a script, its report
# written to /dev/null (bench/bench_ruby.sh). Usage: memprof.rb SCRIPT ARGS...
require "memory_profiler"
script = ARGV.shift
MemoryProfiler.report { load script }.pretty_print(to_file: "/dev/null")
