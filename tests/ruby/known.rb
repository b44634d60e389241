# heaptape tests -- Ruby objects with known sites and counts
# (tests/integration/ruby_report.sh). Usage: known.rb TAPE EXPECT.json [direct|record]
# Ruby 3.1's rb_profile_frames names a block inside a method by the method
# (its frame is the method entry): the sites are "retain", not "block in retain".
require "json"
require "objspace"
require "heaptape"

KEEP = []
$leak = nil
RESULTS = {}

def retain
  10_000.times { |i| KEEP << ("x" * 100) + i.to_s } # RETAIN
end

def temporaries
  n = 0
  10_000.times { |i| n += (("t" * 200) + i.to_s).size } # TEMP
  n
end

def leaky
  $leak = Array.new(500) { Object.new } # LEAK
end

def worker(k)
  out = []
  2000.times { out << ("w" * 50) + k.to_s } # THREAD
  RESULTS[k] = out
end

def line_of(marker)
  File.readlines(__FILE__).index { |l| l.rstrip.end_with?("# #{marker}") } + 1
end

mode = ARGV[2] || "direct"
GC.start
Heaptape.start(ARGV[0]) if mode == "direct"
raise "not running" unless Heaptape.running?
retain
temporaries
leaky
4.times.map { |k| Thread.new { worker(k) } }.each(&:join)
GC.start
Heaptape.stop if mode == "direct"
want = {
  file: File.expand_path(__FILE__),
  retain: { line: line_of("RETAIN"), func: "retain", blocks: KEEP.size,
            bytes: KEEP.sum { |o| ObjectSpace.memsize_of(o) } },
  temp: { line: line_of("TEMP"), func: "temporaries", blocks: 0, bytes: 0 },
  leak: { line: line_of("LEAK"), func: "leaky", blocks: $leak.size + 1,   # and the Array
          bytes: ObjectSpace.memsize_of($leak) + $leak.sum { |o| ObjectSpace.memsize_of(o) } },
  thread: { line: line_of("THREAD"), func: "worker", blocks: RESULTS.values.sum(&:size),
            bytes: RESULTS.values.flatten.sum { |o| ObjectSpace.memsize_of(o) } },
}
File.write(ARGV[1], JSON.dump(want))
