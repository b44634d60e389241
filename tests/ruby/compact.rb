# heaptape tests -- sampled recording through GC.compact
# (tests/integration/ruby_report.sh): 20,000 kept strings, most of them moved.
# Usage: compact.rb TAPE; prints the objects moved and the kept strings' bytes
# (ObjectSpace.memsize_of)
require "heaptape"
require "objspace"
Heaptape.start(ARGV[0])
junk = 30000.times.map { |i| "j#{i}" }
keep = 20000.times.map { |i| "k#{i}" * 3 } # KEEP
junk = nil
GC.start
moved = GC.compact[:moved].values.sum
GC.start
Heaptape.stop
puts "#{moved} #{keep.sum { |o| ObjectSpace.memsize_of(o) }}"
