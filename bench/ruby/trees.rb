# heaptape bench -- allocation-heavy Ruby: binary trees of arrays and hashes of
# strings (bench/bench_ruby.sh). Usage: trees.rb DEPTH
def make(d) = d.zero? ? [nil, nil] : [make(d - 1), make(d - 1)]
def check(t) = t[0] ? 1 + check(t[0]) + check(t[1]) : 1

n = (ARGV[0] || 16).to_i
total = 0
4.step(n, 2) do |d|
  (2**(n - d)).times { total += check(make(d)) }
  names = (0...2**d).to_h { |i| ["k#{i}", i.to_s * 3] }
  total += names.size
end
puts total
