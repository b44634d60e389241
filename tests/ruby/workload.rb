# heaptape tests -- a real Ruby workload: JSON, ERB, CSV and threads, with
# deterministic output (tests/integration/ruby_misc.sh).
require "json"
require "erb"
require "csv"

docs = (0...20_000).map { |i| JSON.generate({ "id" => i, "name" => "item#{i}", "tags" => ["t#{i % 7}"] * (i % 5) }) }
parsed = docs.map { |d| JSON.parse(d) }
puts "json #{parsed.size} #{parsed.sum { |p| p["tags"].size }}"
csv = CSV.generate { |c| parsed.first(5000).each { |p| c << [p["id"], p["name"], p["tags"].join("|")] } }
rows = CSV.parse(csv)
puts "csv #{rows.size} #{rows.sum { |r| r[2].to_s.size }}"
tpl = ERB.new("<% items.each do |i| %><li><%= i['name'] %> (<%= i['tags'].size %>)</li>\n<% end %>")
html = tpl.result_with_hash(items: parsed.first(3000))
puts "erb #{html.lines.size} #{html.size}"
out = Array.new(4)
4.times.map { |k| Thread.new { out[k] = parsed.each_slice(4).map { |s| s[k] }.compact.group_by { |p| p["tags"].first }.transform_values(&:size).sort_by { |t, _| t.to_s } } }.each(&:join)
puts "threads #{out.inspect}"
