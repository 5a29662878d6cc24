# polyrepl's Ruby worker, its looks: the body of worker.rb's anonymous
# module goes on here (ruby.go puts this file in before its last line), so
# these are the worker's own singleton methods and instance variables.

  # ---- looks (polyrepl vars) ----------------------------------------------
  #
  # A look lists the session's names — local variables, main's instance
  # variables, the globals and constants cells made, methods cells defined
  # (all: every local, constant and global) — or the members of what a path
  # names, from their structure: Ruby's own methods, bound from Kernel,
  # Array, Hash, String and Struct, so a class that redefines size, each
  # or inspect is not asked. An object of another class gets its inspect
  # only in a look between cells, under a 0.2 s timer thread, with $stdout
  # and $stderr caught: its error or its time says so in note.

  @k_class = Kernel.instance_method(:class)
  @k_is_a = Kernel.instance_method(:is_a?)
  @k_ivars = Kernel.instance_method(:instance_variables)
  @k_ivar_get = Kernel.instance_method(:instance_variable_get)
  @k_ivar_defined = Kernel.instance_method(:instance_variable_defined?)
  @m_name = Module.instance_method(:name)
  @a_size = Array.instance_method(:size)
  @a_at = Array.instance_method(:[])
  @h_size = Hash.instance_method(:size)
  @h_each = Hash.instance_method(:each_pair)
  @h_key = Hash.instance_method(:key?)
  @h_fetch = Hash.instance_method(:fetch)
  @s_length = String.instance_method(:length)
  @s_bytesize = String.instance_method(:bytesize)
  @s_slice = String.instance_method(:[])
  @s_inspect = String.instance_method(:inspect)
  @st_members = Struct.instance_method(:members)
  @st_values = Struct.instance_method(:to_a)
  @look_timeout = Class.new(StandardError)
  @look_error = Class.new(StandardError) # a path that names nothing: its message is the answer
  # The seconds all the inspects of one look may take together: the
  # holder waits 10 s for a look, and a look of many slow objects must
  # answer well within.
  @look_budget = 1.0
  # Globals: Ruby's and the libraries' (require "English" adds $PID…)
  # are not the session's; a new one is the session's if the cell that
  # made it names it.
  @base_globals = Kernel.global_variables
  @own_globals = []

  def self.call(m, obj, *args, &blk)
    m.bind(obj).call(*args, &blk)
  end

  def self.is?(obj, mod)
    call(@k_is_a, obj, mod)
  end

  def self.class_name(obj)
    k = call(@k_class, obj)
    call(@m_name, k) || "#<Class>"
  end

  def self.plural(n, one, many)
    "#{n} #{n == 1 ? one : many}"
  end

  # short is a value in a few characters: Ruby's own inspect for the core
  # values, the class for the rest.
  def self.short(v)
    case v
    when nil, true, false, Integer, Float, Symbol, Rational, Complex then v.inspect
    when String
      call(@s_inspect, call(@s_length, v) > 40 ? call(@s_slice, v, 0, 40) + "…" : v)
    when Array then "[#{plural(call(@a_size, v), "item", "items")}]"
    when Hash then "{#{plural(call(@h_size, v), "key", "keys")}}"
    else class_name(v)
    end
  rescue StandardError
    class_name(v)
  end

  def self.join(parts, width, more)
    out = ""
    parts.each do |p|
      nxt = out.empty? ? p : "#{out}, #{p}"
      return out.empty? ? "…" : "#{out}, …" if nxt.length > width - 2
      out = nxt
    end
    more ? (out.empty? ? "…" : "#{out}, …") : out
  end

  def self.hash_pairs(h, n)
    out = []
    call(@h_each, h) do |k, v|
      break if out.length >= n
      out << [k, v]
    end
    out
  end

  def self.ivar_pairs(obj, n)
    call(@k_ivars, obj).first(n).map { |iv| [iv.to_s, call(@k_ivar_get, obj, iv)] }
  end

  # line is the line for v under name; live allows the timed inspect.
  def self.line(name, v, a)
    w = a["width"]
    l = { "name" => name, "type" => class_name(v) }
    # (no == nor nil? of the object's own: is? and class are Kernel's)
    if is?(v, NilClass) || is?(v, TrueClass) || is?(v, FalseClass) || is?(v, Numeric) || is?(v, Symbol)
      l["preview"] = v.inspect if [NilClass, TrueClass, FalseClass, Integer, Float, Symbol, Rational, Complex].include?(call(@k_class, v))
    elsif is?(v, String)
      n = call(@s_length, v)
      l["size"] = plural(n, "character", "characters")
      l["memory"] = call(@s_bytesize, v)
      l["preview"] = call(@s_inspect, call(@s_slice, v, 0, w))
    elsif is?(v, Array)
      n = call(@a_size, v)
      parts = (0...[n, 20].min).map { |i| short(call(@a_at, v, i)) }
      l.merge!("size" => plural(n, "item", "items"), "preview" => "[#{join(parts, w - 2, n > 20)}]", "members" => n > 0)
    elsif is?(v, Hash)
      n = call(@h_size, v)
      parts = hash_pairs(v, 20).map { |k, x| "#{short(k)} => #{short(x)}" }
      l.merge!("size" => plural(n, "key", "keys"), "preview" => "{#{join(parts, w - 2, n > 20)}}", "members" => n > 0)
    elsif is?(v, Struct)
      m = call(@st_members, v)
      parts = m.zip(call(@st_values, v)).first(20).map { |k, x| "#{k}: #{short(x)}" }
      l.merge!("size" => plural(m.length, "member", "members"), "preview" => join(parts, w, m.length > 20), "members" => true)
    elsif is?(v, Range)
      l["preview"] = "#{short(v.begin)}#{v.exclude_end? ? "..." : ".."}#{short(v.end)}" if call(@k_class, v) == Range
    elsif is?(v, Proc) || is?(v, Method) || is?(v, UnboundMethod)
      l["preview"] = "#{v.lambda? ? "lambda" : "proc"} (#{params(v.parameters)})" if is?(v, Proc)
    elsif is?(v, Module)
      l["preview"] = call(@m_name, v).to_s
    else
      ivs = call(@k_ivars, v)
      parts = ivar_pairs(v, 20).map { |k, x| "#{k}=#{short(x)}" }
      l["preview"] = join(parts, w, ivs.length > 20)
      l["members"] = !ivs.empty?
      timed_inspect(v, l, a) if a["live"]
    end
    l
  rescue StandardError => e
    { "name" => name, "type" => (class_name(v) rescue "?"), "note" => "cannot look: #{e.message}" }
  end

  def self.params(ps)
    ps.map do |kind, n|
      case kind
      when :req then n.to_s
      when :opt then "#{n} = …"
      when :rest then "*#{n}"
      when :keyreq then "#{n}:"
      when :key then "#{n}: …"
      when :keyrest then "**#{n}"
      when :block then "&#{n}"
      else n.to_s
      end
    end.join(", ")
  end

  # timed_inspect is inspect of an object of a class a look does not know,
  # within timeout, with what it prints caught: its text as the preview, or
  # its error or time in note.
  def self.timed_inspect(v, l, a)
    if a["budget"] <= 0
      l["note"] = "the look's time for previews (#{@look_budget} s) ran out: no inspect"
      return
    end
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    limit = [a["timeout"], a["budget"]].min
    sink = Object.new
    sink.define_singleton_method(:write) { |*s| s.sum { |x| x.to_s.length } }
    out, err = $stdout, $stderr
    me = Thread.current
    timer = Thread.new do
      sleep limit
      me.raise(@look_timeout, "timeout")
    end
    begin
      $stdout = $stderr = sink
      text = v.inspect
      l["preview"] = utf8(text.to_s).gsub(/\s+/, " ")[0, a["width"] * 2] if text
    ensure
      timer.kill
      timer.join
      $stdout, $stderr = out, err
      a["budget"] -= Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
    end
  rescue @look_timeout
    l["note"] = if limit < a["timeout"]
                  "the look's time for previews (#{@look_budget} s) ran out during inspect"
                else
                  "inspect took over #{a["timeout"]} s"
                end
  rescue Exception => e # rubocop:disable Lint/RescueException: a look survives any inspect
    l["note"] = "inspect raised #{class_name(e)}: #{(e.message rescue "")}"
  end

  # own_names are the session's names, sorted, each with how to read it.
  def self.own_names(all)
    found = {}
    @binding.local_variables.each do |n|
      s = n.to_s
      found[s] = [:local, n] if all || !s.start_with?("_")
    end
    main = @binding.receiver
    call(@k_ivars, main).each { |n| found[n.to_s] = [:ivar, n] }
    globals = all ? Kernel.global_variables : @own_globals
    globals.each { |n| found[n.to_s] = [:global, n] }
    consts = all ? Object.constants : (Object.constants - @base_constants).select { |n| own? { Object.const_source_location(n) } }
    consts.each { |n| found[n.to_s] = [:const, n] }
    methods = Object.private_instance_methods(false) + Object.public_instance_methods(false)
    (methods - @base_methods).each do |n|
      found[n.to_s] ||= [:method, n] if own? { Object.instance_method(n).source_location }
    end
    found.sort_by { |k, _| k }
  end

  # read is the value a name holds: [value] or [nil, note] where reading
  # would run code (an autoload) or a method would be called.
  def self.read(kind, n)
    case kind
    when :local then [@binding.local_variable_get(n)]
    when :ivar then [call(@k_ivar_get, @binding.receiver, n)]
    when :global then [@binding.eval(n.to_s)]
    when :const
      return [nil, "autoload: not loaded by a look"] if Object.autoload?(n)
      [Object.const_get(n, false)]
    else [nil, nil]
    end
  end

  def self.name_line(name, kind, n, a)
    if kind == :method
      m = Object.instance_method(n)
      return { "name" => name, "type" => "method", "preview" => "def #{n}(#{params(m.parameters)})" }
    end
    v, note = read(kind, n)
    return { "name" => name, "type" => "autoload", "note" => note } if note
    line(name, v, a)
  rescue StandardError, ScriptError => e
    { "name" => name, "type" => kind.to_s, "note" => "cannot look: #{e.message}" }
  end

  def self.look_names(a)
    found = own_names(a["all"])
    lines = found.first(a["limit"]).map { |name, (kind, n)| name_line(name, kind, n, a) }
    [lines, found.length]
  end

  # look answers a "vars" command.
  def self.look(args)
    a = { "path" => "", "all" => false, "limit" => 100, "width" => 80, "timeout" => 0.2, "live" => true,
          "budget" => @look_budget }
    a["path"] = json_str(args, "path") || ""
    a["all"] = args.match?(/"all"\s*:\s*true/)
    a["limit"] = (args[/"limit"\s*:\s*(\d+)/, 1] || 100).to_i.clamp(1, 10_000)
    a["width"] = (args[/"preview"\s*:\s*(\d+)/, 1] || 80).to_i.clamp(10, 1000)
    a["timeout"] = (args[/"timeout"\s*:\s*([0-9.]+)/, 1] || 0.2).to_f.clamp(0.01, 5)
    if a["path"].empty?
      lines, total = look_names(a)
      return { "vars" => lines, "total" => total }
    end
    lines, total = members(follow(a["path"], a["all"]), a)
    { "vars" => lines, "total" => total }
  rescue @look_error => e
    { "error" => e.message }
  rescue StandardError, ScriptError => e
    { "error" => "the look failed: #{e.message}" }
  end

  # json_str is the JSON string field key of text, decoded.
  def self.json_str(text, key)
    m = /"#{key}"\s*:\s*"((?:[^"\\]|\\.)*)"/.match(text)
    return nil unless m
    m[1].gsub(/\\u([0-9a-fA-F]{4})|\\(.)/) do
      if $1 then [$1.hex].pack("U") else { "n" => "\n", "t" => "\t", "r" => "\r", "b" => "\b", "f" => "\f" }[$2] || $2 end
    end.encode("UTF-8", invalid: :replace, undef: :replace).scrub
  end

  # follow is the object a path names: a local, @ivar, $global or
  # Constant (A::B), then [integer], ["key"], ['key'], [:sym] or .@ivar —
  # a small grammar, never evaluated.
  def self.follow(path, all)
    bad = @look_error.new("cannot read the path #{path.inspect}: a name, then [0], [\"key\"], [:key] or .@ivar")
    m = /\A(?:([a-z_][A-Za-z0-9_]*)|(@[A-Za-z_][A-Za-z0-9_]*)|(\$[A-Za-z_][A-Za-z0-9_]*)|([A-Z][A-Za-z0-9_]*(?:::[A-Z][A-Za-z0-9_]*)*))/.match(path)
    raise bad unless m
    v = if m[1]
          raise @look_error, "undefined local variable or method `#{m[1]}' for main:Object" unless @binding.local_variable_defined?(m[1].to_sym)
          @binding.local_variable_get(m[1].to_sym)
        elsif m[2]
          raise @look_error, "main has no instance variable #{m[2]}" unless call(@k_ivar_defined, @binding.receiver, m[2].to_sym)
          call(@k_ivar_get, @binding.receiver, m[2].to_sym)
        elsif m[3]
          raise @look_error, "no global variable #{m[3]}" unless Kernel.global_variables.include?(m[3].to_sym)
          @binding.eval(m[3])
        else
          m[4].split("::").inject(Object) do |mod, c|
            raise @look_error, "uninitialized constant #{c}" unless is?(mod, Module) && mod.const_defined?(c, false)
            raise @look_error, "#{c} is autoloaded: a look does not load it" if mod.autoload?(c)
            mod.const_get(c, false)
          end
        end
    where = m[0]
    rest = path[m[0].length..]
    until rest.empty?
      if (s = /\A\.(@[A-Za-z_][A-Za-z0-9_]*)/.match(rest))
        raise @look_error, "#{where} has no instance variable #{s[1]}" unless call(@k_ivar_defined, v, s[1].to_sym)
        v = call(@k_ivar_get, v, s[1].to_sym)
      elsif (s = /\A\[\s*(?:(-?\d+)|"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|:([A-Za-z_][A-Za-z0-9_]*[?!]?))\s*\]/.match(rest))
        key = if s[1] then s[1].to_i
              elsif s[2] then json_str("\"k\":\"#{s[2]}\"", "k")
              elsif s[3] then s[3].gsub(/\\(.)/, '\1')
              else s[4].to_sym
              end
        v = index(v, key, where)
      else
        raise bad
      end
      where += s[0]
      rest = rest[s[0].length..]
    end
    v
  end

  def self.index(v, key, where)
    if is?(v, Array)
      raise @look_error, "#{where} is an Array: index it with an integer" unless key.is_a?(Integer)
      n = call(@a_size, v)
      raise @look_error, "index #{key} outside of #{where} (#{plural(n, "item", "items")})" unless key >= -n && key < n
      call(@a_at, v, key)
    elsif is?(v, Hash)
      raise @look_error, "key not found in #{where}: #{key.inspect}" unless call(@h_key, v, key)
      call(@h_fetch, v, key)
    elsif is?(v, Struct)
      ms = call(@st_members, v)
      i = key.is_a?(Integer) ? key : ms.index(key.to_sym)
      raise @look_error, "#{where} has no member #{key.inspect}" unless i && i >= -ms.length && i < ms.length
      call(@st_values, v)[i]
    else
      raise @look_error, "#{where} is of class #{class_name(v)}: a look indexes Arrays, Hashes and Structs, and reads .@ivars"
    end
  end

  # members is the lines for what v holds: an Array's items, a Hash's keys,
  # a Struct's members, an object's instance variables.
  def self.members(v, a)
    if is?(v, Array)
      n = call(@a_size, v)
      return [(0...[n, a["limit"]].min).map { |i| line("[#{i}]", call(@a_at, v, i), a) }, n]
    end
    if is?(v, Hash)
      return [hash_pairs(v, a["limit"]).map { |k, x| line(key_name(k), x, a) }, call(@h_size, v)]
    end
    if is?(v, Struct)
      ms = call(@st_members, v)
      return [ms.zip(call(@st_values, v)).first(a["limit"]).map { |k, x| line(":#{k}", x, a) }, ms.length]
    end
    ivs = call(@k_ivars, v)
    raise @look_error, "#{a["path"]} is of class #{class_name(v)}, with no instance variables: it has no members" if ivs.empty?
    [ivar_pairs(v, a["limit"]).map { |k, x| line(k, x, a) }, ivs.length]
  end

  # key_name is a Hash key as the path to it writes it: "k", :k, 1.
  def self.key_name(k)
    case k
    when String then call(@s_inspect, k)
    when Symbol, Integer then k.inspect
    else short(k)
    end
  end

  # cell_look is the look a cell's "done" carries (no inspect), and the
  # names from the same source.
  def self.cell_look(result, code)
    (Kernel.global_variables - @base_globals - @own_globals).each do |g|
      (code.match?(/#{Regexp.escape(g.to_s)}(?![A-Za-z0-9_])/) ? @own_globals : @base_globals) << g
    end
    a = { "all" => false, "limit" => 100, "width" => 80, "live" => false }
    found = own_names(false)
    result["names"] = found.first(500).map(&:first)
    result["vars"] = found.first(100).map { |name, (kind, n)| name_line(name, kind, n, a) }
    result["vars_total"] = found.length
    result
  rescue StandardError
    result["names"] = names
    result
  end
