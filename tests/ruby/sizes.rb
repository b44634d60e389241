# heaptape tests -- object sizes kept current while recording
# (tests/integration/ruby_misc.sh): N strings grown in place to 4 MB in all
# are measured again at a GC once HEAPTAPE_RUBY_SIZES seconds have passed,
# then emptied. Usage: sizes.rb TAPE AT_FILE [N] (AT_FILE gets a time, in
# seconds from the start, at which the tape must show the grown strings, and
# their bytes then by ObjectSpace.memsize_of)
require "heaptape"
require "objspace"
n = (ARGV[2] || 1).to_i
Heaptape.start(ARGV[0])
t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
$big = Array.new(n) { +"b" } # BIG
$big.each { |s| s << ("z" * (4_000_000 / n)) }
sleep 0.4
GC.start
[1, 2].map { |i| i + 1 }
mid = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
bytes = $big.sum { |x| ObjectSpace.memsize_of(x) }
sleep 0.4
$big.each(&:clear)
GC.start
Heaptape.stop
File.write(ARGV[1], format("%.3f %d\n", mid + 0.2, bytes))
