# heaptape -- `heaptape record --ruby`: RUBYOPT requires this file before the
# script. It starts the heaptape extension on the tape (HEAPTAPE_RUBY_OUTPUT),
# then puts RUBYOPT and RUBYLIB back as the user had them, so $0, ARGV, the
# environment and the output are as without heaptape. Its directory stays on
# $LOAD_PATH: a script's own `require "heaptape"` finds the loaded extension
# there. See docs/RUBY.md.
begin
  require "heaptape"
  Heaptape._record
rescue StandardError, LoadError => e
  $stderr.puts "heaptape: cannot record Ruby: #{e.message}"
end
%w[RUBYOPT RUBYLIB].each do |v|
  old = ENV.delete("HEAPTAPE_#{v}")
  if old.nil? then ENV.delete(v) else ENV[v] = old end
end
ENV.delete("HEAPTAPE_RUBY_OUTPUT")
ENV.delete("HEAPTAPE_RUBY_SNAP")
