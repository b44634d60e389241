# heaptape bench -- ObjectSpace.trace_object_allocations for the whole run
# (bench/bench_ruby.sh: RUBYOPT=-r this file).
require "objspace"
ObjectSpace.trace_object_allocations_start
