# heaptape tests -- sampled deaths found with no GC hook on
# (tests/integration/ruby_report.sh): arrays of strings that live a few GCs
# and die, sampled far more sparsely than the VM collects (so that the GC
# event hooks stay off between sample points), the slots they leave taken
# again at once; then strings kept through more GCs to the end, beside a
# million dropped (the heap pages they leave are freed). Objects that
# survive a GC held by a local are promoted at once (the thread that marks
# them is old) and only a major GC frees them: one every 500 rounds. Usage:
# deaths.rb TAPE; prints the kept strings' bytes (ObjectSpace.memsize_of)
require "heaptape"
require "objspace"
Heaptape.start(ARGV[0])
prev = cur = nil
6000.times do |i|
  prev, cur = cur, Array.new(400) { |j| "r#{j}" } # RING
  GC.start if i % 500 == 0
end
keep = Array.new(300_000) { +"k" } # KEEP
big = Array.new(1_000_000) { +"b" } # BIG
big = nil; GC.start # (at once: the array stays on the VM stack a little)
4.times { GC.start; 1000.times { |i| i.to_s } }
Heaptape.stop
warn "no heap page freed" if GC.stat(:total_freed_pages).zero?
puts keep.sum { |o| ObjectSpace.memsize_of(o) }
