# polyrepl's Ruby worker, its fork: more of the body of worker.rb's
# anonymous module (ruby.go puts this file in before its last line).

  # ---- fork: a copy of the session, taken between cells --------------------
  #
  # "fork NBYTES NONCE" and {"dir": DIR, "sentinel": MARKER, "cookie":
  # KEY=VALUE} ask for a copy of the worker: Process.fork, and the copy's channels re-made from the
  # named pipes DIR holds (cmd, out, ev, and con for the console), which
  # the session adopting the copy made and opened first, onto the same
  # descriptor numbers (IO#reopen: commands on fd 3, events on fd 4, fds 1
  # and 2, fd 0), in its own process group, so that an interrupt of either
  # session reaches its own. The parent answers {"op": "fork", "nonce",
  # "pid", "threads", "shared", "children"} (what the copy did not get: the
  # parent's other threads; what it shares: open sockets, pipes and files;
  # what it does not carry: the parent's child processes) and goes on; the
  # copy says hello on its own channels, as a worker that just started,
  # with "forked": true, and the cookie in its environment: what it starts
  # is the adopting session's.

  @fork_list = 8   # names given of each kind; the rest counted
  @fork_words = 80 # characters of each name

  # fork_command serves a "fork" command: true in the copy, on its own
  # channels by then; false in the parent once it answered.
  def self.fork_command(args, nonce)
    text = args.dup.force_encoding(Encoding::UTF_8)
    dir = json_str(text, "dir")
    marker = json_str(text, "sentinel")
    cookie = json_str(text, "cookie").to_s
    if dir.nil? || marker.nil? || dir.empty? || marker.empty?
      send_event("op" => "fork", "nonce" => nonce, "error" => "a fork needs a directory and an end marker")
      return false
    end
    facts = fork_facts
    flush_all(false)
    begin
      pid = Process.fork
    rescue NotImplementedError, SystemCallError => e
      send_event("op" => "fork", "nonce" => nonce, "error" => "fork failed: #{e.message}")
      return false
    end
    if pid
      send_event({ "op" => "fork", "nonce" => nonce, "pid" => pid }.merge(facts))
      return false
    end
    begin
      fork_channels(dir)
    rescue Exception # rubocop:disable Lint/RescueException
      Kernel.exit!(70) # the side adopting it sees its channels close
    end
    @sentinel = marker.b
    @pid = Process.pid
    key, eq, value = cookie.partition("=")
    ENV[key] = value unless key.empty? || eq.empty?
    true
  end

  # fork_facts is what a fork taken now leaves behind or shares, as data:
  # the threads besides this one (not copied: the copy has only this
  # one), named by their names or, unnamed, as Linux names them (Ruby's
  # file:line where each began) — never by inspect, which a cell may
  # have redefined; the open sockets, pipes and files (shared with the
  # copy); the child processes (not the copy's). The worker's own
  # descriptors are not counted.
  def self.fork_facts
    me = Process.pid
    names = {}
    others = []
    Thread.list.each do |t|
      next if t.equal?(Thread.main) || t.equal?(Thread.current)
      name = begin
        Thread.instance_method(:name).bind(t).call
      rescue StandardError
        nil
      end
      name = nil unless name.is_a?(String) && !name.empty?
      others << (name || "a thread")
      id = t.respond_to?(:native_thread_id) ? t.native_thread_id : nil
      names[id] = name if id && name
    end
    threads = begin
      Dir.children("/proc/self/task").map(&:to_i).sort.reject { |tid| tid == me }.map do |tid|
        names[tid] || fork_read("/proc/self/task/#{tid}/comm") || "?"
      end
    rescue SystemCallError
      others
    end
    shared = []
    begin
      Dir.children("/proc/self/fd").map(&:to_i).sort.each do |fd|
        next if fd <= 4 # the console, fds 1 and 2, commands, events
        target = begin
          File.readlink("/proc/self/fd/#{fd}")
        rescue SystemCallError
          next # the listing's own descriptor, closed since
        end
        if target.start_with?("socket:")
          shared << "socket (fd #{fd})"
        elsif target.start_with?("pipe:")
          shared << "pipe (fd #{fd})"
        elsif target.start_with?("/") && !target.start_with?("/proc/") && !["/dev/null", "/dev/urandom"].include?(target)
          shared << target
        end
      end
    rescue SystemCallError
      nil
    end
    children = []
    begin
      Dir.children("/proc/self/task").each do |tid|
        (fork_read("/proc/self/task/#{tid}/children") || "").split.each do |pid|
          children << "#{fork_read("/proc/#{pid}/comm") || "?"} (pid #{pid})"
        end
      end
    rescue SystemCallError
      nil
    end
    facts = {}
    { "threads" => threads, "shared" => shared, "children" => children }.each do |key, items|
      next if items.empty?
      facts[key] = items.first(@fork_list).map { |s| cut(utf8(s), @fork_words, " ") }
      facts["#{key}_total"] = items.length
    end
    facts
  rescue StandardError
    {}
  end

  # fork_read is a /proc file's first line, or nil.
  def self.fork_read(path)
    line = File.open(path, "rb") { |f| f.gets }
    line && line.chomp
  rescue SystemCallError, IOError
    nil
  end

  # fork_channels points the copy's channels at dir's pipes, keeping every
  # descriptor number the worker knows, in its own process group first.
  # The adopting session holds a writer of cmd and con and a reader of out
  # and ev: opened in this order, no open waits.
  def self.fork_channels(dir)
    Process.setpgid(0, 0)
    onto = lambda do |name, mode, targets|
      f = File.open(File.join(dir, name), mode)
      targets.each { |io| io.reopen(f) }
      f.close
    end
    onto.call("cmd", "rb", [@commands])
    if File.exist?(File.join(dir, "con"))
      onto.call("con", "r", [STDIN])
    else
      STDIN.reopen(File::NULL) # never the parent's console
    end
    onto.call("out", "w", [STDOUT, STDERR])
    onto.call("ev", "wb", [@events])
    [@commands, @events].each { |io| io.close_on_exec = true }
    [STDIN, STDOUT, STDERR].each { |io| io.close_on_exec = false unless io.closed? }
    @events.sync = true
    STDOUT.sync = true
    STDERR.sync = true
  end
