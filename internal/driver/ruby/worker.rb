# polyrepl's Ruby worker: one session's namespace.
#
# The daemon starts it as `ruby worker.rb SENTINEL` and talks to it over
# three channels:
#   fd 3  commands in: a header line "exec CELL VALUE_LIMIT NBYTES" and then
#         NBYTES of UTF-8 code
#   fd 4  events out, one JSON object per line ({"op": "hello"|"done", ...})
#   fd 1  and fd 2 are one pipe that carries every byte the cell prints: its
#         own output and its subprocesses'. After a cell ends, the worker
#         writes SENTINEL to fd 1 so the daemon knows that all of that cell's
#         output has arrived before it reports the cell done.
#
# Between cells, "fork NBYTES NONCE" copies the worker (fork.rb).
#
# Cells run in a copy of TOPLEVEL_BINDING, as in irb: self is main, local
# variables persist from cell to cell and `def` makes private methods of
# Object. This file therefore has no top-level local variables (they would
# show through that binding), defines no constants and no methods on
# Object: the worker is an anonymous module whose singleton methods call
# each other, so a user's `def send` or `def puts` cannot reach it. Kernel
# functions are called through Kernel for the same reason.
#
# Keep it valid Ruby 2.7 and free of requires: json alone costs
# milliseconds on every session's start, so the few shapes sent are encoded
# by hand. pp is loaded only when a wide value is first shown.
Module.new do
  # Bounds of a cell's error in the "done" event, in characters, as the
  # Python worker's: a cell can raise a message of any size, and the event
  # must stay small enough for the daemon to take it whole. The whole
  # error is saved first to a file in the spool directory the daemon
  # gives.
  @message_limit = 10_000
  @traceback_limit = 30_000
  @type_limit = 200
  @spool = ENV["POLYREPL_WORKER_SPOOL"]

  @escapes = {
    '"' => '\\"', '\\' => '\\\\', "\n" => '\\n', "\r" => '\\r',
    "\t" => '\\t', "\b" => '\\b', "\f" => '\\f'
  }

  def self.main(argv)
    if (RUBY_VERSION.split(".").map(&:to_i) <=> [2, 7]) < 0
      STDERR.write("polyrepl needs Ruby 2.7 or newer; this is #{RUBY_VERSION}\n")
      Kernel.exit!(3)
    end
    @worker_file = __FILE__
    @worker_path = File.expand_path(__FILE__)
    @pid = Process.pid
    # The end marker comes in the environment (older daemons: the first
    # argument), taken out before any cell runs.
    @sentinel = (ENV.delete("POLYREPL_WORKER_SENTINEL") || argv[0]).to_s.b
    # Like irb: no script arguments, so a cell's bare `gets` reads stdin
    # instead of opening the sentinel as a file.
    ARGV.clear

    # The control channels must not leak into the cell's subprocesses.
    @commands = IO.for_fd(3, "rb", autoclose: false)
    @commands.close_on_exec = true
    @events = IO.for_fd(4, "wb", autoclose: false)
    @events.close_on_exec = true
    @events.sync = true
    # The end marker goes straight to fd 1, whatever $stdout is now.
    @fd1 = IO.for_fd(1, "wb", autoclose: false)

    # Strings read, built and inspected are UTF-8 whatever the locale (with
    # LANG=C, "é".inspect would be "\u00E9"); the streams stay unconverted
    # so every byte a cell writes passes as is. Unbuffered streams keep
    # prints in order with the output of subprocesses on the same pipe.
    verbose = $VERBOSE
    $VERBOSE = nil # -w would warn about setting the default encoding
    Encoding.default_external = Encoding::UTF_8
    $VERBOSE = verbose
    STDOUT.sync = true
    STDERR.sync = true

    @binding = TOPLEVEL_BINDING.dup
    @base_constants = Object.constants
    @base_methods = Object.private_instance_methods(false) + Object.public_instance_methods(false)
    @running = false

    # Only a running cell is interrupted; a late SIGINT that arrives after
    # the cell finished must not kill the session. An empty message makes
    # the traceback read like Ruby's own for Ctrl-C.
    Signal.trap("INT") { Kernel.raise(Interrupt, "") if @running }

    install_stdin

    @hello = { "op" => "hello", "version" => RUBY_VERSION, "implementation" => RUBY_ENGINE,
               "executable" => executable, "pid" => @pid }
    send_event(@hello)

    while (header = @commands.gets)
      parts = header.split(" ")
      if parts.length == 2 && parts[0] == "input"
        @commands.read(parts[1].to_i) # an answer that came too late: its cell ended
        next
      end
      if parts.length == 3 && parts[0] == "complete"
        size = parts[1].to_i
        word = size > 0 ? @commands.read(size) : "".b
        break if word.nil?
        # Between cells, answered at once: no cell, nothing printed.
        send_event("op" => "complete", "nonce" => parts[2], "matches" => complete(word))
        next
      end
      if parts.length == 3 && parts[0] == "vars"
        size = parts[1].to_i
        args = size > 0 ? @commands.read(size) : "".b
        break if args.nil?
        # A look between cells (vars.rb): nothing printed, nothing assigned.
        send_event({ "op" => "vars", "nonce" => parts[2] }.merge(look(args.force_encoding(Encoding::UTF_8))))
        next
      end
      if parts.length == 3 && parts[0] == "fork"
        size = parts[1].to_i
        args = size > 0 ? @commands.read(size) : "".b
        break if args.nil?
        # A copy of the worker between cells (fork.rb): the copy goes on
        # here, on its own channels, and says hello there.
        send_event(@hello.merge("pid" => @pid, "forked" => true)) if fork_command(args, parts[2])
        next
      end
      next unless (parts.length == 4 || parts.length == 5) && parts[0] == "exec"
      cell = parts[1].to_i
      limit = parts[2].to_i
      size = parts[3].to_i
      code = size > 0 ? @commands.read(size) : "".b
      break if code.nil? # the daemon closed the channel: end quietly
      code.force_encoding(Encoding::UTF_8)
      @cell, @nonce = cell, parts[4]
      result = run_cell(cell, code, limit)
      if Process.pid != @pid
        # A child forked by the cell ran off its end: it must not answer
        # for the session or read its commands.
        flush_all(false)
        Kernel.exit!(0)
      end
      result["flushed"] = flush_all(true)
      # The exec's nonce, so the daemon takes no event a cell forged; it
      # comes first with the cell and status, which the daemon reads from
      # the head of an event too long to take.
      head = { "op" => "done", "cell" => cell }
      head["nonce"] = parts[4] if parts[4]
      head["status"] = result["status"]
      send_event(bounded(head.merge(result) { |_k, first, _| first }))
    end
  end

  # A cell's reads of $stdin — and a bare gets, which reads $stdin
  # through ARGF — ask the daemon: each line is a question ("input"
  # event, after the end marker so that what the cell printed comes
  # first) answered on the command channel ("input NBYTES" and the line,
  # or "eof"). Nothing reads polyrepl's own commands as a cell's input.
  def self.install_stdin
    worker = self
    io = Object.new
    io.define_singleton_method(:gets) { |*_| worker.ask }
    io.define_singleton_method(:readline) do |*_|
      line = worker.ask
      Kernel.raise(EOFError, "end of file reached") if line.nil?
      line
    end
    io.define_singleton_method(:each_line) do |*_, &blk|
      while (line = worker.ask)
        blk.call(line)
      end
      io
    end
    io.define_singleton_method(:readlines) { |*_| io.each_line.to_a }
    io.define_singleton_method(:read) { |*_| io.readlines.join }
    io.define_singleton_method(:eof?) { false }
    io.define_singleton_method(:tty?) { false }
    io.define_singleton_method(:isatty) { false }
    io.define_singleton_method(:fileno) { 0 }
    io.define_singleton_method(:external_encoding) { Encoding::UTF_8 }
    $stdin = io
  end

  # ask sends the running cell's question and returns the answer with its
  # newline, or nil for end of file.
  def self.ask
    event = { "op" => "input", "cell" => @cell, "prompt" => "", "password" => false, "shown" => true }
    event["nonce"] = @nonce if @nonce
    event["flushed"] = flush_all(true)
    send_event(event)
    header = @commands.gets
    parts = header.to_s.split(" ")
    return nil unless parts.length == 2 && parts[0] == "input"
    n = parts[1].to_i
    line = n > 0 ? @commands.read(n) : "".b
    (line || "".b).force_encoding(Encoding::UTF_8) + "\n"
  end

  def self.executable
    Kernel.require("rbconfig") unless defined?(RbConfig)
    RbConfig.ruby
  rescue LoadError, StandardError
    nil
  end

  def self.run_cell(cell, code, limit)
    result = { "op" => "done", "cell" => cell, "status" => "done" }
    begin
      begin
        @running = true
        value = @binding.eval(code, "(cell #{cell})", 1)
        # irb shows every value, nil too, except for a cell with no code.
        unless value.nil? && blank?(code)
          @binding.local_variable_set(:_, value)
          text = display(value, limit)
          result["value_total"] = text.length
          if text.length > limit
            head = limit / 2
            result["value_head"] = text[0, head]
            result["value_tail"] = text[text.length - (limit - head), limit - head]
          else
            result["value"] = text
          end
        end
      ensure
        @running = false
      end
    rescue Interrupt => e
      result["status"] = "interrupted"
      result["error"] = describe(e)
    rescue SystemExit => e
      if e.success?
        result["note"] = "exit was caught; the session stays up"
      else
        result["status"] = "error"
        result["error"] = describe(e)
        result["note"] = "exit(#{e.status}) was caught; the session stays up"
      end
    rescue Exception => e # a cell may raise anything, SyntaxError and NoMemoryError too
      result["status"] = "error"
      result["error"] = describe(e)
    end
    cell_look(result, code)
  end

  def self.blank?(code)
    code.each_line.all? do |line|
      s = line.strip
      s.empty? || s.start_with?("#")
    end
  end

  # display is what irb prints after "=> ": inspect, and for a value too
  # wide for one line, pp's layout (irb's default inspector). Values that
  # will be cut anyway keep inspect: pp is many times slower on big data.
  def self.display(value, limit)
    text = value.inspect.to_s
    if text.length > 79 && text.length <= limit && !value.is_a?(String)
      begin
        unless Kernel.method_defined?(:pretty_inspect)
          before = Object.constants
          Kernel.require("pp")
          @base_constants |= Object.constants - before
        end
        text = value.pretty_inspect.to_s.chomp
      rescue StandardError, LoadError
        nil # keep inspect
      end
    end
    utf8(text)
  end

  # describe is the error as irb would show it: Ruby's own report of an
  # uncaught exception, with the worker's frames removed.
  def self.describe(e)
    name = e.class.name || e.class.inspect
    message = begin
      utf8(e.message)
    rescue Exception
      "<message of the exception failed>"
    end
    clean_chain(e)
    bt = e.backtrace
    text = nil
    if bt && !bt.empty?
      begin
        text = utf8(e.full_message(highlight: false, order: :top))
      rescue Exception
        text = nil
      end
    end
    if text.nil?
      # With no frames left (a syntax error in the cell), full_message
      # would name the worker's own location.
      first, rest = message.split("\n", 2)
      text = "#{first} (#{name})\n"
      text += rest + "\n" if rest && !rest.empty?
    end
    { "type" => name, "message" => message, "traceback" => text }
  end

  # clean_chain removes the worker's frames from an exception and its
  # causes: everything below the outermost cell frame (the worker's eval
  # and loop) and the SIGINT handler above the interrupted line.
  def self.clean_chain(e)
    seen = {}
    while e && !seen[e.object_id]
      seen[e.object_id] = true
      bt = e.backtrace
      if bt
        last = bt.rindex { |l| l.start_with?("(cell ") }
        kept = last ? bt[0..last] : bt
        kept = kept.reject { |l| worker_frame?(l) }
        begin
          e.set_backtrace(kept)
        rescue StandardError
          nil
        end
      end
      e = e.cause
    end
  end

  def self.worker_frame?(line)
    line.start_with?(@worker_file + ":") || line.start_with?(@worker_path + ":")
  end

  @keywords = %w[BEGIN END alias and begin break case class def defined? do else elsif end
                 ensure false for if in module next nil not or redo rescue retry return self
                 super then true undef unless until when while yield __method__]

  # complete is what word may become, for a console's Tab, as irb's Tab:
  # a local variable, method, constant or keyword of the session's
  # binding; after "name." the methods of the object a plain name (a
  # local variable or constant) holds, after "Name::" its constants and
  # methods. No expression is evaluated, and Kernel#methods is called
  # whatever the object redefines. Sorted, at most 200.
  def self.complete(word)
    word = word.dup.force_encoding(Encoding::UTF_8)
    return [] unless word.valid_encoding? && word.length <= 300
    methods_of = Kernel.instance_method(:methods)
    if (m = /\A([A-Za-z_][A-Za-z0-9_]*)(\.|::)([A-Za-z0-9_]*[?!]?)\z/.match(word))
      head, sep, prefix = m[1], m[2], m[3]
      if head.match?(/\A[A-Z]/)
        return [] unless Object.const_defined?(head, false)
        obj = Object.const_get(head, false)
      elsif @binding.local_variable_defined?(head.to_sym)
        obj = @binding.local_variable_get(head.to_sym)
      else
        return []
      end
      names = methods_of.bind(obj).call
      names += obj.constants if sep == "::" && obj.is_a?(Module)
      head += sep
    elsif word.match?(/\A[A-Za-z_][A-Za-z0-9_]*[?!]?\z/)
      me = @binding.receiver
      prefix, head = word, ""
      names = @binding.local_variables + methods_of.bind(me).call +
              Kernel.instance_method(:private_methods).bind(me).call +
              Object.constants + @keywords
    else
      return []
    end
    found = names.map(&:to_s).select { |n| n.start_with?(prefix) }.uniq.sort
    found.first(200).map { |n| head + n }.select { |n| n.length <= 300 }
  rescue StandardError, ScriptError
    []
  end

  # names are the user's top-level names: local variables, constants and
  # methods defined since the worker started by the session's own cells,
  # sorted, at most 500. A constant or method a library added (CSV, Date
  # and Forwardable after require "csv") is not the session's: its source
  # is the library's file, or none (C). Each is looked at again every
  # cell (microseconds each), so a name a cell defines again is its own.
  def self.names
    found = []
    @binding.local_variables.each do |n|
      s = n.to_s
      found << s unless s.start_with?("_")
    end
    (Object.constants - @base_constants).each do |n|
      found << n.to_s if own? { Object.const_source_location(n) }
    end
    methods = Object.private_instance_methods(false) + Object.public_instance_methods(false)
    (methods - @base_methods).each do |n|
      found << n.to_s if own? { Object.instance_method(n).source_location }
    end
    found.uniq.sort.first(500)
  rescue StandardError
    []
  end

  # own? says whether the name whose source location the block finds was
  # defined by a cell (its file is "(cell N)"). A Ruby without source
  # locations (before 2.7) takes every new name for the session's.
  def self.own?
    loc = yield
    loc.is_a?(Array) && loc[0].to_s.start_with?("(cell ")
  rescue NoMethodError
    true
  rescue StandardError, NameError
    false
  end

  # flush_all pushes out everything the cell wrote, then marks the end of
  # its output.
  def self.flush_all(mark)
    [$stdout, $stderr, STDOUT, STDERR].each do |s|
      begin
        s.flush
      rescue StandardError
        nil
      end
    end
    return false unless mark
    begin
      @fd1.syswrite(@sentinel)
      true
    rescue StandardError
      false # fd 1 was closed by the cell; the daemon won't wait
    end
  end

  # bounded holds a result's error to the bounds above, saying each cut
  # and how long the text was, with the whole saved to a file.
  def self.bounded(result)
    e = result["error"]
    return result unless e.is_a?(Hash)
    message, tb = e["message"].to_s, e["traceback"].to_s
    if message.length > @message_limit || tb.length > @traceback_limit
      if @spool
        whole = tb.include?(message) ? tb : "#{e["type"]}: #{message}\n\n#{tb}"
        begin
          path = File.join(@spool, "error-#{Process.pid}-#{Random.new.rand(1 << 48).to_s(16)}.txt")
          File.open(path, File::WRONLY | File::CREAT | File::EXCL, 0o600) { |f| f.write(whole) }
          e["whole"] = path
        rescue StandardError => err
          e["whole_err"] = err.message.to_s
        end
      end
      e["message_total"] = message.length if message.length > @message_limit
      e["traceback_total"] = tb.length if tb.length > @traceback_limit
    end
    e["type"] = cut(e["type"].to_s, @type_limit, " ")
    e["message"] = cut(message, @message_limit, "\n")
    e["traceback"] = cut(tb, @traceback_limit, "\n")
    result
  end

  # cut is text, or its head and tail with the cut said between them, as
  # the daemon's bound.Marker says it.
  def self.cut(text, limit, sep)
    return text if text.length <= limit
    head = limit / 2
    tail = limit - head
    n = text.length - limit
    count = n == 1 ? "1 character" : "#{n.to_s.reverse.scan(/\d{1,3}/).join(",").reverse} characters"
    "#{text[0, head]}#{sep}[\u2026 #{count} cut \u2026]#{sep}#{text[text.length - tail, tail]}"
  end

  def self.send_event(obj)
    @events.write(json(obj) + "\n")
  end

  def self.json(obj)
    case obj
    when nil then "null"
    when true then "true"
    when false then "false"
    when Integer then obj.to_s
    when Hash then "{" + obj.map { |k, v| quote(k.to_s) + ":" + json(v) }.join(",") + "}"
    when Array then "[" + obj.map { |v| json(v) }.join(",") + "]"
    else quote(obj.to_s)
    end
  end

  def self.quote(s)
    '"' + utf8(s).gsub(/["\\\x00-\x1f]/) { |c| @escapes[c] || "\\u%04x" % c.ord } + '"'
  end

  # utf8 makes any string valid UTF-8 for the daemon: bytes in another
  # encoding are converted, invalid ones replaced.
  def self.utf8(s)
    s = s.to_s
    return s if s.encoding == Encoding::UTF_8 && s.valid_encoding?
    if [Encoding::UTF_8, Encoding::BINARY, Encoding::US_ASCII].include?(s.encoding)
      s.dup.force_encoding(Encoding::UTF_8).scrub("\uFFFD")
    else
      s.encode(Encoding::UTF_8, invalid: :replace, undef: :replace, replace: "\uFFFD")
    end
  rescue StandardError
    s.dup.force_encoding(Encoding::UTF_8).scrub("?")
  end
  # vars.rb's methods, the looks, and fork.rb's, the fork, come here
  # (ruby.go).
end.main(ARGV)
