# polyrepl's Julia worker, its looks (polyrepl vars): more of the body of
# worker.jl's module PolyreplWorker (julia.go puts this file in before its
# `end # module`), so it uses worker.jl's jsonstr and HIDDEN.
#
# A look lists the session's names — the globals of Main that cells made:
# values, functions, types, macros (not modules, the worker's own, or with
# all: everything names(Main) gives) — or the members of what a path names
# (a.b a field by getfield, a DataFrame's column; a[1] an Array's or a
# Tuple's item; d["k"], d[:k], d[1] a Dict's value), from their structure.
# Base's own types are told by Base's code (length, size, iteration,
# show of numbers, strings and symbols); DataFrames only through the
# DataFrames module a cell loaded, never loading it. An object of any
# other type gets its type and fields, and its show only in a look between
# cells, in a task that has 0.2 s (1 s for the whole look), with stdout and
# stderr sent to devnull meanwhile: its error or its time says so in note.
# A show that never yields (a loop with no I/O or sleep) is not cut: it
# holds the look until polyrepl interrupt reaches it.
#
# This code has never run where polyrepl is tested (no Julia there): it is
# written against Julia 1.9.

# ---- looks (polyrepl vars) -----------------------------------------------

const LOOK_BUDGET = 1.0 # seconds all the shows of one look may take together
const LOOK_ITEMS = 20   # items a preview reads at most

mutable struct Look
    live::Bool
    all::Bool
    limit::Int
    width::Int
    timeout::Float64
    budget::Float64
end

# LookError: a path that names nothing; its message is the answer.
struct LookError <: Exception
    msg::String
end

mutable struct VarLine
    name::String
    type::String
    size::String
    memory::Int
    preview::String
    note::String
    members::Bool
end
VarLine(name::AbstractString, type::AbstractString) = VarLine(String(name), String(type), "", 0, "", "", false)

# fit is s cut to n characters, the cut said with "…".
function fit(s::AbstractString, n::Integer)
    s = String(s)
    ncodeunits(s) <= n && return s
    c = 0
    for i in eachindex(s)
        c += 1
        if c == n
            return nextind(s, i) > ncodeunits(s) ? s : s[1:prevind(s, i)] * "…"
        end
    end
    s
end

function linejson(l::VarLine, width::Int)
    parts = String["\"name\":" * jsonstr(fit(l.name, 200)), "\"type\":" * jsonstr(fit(l.type, 120))]
    isempty(l.size) || push!(parts, "\"size\":" * jsonstr(fit(l.size, 80)))
    l.memory > 0 && push!(parts, "\"memory\":" * string(l.memory))
    isempty(l.preview) || push!(parts, "\"preview\":" * jsonstr(fit(l.preview, width)))
    isempty(l.note) || push!(parts, "\"note\":" * jsonstr(fit(l.note, 200)))
    l.members && push!(parts, "\"members\":true")
    "{" * join(parts, ",") * "}"
end

plural(n::Integer, one::String, many::String) = string(n, " ", n == 1 ? one : many)

# joinparts is parts joined by ", " within width, "…" for the rest.
function joinparts(parts::Vector{String}, width::Int, more::Bool)
    out = ""
    for p in parts
        nxt = isempty(out) ? p : out * ", " * p
        length(nxt) > width - 3 && return isempty(out) ? "…" : out * ", …"
        out = nxt
    end
    more ? (isempty(out) ? "…" : out * ", …") : out
end

# flat is text on one line.
flat(s::AbstractString) = strip(replace(fit(s, 4000), r"\s+" => " "))

# plain: a type of Base's or Core's whose parameters are plain too, so
# Base's show of it calls no method of the session's.
function plain(T)
    T isa DataType || return false
    Base.moduleroot(parentmodule(T)) in (Base, Core) || return false
    for p in T.parameters
        p isa Type && !plain(p) && return false
    end
    true
end

# typetext is a type as Julia writes it (Base's show of a type).
typetext(T) = try
    string(T)
catch
    "?"
end

function stringpreview(s::AbstractString, width::Int)
    head = first(s, width)
    r = repr(String(head))
    ncodeunits(head) < ncodeunits(s) ? fit(r[1:prevind(r, lastindex(r))] * "…", width) : fit(r, width)
end

# short is a value in a few characters, from its structure.
function short(v)
    v === nothing && return "nothing"
    T = typeof(v)
    v isa String && return stringpreview(v, 24)
    (v isa Union{Bool,Symbol,Char,Missing}) && return repr(v)
    if v isa Number && plain(T)
        (v isa BigInt || v isa BigFloat) && return typetext(T)
        return fit(repr(v), 30)
    end
    v isa Array && return ndims(v) == 1 ? "$(length(v))-element $(fit(typetext(T), 30))" : "$(join(size(v), "×")) $(fit(typetext(T), 30))"
    v isa Dict && return "Dict with $(plural(length(v), "entry", "entries"))"
    v isa Tuple && return "($(plural(length(v), "item", "items")))"
    v isa Function && return string(nameof(v))
    fit(string(nameof(T)), 40)
end

# keytext is a Dict's key as a path writes it: "k", :k, 1.
keytext(k) = (k isa String || k isa Symbol || (k isa Integer && plain(typeof(k)))) ? repr(k) : short(k)

function dfmodule()
    for (id, m) in Base.loaded_modules
        id.name == "DataFrames" && return m
    end
    nothing
end

isframe(x, DF) = DF !== nothing && isdefined(DF, :AbstractDataFrame) && x isa getfield(DF, :AbstractDataFrame)

# signature is a function's first method as its header: f(x, y).
function signature(f, ms)
    name = string(nameof(f))
    startswith(name, '#') && (name = "anonymous function")
    isempty(ms) && return name
    args = try
        [string(a) for a in Base.method_argnames(first(ms))[2:end]]
    catch
        String[]
    end
    name * "(" * join(args, ", ") * ")"
end

function typepreview(T)
    U = Base.unwrap_unionall(T)
    U isa DataType || return typetext(T)
    isabstracttype(U) && return "abstract type " * string(nameof(U))
    isstructtype(U) || return typetext(T)
    fs = [string(n, "::", typetext(t)) for (n, t) in zip(fieldnames(U), fieldtypes(U))]
    (ismutabletype(U) ? "mutable struct " : "struct ") * string(nameof(U)) * (isempty(fs) ? "" : ": " * join(fs, ", "))
end

# line is the line of x under name.
function line(name::AbstractString, x, lk::Look)
    l = VarLine(name, typetext(typeof(x)))
    try
        describe!(l, x, lk)
    catch e
        l.note = "cannot look: " * fit(typetext(typeof(e)), 100)
    end
    l
end

function describe!(l::VarLine, x, lk::Look)
    T = typeof(x)
    DF = dfmodule()
    if x === nothing || x isa Union{Bool,Symbol,Char,Missing}
        l.preview = repr(x)
    elseif x isa Number && plain(T)
        if x isa BigInt && ndigits(x; base=2) > 4000
            l.size = plural(ndigits(x; base=2), "bit", "bits")
        else
            l.preview = repr(x)
        end
    elseif x isa String
        n = ncodeunits(x)
        l.size = n <= 1_000_000 ? plural(length(x), "character", "characters") : plural(n, "byte", "bytes")
        l.memory = sizeof(x)
        l.preview = stringpreview(x, lk.width)
    elseif x isa Array
        n = length(x)
        l.size = ndims(x) == 1 ? plural(n, "item", "items") : join(size(x), "×")
        if isbitstype(eltype(x))
            l.memory = sizeof(x)
        elseif n <= 10_000
            l.memory = Base.summarysize(x)
        end
        parts = String[isassigned(x, i) ? short(x[i]) : "#undef" for i in 1:min(n, LOOK_ITEMS)]
        l.preview = "[" * joinparts(parts, lk.width - 2, n > LOOK_ITEMS) * "]"
        l.members = n > 0
    elseif x isa AbstractRange && plain(T)
        l.size = plural(length(x), "item", "items")
        l.preview = repr(x)
    elseif x isa Dict || x isa Set
        n = length(x)
        parts = String[]
        for kv in x
            length(parts) >= LOOK_ITEMS && break
            push!(parts, x isa Dict ? short(kv[1]) * " => " * short(kv[2]) : short(kv))
        end
        l.size = x isa Dict ? plural(n, "key", "keys") : plural(n, "item", "items")
        l.preview = (x isa Dict ? "Dict(" : "Set([") * joinparts(parts, lk.width - 7, n > LOOK_ITEMS) * (x isa Dict ? ")" : "])")
        l.members = x isa Dict && n > 0
    elseif x isa NamedTuple
        parts = String[string(k, " = ", short(v)) for (k, v) in pairs(x)]
        l.size = plural(length(x), "item", "items")
        l.preview = "(" * joinparts(parts[1:min(end, LOOK_ITEMS)], lk.width - 2, length(x) > LOOK_ITEMS) * ")"
        l.members = length(x) > 0
    elseif x isa Tuple
        parts = String[short(x[i]) for i in 1:min(length(x), LOOK_ITEMS)]
        l.size = plural(length(x), "item", "items")
        l.preview = "(" * joinparts(parts, lk.width - 2, length(x) > LOOK_ITEMS) * ")"
        l.members = length(x) > 0
    elseif x isa Function
        l.type = "function"
        ms = methods(x)
        l.size = plural(length(ms), "method", "methods")
        l.preview = signature(x, ms)
    elseif x isa Module
        l.preview = string(nameof(x))
    elseif x isa Type
        l.preview = typepreview(x)
    elseif isframe(x, DF)
        nr, nc = DF.nrow(x), DF.ncol(x)
        l.type = string(nameof(T))
        l.size = string(nr, "×", nc)
        cols = names(x)
        parts = String[string(c, " ", fit(typetext(eltype(x[!, i])), 24)) for (i, c) in enumerate(cols[1:min(end, LOOK_ITEMS)])]
        l.preview = joinparts(parts, lk.width, nc > LOOK_ITEMS)
        l.members = nc > 0
    else
        # A type the look does not know: its fields, and its show, timed,
        # in a look between cells.
        n = fieldcount(T)
        parts = String[string(fieldname(T, i), "=", isdefined(x, i) ? short(getfield(x, i)) : "#undef") for i in 1:min(n, LOOK_ITEMS)]
        isempty(parts) || (l.preview = joinparts(parts, lk.width, n > LOOK_ITEMS))
        l.members = n > 0
        lk.live && timedshow!(l, x, lk)
    end
end

# timedshow! is x's own show, in a task, within the look's timeout and
# what is left of its budget, with stdout and stderr sent to devnull.
function timedshow!(l::VarLine, x, lk::Look)
    if lk.budget <= 0
        l.note = "the look's time for previews ($(LOOK_BUDGET) s) ran out: no show"
        return
    end
    limit = min(lk.timeout, lk.budget)
    io = IOBuffer()
    ctx = IOContext(io, :limit => true, :compact => true, :displaysize => (1, 200))
    t0 = time()
    task = nothing
    quietly() do
        task = @async Base.invokelatest(show, ctx, x)
        timedwait(() -> istaskdone(task), limit; pollint=0.01)
    end
    lk.budget -= time() - t0
    if !istaskdone(task)
        try
            schedule(task, InterruptException(); error=true)
        catch
        end
        l.note = limit < lk.timeout ? "the look's time for previews ($(LOOK_BUDGET) s) ran out during show" :
                 "show took over $(lk.timeout) s"
    elseif istaskfailed(task)
        e = task.exception
        while e isa TaskFailedException
            e = e.task.exception
        end
        l.note = "show raised " * fit(string(nameof(typeof(e))), 60) * (e isa ErrorException ? ": " * fit(e.msg, 100) : "")
    else
        l.preview = fit(flat(String(take!(io))), lk.width)
    end
end

# quietly runs f with stdout and stderr sent to devnull (f as it is where
# they cannot be redirected).
function quietly(f)
    ran = false
    g() = (ran = true; f())
    try
        redirect_stdout(devnull) do
            redirect_stderr(g, devnull)
        end
    catch e
        (e isa InterruptException || ran) && rethrow()
        f()
    end
end

# own is the session's names, sorted: the globals cells made (not
# modules, not the worker's), or with all every name of Main's.
function own(all::Bool)
    out = Symbol[]
    for n in names(Main; all=true, imported=all)
        s = string(n)
        startswith(s, '#') && continue
        isdefined(Main, n) || continue
        if !all
            n in HIDDEN && continue
            getfield(Main, n) isa Module && continue
        end
        push!(out, n)
    end
    sort!(out; by=string)
end

function nameline(n::Symbol, lk::Look)
    try
        line(string(n), getfield(Main, n), lk)
    catch e
        l = VarLine(string(n), "?")
        l.note = "cannot look: " * fit(typetext(typeof(e)), 100)
        l
    end
end

# ---- paths: a name, then .field, [1], ["key"], [:key] --------------------

struct Step
    field::Bool
    key::Any
    text::String
end

function parsepath(path::AbstractString)
    bad = LookError("cannot read the path $(repr(fit(path, 60))): a name, then .field, [1], [\"key\"] or [:key]")
    m = match(r"^[^\s.\[\]\"]+", path)
    (m === nothing || !Base.isidentifier(m.match)) && throw(bad)
    head = String(m.match)
    i = ncodeunits(m.match) + 1
    steps = Step[]
    while i <= ncodeunits(path)
        rest = SubString(path, i)
        if (f = match(r"^\.([^\s.\[\]\"]+)", rest)) !== nothing
            Base.isidentifier(f.captures[1]) || throw(bad)
            push!(steps, Step(true, Symbol(f.captures[1]), f.match))
        elseif (f = match(r"^\[\s*(-?[0-9]+)\s*\]", rest)) !== nothing
            k = tryparse(Int, f.captures[1])
            k === nothing && throw(bad)
            push!(steps, Step(false, k, f.match))
        elseif (f = match(r"^\[\s*\"((?:[^\"\\]|\\.)*)\"\s*\]", rest)) !== nothing
            key = try
                unescape_string(f.captures[1])
            catch
                throw(bad)
            end
            push!(steps, Step(false, key, f.match))
        elseif (f = match(r"^\[\s*:([^\s\]]+)\s*\]", rest)) !== nothing
            Base.isidentifier(f.captures[1]) || throw(bad)
            push!(steps, Step(false, Symbol(f.captures[1]), f.match))
        else
            throw(bad)
        end
        i += ncodeunits(f.match)
    end
    head, steps
end

# follow is the object a path names, never evaluated.
function follow(path::AbstractString)
    head, steps = parsepath(path)
    s = Symbol(head)
    isdefined(Main, s) || throw(LookError("UndefVarError: `$head` not defined"))
    x = getfield(Main, s)
    where = head
    for st in steps
        x = st.field ? field(x, st.key, where) : index(x, st.key, where)
        where *= st.text
    end
    x
end

function field(x, name::Symbol, where::String)
    DF = dfmodule()
    if isframe(x, DF)
        string(name) in names(x) || throw(LookError("ArgumentError: column name :$name not found in the data frame ($where)"))
        return x[!, name]
    end
    if x isa Module
        isdefined(x, name) || throw(LookError("UndefVarError: `$name` not defined in `$(nameof(x))`"))
        return getfield(x, name)
    end
    T = typeof(x)
    hasfield(T, name) || throw(LookError("type $(nameof(T)) has no field $name ($where)"))
    isdefined(x, name) || throw(LookError("UndefRefError: access to undefined reference ($where.$name)"))
    getfield(x, name)
end

function index(x, key, where::String)
    if x isa Dict
        for (k, v) in x
            typeof(k) === typeof(key) && isequal(k, key) && return v
        end
        throw(LookError("KeyError: key $(repr(key)) not found ($where)"))
    end
    key isa Int || throw(LookError("$where is a $(fit(typetext(typeof(x)), 60)): a look reads [\"key\"] and [:key] of Dicts"))
    if x isa Array || x isa Tuple || x isa NamedTuple || (x isa AbstractRange && plain(typeof(x)))
        1 <= key <= length(x) || throw(LookError("BoundsError: attempt to access $(length(x))-element $(fit(typetext(typeof(x)), 60)) at index [$key]"))
        x isa Array && !isassigned(x, key) && throw(LookError("UndefRefError: access to undefined reference ($where[$key])"))
        return x[key]
    end
    throw(LookError("$where is a $(fit(typetext(typeof(x)), 60)): a look indexes Arrays, Tuples and Dicts"))
end

# members is the lines for what x holds, and how many there are: an
# Array's or Tuple's items, a Dict's keys, a DataFrame's columns, a
# NamedTuple's or struct's fields.
function members(x, path::AbstractString, lk::Look)
    lines = VarLine[]
    DF = dfmodule()
    if x isa Array || x isa Tuple
        n = length(x)
        for i in 1:min(n, lk.limit)
            push!(lines, x isa Array && !isassigned(x, i) ? VarLine("[$i]", "#undef") : line("[$i]", x[i], lk))
        end
        return lines, n
    elseif x isa NamedTuple
        for (k, v) in pairs(x)
            length(lines) >= lk.limit && break
            push!(lines, line(string(k), v, lk))
        end
        return lines, length(x)
    elseif x isa Dict
        for (k, v) in x
            length(lines) >= lk.limit && break
            push!(lines, line(keytext(k), v, lk))
        end
        return lines, length(x)
    elseif isframe(x, DF)
        cols = names(x)
        for (i, c) in enumerate(cols)
            i > lk.limit && break
            push!(lines, line(string(c), x[!, i], lk))
        end
        return lines, length(cols)
    end
    T = typeof(x)
    n = x isa Module || x isa Type || x isa Function ? 0 : fieldcount(T)
    n == 0 && throw(LookError("$path is a $(fit(typetext(T), 60)), with no fields: it has no members"))
    for i in 1:min(n, lk.limit)
        push!(lines, isdefined(x, i) ? line(string(fieldname(T, i)), getfield(x, i), lk) : VarLine(string(fieldname(T, i)), "#undef"))
    end
    lines, n
end

# ---- the protocol ---------------------------------------------------------

# lookargs reads a look's arguments: the flat JSON object the driver writes.
function lookargs(text::AbstractString)
    function num(key, default)
        found = match(Regex("\"$key\"\\s*:\\s*(-?[0-9.eE+]+)"), text)
        found === nothing ? default : something(tryparse(Float64, found.captures[1]), default)
    end
    m = match(r"\"path\"\s*:\s*\"((?:[^\"\\]|\\.)*)\"", text)
    path = ""
    if m !== nothing
        try
            path = unescape_string(m.captures[1])
        catch
        end
    end
    lk = Look(true, occursin(r"\"all\"\s*:\s*true", text), clamp(round(Int, num("limit", 100)), 0, 10_000),
              clamp(round(Int, num("preview", 80)), 10, 1000), clamp(num("timeout", 0.2), 0.01, 5.0), LOOK_BUDGET)
    strip(path), lk
end

# look answers a "vars" command: the event's fields.
function look(text::AbstractString)
    try
        path, lk = lookargs(text)
        if isempty(path)
            ns = own(lk.all)
            lines = [nameline(n, lk) for n in ns[1:min(end, lk.limit)]]
            total = length(ns)
        else
            lines, total = members(follow(path), path, lk)
        end
        ["vars" => "[" * join([linejson(l, lk.width) for l in lines], ",") * "]", "total" => string(total)]
    catch e
        msg = e isa LookError ? e.msg : "the look failed: " * fit(sprint(showerror, e), 300)
        ["error" => jsonstr(fit(msg, 400))]
    end
end

# celllook is the look a cell's "done" carries (no show: from structure
# only), and the names from the same source.
function celllook()
    lk = Look(false, false, 100, 80, 0.0, 0.0)
    ns = own(false)
    lines = [nameline(n, lk) for n in ns[1:min(end, lk.limit)]]
    ["names" => "[" * join(jsonstr.(string.(ns[1:min(end, 500)])), ",") * "]",
     "vars" => "[" * join([linejson(l, lk.width) for l in lines], ",") * "]",
     "vars_total" => string(length(ns))]
end
