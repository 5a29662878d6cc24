# polyrepl's Julia worker: evaluates cells in Main as Julia's REPL does
# (soft scope, `ans`, values shown with show(…, MIME"text/plain"()), a
# trailing `;` hiding the value), over polyrepl's worker protocol (see
# internal/driver/worker): cells on fd 3, events on fd 4, everything
# printed on fd 1 and fd 2, then the sentinel.
module PolyreplWorker

const SENTINEL = ARGS[end]
const CMDS = Base.fdio(3)
const EVENTS = Base.fdio(4)

# The REPL standard library gives the REPL's own soft scope and semicolon
# rule; without it, plain top-level evaluation is used.
const REPLMOD = try
    Base.require(Base.PkgId(Base.UUID("3fa0cd96-eef1-5676-8a61-b3b8758bbffb"), "REPL"))
catch
    nothing
end

function jsonstr(s::AbstractString)
    io = IOBuffer()
    write(io, '"')
    for c in s
        if c == '"'
            write(io, "\\\"")
        elseif c == '\\'
            write(io, "\\\\")
        elseif c == '\n'
            write(io, "\\n")
        elseif c == '\r'
            write(io, "\\r")
        elseif c == '\t'
            write(io, "\\t")
        elseif c < ' ' || !isvalid(c)
            isvalid(c) ? print(io, "\\u", string(UInt32(c), base=16, pad=4)) : write(io, "\\ufffd")
        else
            write(io, c)
        end
    end
    write(io, '"')
    String(take!(io))
end

function send(fields::Vector{Pair{String,String}})
    line = "{" * join(["\"$k\":$v" for (k, v) in fields], ",") * "}\n"
    write(EVENTS, line)
    flush(EVENTS)
end

const HIDDEN = Set([:Base, :Core, :Main, :PolyreplWorker, :ans, :eval, :include, :err])

function usernames()
    out = String[]
    for n in names(Main; all=true, imported=false)
        s = string(n)
        (n in HIDDEN || startswith(s, '#')) && continue
        push!(out, s)
    end
    out
end

function showvalue(v)
    io = IOBuffer()
    ctx = IOContext(io, :limit => true, :module => Main, :displaysize => (24, 80))
    show(ctx, MIME"text/plain"(), v)
    String(take!(io))
end

function evalcell(cell::Int, code::String)
    mapexpr = REPLMOD === nothing ? identity : REPLMOD.softscope
    Base.include_string(mapexpr, Main, code, "REPL[$cell]")
end

hidesvalue(code) = REPLMOD === nothing ? endswith(rstrip(code), ';') : REPLMOD.ends_with_semicolon(code)

const REVISE = Ref(false)

function run(cell::Int, limit::Int, code::String)
    fields = Pair{String,String}["op" => "\"done\"", "cell" => string(cell)]
    status = "done"
    try
        REVISE[] && Base.invokelatest(getfield(Main, :Revise).revise)
        v = evalcell(cell, code)
        Base.invokelatest(Core.eval, Main, Expr(:(=), :ans, QuoteNode(v)))
        if v !== nothing && !hidesvalue(code)
            s = Base.invokelatest(showvalue, v)
            n = length(s)
            if limit > 0 && n > limit
                h = limit ÷ 2
                push!(fields, "value_head" => jsonstr(first(s, h)), "value_tail" => jsonstr(last(s, limit - h)),
                      "value_total" => string(n))
            else
                push!(fields, "value" => jsonstr(s))
            end
        end
    catch err
        bt = catch_backtrace()
        while err isa LoadError
            err = err.error
        end
        if err isa InterruptException
            status = "interrupted"
        else
            status = "error"
            msg = sprint(showerror, err)
            bt = try
                Base.scrub_repl_backtrace(bt)
            catch
                bt
            end
            tb = sprint((io, e) -> showerror(IOContext(io, :limit => true), e, bt), err)
            print(stderr, "ERROR: ", tb, "\n")
            push!(fields, "error" => "{\"type\":$(jsonstr(string(nameof(typeof(err))))),\"message\":$(jsonstr(msg)),\"traceback\":$(jsonstr(tb))}")
        end
    end
    push!(fields, "status" => "\"$status\"")
    # The names, and the look at them they come from (vars.jl).
    try
        append!(fields, Base.invokelatest(celllook))
    catch
        push!(fields, "names" => "[" * join(jsonstr.(usernames()), ",") * "]")
    end
    fields
end

function main()
    Base.exit_on_sigint(false)
    note = ""
    if Base.find_package("Revise") !== nothing
        try
            Core.eval(Main, :(using Revise))
            REVISE[] = true
            note = "Revise loaded"
        catch err
            note = "Revise is installed but failed to load: " * sprint(showerror, err)
        end
    end
    send(["op" => "\"hello\"", "version" => jsonstr(string(VERSION)),
          "executable" => jsonstr(joinpath(Sys.BINDIR, Base.julia_exename())),
          "pid" => string(getpid()), "note" => jsonstr(note)])
    while true
        header = try
            readline(CMDS)
        catch err
            err isa InterruptException && continue
            rethrow()
        end
        isempty(header) && eof(CMDS) && return
        f = split(header, ' ')
        if length(f) == 3 && f[1] == "vars"
            # A look between cells (polyrepl vars, vars.jl): it prints nothing.
            text = String(read(CMDS, parse(Int, f[2])))
            fields = Pair{String,String}["op" => "\"vars\"", "nonce" => jsonstr(String(f[3]))]
            try
                append!(fields, Base.invokelatest(look, text))
            catch err
                push!(fields, "error" => jsonstr("the look failed: " * string(nameof(typeof(err)))))
            end
            send(fields)
            continue
        end
        (length(f) == 4 && f[1] == "exec") || continue
        cell, limit, n = parse(Int, f[2]), parse(Int, f[3]), parse(Int, f[4])
        code = String(read(CMDS, n))
        fields = run(cell, limit, code)
        flushed = true
        try
            flush(stdout)
            flush(stderr)
            write(stdout, SENTINEL)
            flush(stdout)
        catch
            flushed = false
        end
        push!(fields, "flushed" => string(flushed))
        send(fields)
    end
end

end # module

PolyreplWorker.main()
