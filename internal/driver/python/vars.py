

# ---- vars: a look at what a session holds, without a cell -------------------
#
# The protocol of internal/driver/worker/vars.go. A look lists a session's
# own names, or the members of what a path names (df, df.columns,
# cfg["db"], model.layers[0]), one line each: name, type, size, memory,
# preview, note, members. Known types are summarised from their structure
# (numpy, pandas, polars, torch, xarray, the built-ins), found by their
# class's module and name and only when their library is in sys.modules
# already: a look imports nothing. Anything else gets its type and, in a
# look asked for between cells (never in the one a cell's "done" carries),
# its size and repr through a call bounded in time whose output is thrown
# away. A path is read by a small grammar (a name, then .attr and
# [literal]), never evaluated.

VARS_LIMIT = 100        # lines a look sends (api.VarsLimit)
VAR_PREVIEW = 80        # characters of a preview (api.VarPreview)
VAR_NAME_LIMIT = 200    # api.VarNameLimit, VarTypeLimit, VarSizeLimit, VarNoteLimit
VAR_TYPE_LIMIT = 120
VAR_SIZE_LIMIT = 80
VAR_NOTE_LIMIT = 200
FIRST = 8               # values a preview shows at most
LOOK_BUDGET = 1.0       # seconds all the timed calls of one look may take

# A class's own module, name and MRO, read through type's descriptors, so
# that a metaclass's properties of the same names run nothing.
_tmodule = type.__dict__["__module__"].__get__
_tqualname = type.__dict__["__qualname__"].__get__
_tmro = type.__dict__["__mro__"].__get__
_tdict = type.__dict__["__dict__"].__get__

_FunctionType = type(serve)
_BuiltinType = type(len)
_MethodType = type((lambda: None).__get__(0))
_ModuleType = type(sys)

# The built-in kinds, by their exact class (or the nearest one in a
# subclass's MRO), and the library kinds by (package, class name).
_BUILTIN = {type(None): "none", bool: "bool", int: "int", float: "float", complex: "complex",
            str: "str", bytes: "bytes", bytearray: "bytes", memoryview: "bytes",
            list: "seq", tuple: "seq", range: "range", set: "set", frozenset: "set",
            dict: "dict", type(type.__dict__): "dict", _FunctionType: "function",
            _BuiltinType: "builtin", type(FIRST.__add__): "builtin", _ModuleType: "module"}
_LIBRARY = {("numpy", "ndarray"): "ndarray", ("numpy", "generic"): "npscalar",
            ("pandas", "DataFrame"): "pdframe", ("pandas", "Series"): "pdseries",
            ("pandas", "Index"): "pdindex", ("polars", "DataFrame"): "plframe",
            ("polars", "Series"): "plseries", ("polars", "LazyFrame"): "pllazy",
            ("torch", "Tensor"): "tensor", ("xarray", "DataArray"): "xarray",
            ("xarray", "Dataset"): "xdataset",
            ("collections", "deque"): "seq", ("collections", "OrderedDict"): "dict",
            ("collections", "defaultdict"): "dict", ("collections", "Counter"): "dict"}
# Standard-library scalars whose str is their own C or Python code.
_SCALARS = {("datetime", "datetime"), ("datetime", "date"), ("datetime", "time"),
            ("datetime", "timedelta"), ("decimal", "Decimal"), ("fractions", "Fraction"),
            ("uuid", "UUID"), ("pathlib", "PosixPath"), ("pathlib", "WindowsPath")}


def loads(text):
    """The JSON object a command carries, by the C scanner of the json
    package (importing json itself would import re)."""
    try:
        from _json import make_scanner
    except ImportError:
        import json
        return json.loads(text)

    class Context:
        strict, object_hook, object_pairs_hook, memo = True, None, None, {}
        parse_float, parse_int, parse_constant = float, int, float

    value, end = make_scanner(Context())(text, 0)
    return value


def kind_of(obj):
    """(kind, class) of obj: the kind that summarises it ("" if none does)
    and its class."""
    t = type(obj)
    if t in _BUILTIN:
        return _BUILTIN[t], t
    if t is type or type in _tmro(t):
        return "class", t
    for c in _tmro(t):
        module = _tmodule(c)
        key = (module.partition(".")[0], _tqualname(c))
        if key in _LIBRARY and key[0] in sys.modules:
            return _LIBRARY[key], t
        if (module, key[1]) in _SCALARS:
            return "scalar", t
        if c in _BUILTIN and c is not object:
            return _BUILTIN[c], t
    if t is _MethodType:
        return "method", t
    return "", t


def type_word(obj, kind, t):
    words = {"none": "None", "function": "function", "builtin": "builtin function",
             "module": "module", "class": "class", "method": "method"}
    return words.get(kind) or _tqualname(t)


def fit(text, n):
    """text in at most n characters, its cut said by a closing "…"."""
    return text if len(text) <= n else text[:max(n - 1, 0)] + "\u2026"


def clip(text, limit, what):
    """What the daemon's api.Clip makes of text: the daemon sees its own
    cut and says it once."""
    if len(text) <= limit:
        return text
    return "%s\u2026 [%s cut: %s characters in all; showing the first %s]" % (
        text[:limit], what, "{:,}".format(len(text)), "{:,}".format(limit))


def short(obj, n=VAR_PREVIEW, depth=2):
    """obj in at most n characters, made from its structure: the repr of
    scalars and strings, a container's first items, and for anything else
    only its type, <Foo>."""
    kind, t = kind_of(obj)
    if kind in ("none", "bool", "float", "complex"):
        return fit(type(obj).__repr__(obj) if kind != "float" else float.__repr__(obj), n)
    if kind == "int":
        if int.bit_length(obj) > 3000:  # over 900 digits: its repr costs
            return "<int of %d bits>" % int.bit_length(obj)
        return fit(int.__repr__(obj), n)
    if kind == "str":
        return fit(repr(str.__getitem__(obj, slice(0, n))), n)
    if kind == "bytes":
        return fit(repr(bytes(memoryview(obj)[:n])), n)
    if kind == "npscalar":
        return short(obj.item(), n, depth) if obj.dtype.kind in "biufcSUM?m" else "<%s>" % _tqualname(t)
    if kind == "scalar":
        return fit(str(obj), n)
    if kind in ("seq", "set", "dict", "range"):
        if kind == "range":
            return fit(range.__repr__(obj), n)
        opener, closer = {"dict": "{}", "set": "{}"}.get(kind) or ("()" if tuple in _tmro(t) else "[]")
        if depth <= 0:
            return opener + "\u2026" + closer
        parts, used = [], 2
        items = dict.items(obj) if kind == "dict" and dict in _tmro(t) else None
        if items is None and kind == "dict":
            items = ((k, obj[k]) for k in list(obj)[:FIRST])  # a mappingproxy
        source = items if kind == "dict" else base_iter(obj, t)
        for i, item in enumerate(source):
            if i >= FIRST or used >= n:
                parts.append("\u2026")
                break
            if kind == "dict":
                part = short(item[0], 30, 0) + ": " + short(item[1], max(n - used, 8), depth - 1)
            else:
                part = short(item, max(n - used, 8), depth - 1)
            parts.append(part)
            used += len(part) + 2
        return fit(opener + ", ".join(parts) + closer, n)
    if kind in ("function", "builtin", "class", "module", "method"):
        return fit(callable_preview(obj, kind), n)
    return "<%s>" % fit(_tqualname(t), n - 2)


def callable_preview(obj, kind):
    if kind == "module":
        return "module %s" % obj.__dict__.get("__name__", "?")
    if kind == "class":
        bases = [_tqualname(b) for b in type.__dict__["__bases__"].__get__(obj) if b is not object]
        return "class %s(%s)" % (_tqualname(obj), ", ".join(bases)) if bases else "class %s" % _tqualname(obj)
    if kind == "method":
        obj = obj.__func__
        if type(obj) is not _FunctionType:
            return "method"
    if kind == "builtin":
        sig = getattr(obj, "__text_signature__", None)
        name = getattr(obj, "__name__", "?")
        return name + (sig.replace("$self, ", "").replace("$module, ", "").replace("$module", "")
                       if isinstance(sig, str) else "(…)")
    code = obj.__code__
    names = code.co_varnames
    n, k = code.co_argcount, code.co_kwonlyargcount
    defaults = len(obj.__defaults__ or ())
    args = [a + ("=\u2026" if i >= n - defaults else "") for i, a in enumerate(names[:n])]
    if getattr(code, "co_posonlyargcount", 0):
        args.insert(code.co_posonlyargcount, "/")
    i = n + k
    if code.co_flags & 0x04:
        args.append("*" + names[i])
        i += 1
    elif k:
        args.append("*")
    args += names[n:n + k]
    if code.co_flags & 0x08:
        args.append("**" + names[i])
    name = obj.__name__
    return ("lambda " + ", ".join(args)) if name == "<lambda>" else "%s(%s)" % (name, ", ".join(args))


def values(seq, n, dtype="", total=0):
    """A preview of a library object's first values (of total):
    dtype [a, b, …]."""
    head = dtype + " " if dtype else ""
    parts, used = [], len(head) + 2
    for i, v in enumerate(seq):
        if i >= FIRST or used >= n:
            break
        part = short(v, 24, 1)
        parts.append(part)
        used += len(part) + 2
    if total > len(parts):
        parts.append("\u2026")
    return fit(head + "[" + ", ".join(parts) + "]", n)


def shape_of(shape):
    shape = tuple(int(s) for s in shape)
    return "(%d,)" % shape if len(shape) == 1 else "(" + ", ".join(str(s) for s in shape) + ")"


def summarise(v, obj, kind, t, look):
    """Fill line v for obj from its structure: type, size, memory,
    preview, members."""
    n = look["preview"]
    v["type"] = type_word(obj, kind, t)
    if kind in ("seq", "set", "dict", "range"):
        count = length(obj, t)
        v["size"] = "%d %s" % (count, "key" if kind == "dict" else "item") + ("" if count == 1 else "s")
        v["preview"] = short(obj, n)
        v["members"] = count > 0 and kind != "range"
    elif kind == "str":
        count = str.__len__(obj)
        v["size"] = "%d character%s" % (count, "" if count == 1 else "s")
        v["memory"] = sys.getsizeof(obj)
        v["preview"] = short(obj, n)
    elif kind == "bytes":
        count = memoryview(obj).nbytes
        v["size"] = "%d byte%s" % (count, "" if count == 1 else "s")
        v["memory"] = count
        v["preview"] = short(obj, n)
    elif kind in ("none", "bool", "int", "float", "complex", "scalar", "npscalar"):
        v["preview"] = short(obj, n)
    elif kind in ("function", "builtin", "class", "module", "method"):
        v["preview"] = short(obj, n)
        v["members"] = kind in ("class", "module") or bool(instance_dict(obj))
    elif kind in ("ndarray", "tensor"):
        v["size"] = shape_of(obj.shape)
        if kind == "ndarray":
            v["memory"] = int(obj.nbytes)
            first, dtype = obj.flat[:FIRST].tolist() if obj.dtype.kind != "V" else [], str(obj.dtype)
        else:
            v["memory"] = int(obj.element_size() * obj.nelement())
            dtype = str(obj.dtype).replace("torch.", "") + ("" if obj.device.type == "cpu" else " " + str(obj.device))
            first = obj.detach().reshape(-1)[:FIRST].tolist() if obj.device.type != "meta" else []
        v["preview"] = values(first, n, dtype, int(obj.nelement() if kind == "tensor" else obj.size))
        v["members"] = len(obj.shape) > 0 and obj.shape[0] > 0
    elif kind == "pdframe":
        rows, cols = obj.shape
        v["size"] = "%d\u00d7%d" % (rows, cols)
        v["memory"], dtypes = frame_structure(obj)
        v["preview"] = columns_preview(obj.columns[:FIRST], dtypes, cols, n)
        v["members"] = cols > 0
    elif kind in ("pdseries", "pdindex"):
        v["size"] = "%d %s" % (len(obj), "rows" if kind == "pdseries" else "items")
        v["memory"] = int(obj.memory_usage(deep=False))
        v["preview"] = values(obj[:FIRST].tolist() if kind == "pdindex" else obj.iloc[:FIRST].tolist(), n, str(obj.dtype), len(obj))
        v["members"] = len(obj) > 0
    elif kind == "plframe":
        rows, cols = obj.shape
        v["size"] = "%d\u00d7%d" % (rows, cols)
        v["memory"] = int(obj.estimated_size())
        v["preview"] = columns_preview(obj.columns[:FIRST], obj.dtypes[:FIRST], cols, n)
        v["members"] = cols > 0
    elif kind == "plseries":
        v["size"] = "%d rows" % len(obj)
        v["memory"] = int(obj.estimated_size())
        v["preview"] = values(obj.head(FIRST).to_list(), n, str(obj.dtype), len(obj))
        v["members"] = len(obj) > 0
    elif kind == "pllazy":
        pass  # a query plan: its schema may read files
    elif kind == "xarray":
        v["size"] = shape_of(obj.shape)
        v["memory"] = int(obj.nbytes)
        data = obj.variable._data  # values only when in memory: dask's or a file's stay there
        dims = "(" + ", ".join(str(d) for d in obj.dims) + ") "
        kind = _tqualname(type(data))
        first = (data.flat[:FIRST].tolist() if kind == "ndarray" else
                 data.array[:FIRST].tolist() if kind == "PandasIndexingAdapter" else [])
        v["preview"] = dims + values(first, n - len(dims), str(obj.dtype), int(obj.size)) if first else fit(dims + str(obj.dtype), n)
        v["members"] = len(obj.coords) > 0
    elif kind == "xdataset":
        count = len(obj.data_vars)
        v["size"] = "%d variable%s" % (count, "" if count == 1 else "s")
        v["memory"] = int(obj.nbytes)
        v["preview"] = fit(", ".join("%s %s" % (k, shape_of(a.shape)) for k, a in list(obj.data_vars.items())[:FIRST]), n)
        v["members"] = count > 0
    else:
        v["members"] = bool(instance_dict(obj)) or bool(slots_of(t))
        return False
    return True


_BASES = (list, tuple, set, frozenset, dict, str, bytes, bytearray, range)


def base_of(t):
    """The built-in container class (or deque) that t is or derives from:
    its own __len__ and __iter__ are C code a subclass cannot replace."""
    for b in _tmro(t):
        if b in _BASES or (_tmodule(b), _tqualname(b)) == ("collections", "deque"):
            return b
    return None


def length(obj, t):
    b = base_of(t)
    return b.__len__(obj) if b is not None else len(obj)  # a mappingproxy: C code


def base_iter(obj, t):
    b = base_of(t)
    return b.__iter__(obj) if b is not None else iter(obj)


def frame_structure(df):
    """A pandas frame's memory (memory_usage(deep=False).sum(), but for a
    Categorical's categories, counted by their values alone) and its first
    columns' dtypes, from its blocks: memory_usage makes a Series per
    column (49 ms for 5,000 columns; 100 frames of 10 columns cost a cell
    50 to 140 ms, now 5 to 12), the blocks cost nothing. Through the
    public calls where a pandas has other insides."""
    try:
        mgr = df._mgr
        memory = sum(int(b.values.nbytes) for b in mgr.blocks) + int(df.index.memory_usage())
        return memory, list(mgr.get_dtypes()[:FIRST])
    except Exception:
        return int(df.memory_usage(index=True, deep=False).sum()), list(df.dtypes.iloc[:FIRST])


def columns_preview(names, dtypes, total, n):
    parts = ["%s:%s" % (fit(str(c), 20), d) for c, d in zip(names, dtypes)]
    return fit(", ".join(parts) + (", \u2026" if total > len(parts) else ""), n)


def instance_dict(obj):
    """obj's own __dict__ if its class has the ordinary one ({} if not):
    read without running a property of its class."""
    for c in _tmro(type(obj)):
        d = _tdict(c).get("__dict__")
        if d is not None:
            if type(d).__name__ != "getset_descriptor":
                return {}
            try:
                got = d.__get__(obj, type(obj))
            except (AttributeError, TypeError):
                return {}
            return got if type(got) is dict else {}
    return {}


def slots_of(t):
    """The slot names of class t and its bases."""
    found = []
    for c in _tmro(t):
        s = _tdict(c).get("__slots__")
        if isinstance(s, str):
            s = (s,)
        if isinstance(s, (tuple, list)):
            found += [x for x in s if isinstance(x, str) and x not in ("__dict__", "__weakref__")]
    return found


class LookTimeout(BaseException):
    """Raised in a call on an object of unknown type that took too long."""


class Discard:
    """Where the printing of a look's calls goes: nowhere."""
    encoding, errors = "utf-8", "strict"

    def write(self, text):
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False


def timed(fn, look):
    """fn() within the look's time: what it returns, or LookTimeout once
    its share of the budget is spent. SIGALRM raises in it, and again
    every 50 ms should it catch that. (A call that swallows every
    exception in a loop, or sits in C code that never returns to Python,
    keeps the worker: the daemon's wait for the look ends, and the
    session is busy until it returns.) The handler and any timer the
    session had are put back."""
    import _signal
    import time
    left = look["deadline"] - time.monotonic()
    if left <= 0:
        raise LookTimeout("spent")
    seconds = min(look["timeout"], left)

    def alarm(signum, frame):
        raise LookTimeout()

    old = _signal.signal(_signal.SIGALRM, alarm)
    saved = _signal.setitimer(_signal.ITIMER_REAL, seconds, 0.05)
    started = time.monotonic()
    try:
        return fn()
    finally:
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        _signal.signal(_signal.SIGALRM, old)
        if saved[0] > 0:
            _signal.setitimer(_signal.ITIMER_REAL, max(saved[0] - (time.monotonic() - started), 0.001), saved[1])


def said(e):
    """An exception in a few words: ValueError: the message."""
    try:
        message = str(e)
    except Exception:
        message = ""
    name = _tqualname(type(e))
    return fit("%s: %s" % (name, message) if message else name, VAR_NOTE_LIMIT)


def var_of(name, obj, look):
    """One line for obj, called name."""
    v = {"name": clip(name, VAR_NAME_LIMIT, "name")}
    kind, t = kind_of(obj)
    try:
        known = summarise(v, obj, kind, t, look)
    except LookTimeout:
        raise
    except Exception as e:
        v["note"] = "looking raised " + said(e)
        known = True
    v.setdefault("type", type_word(obj, kind, t))
    if not known and look["live"]:
        unknown_preview(v, obj, t, look)
    for key, limit in (("type", VAR_TYPE_LIMIT), ("size", VAR_SIZE_LIMIT), ("note", VAR_NOTE_LIMIT)):
        if key in v:
            v[key] = clip(str(v[key]), limit, key)
    if not v.get("size"):
        v.pop("size", None)
    return v


def unknown_preview(v, obj, t, look):
    """The size (its len) and preview (its repr) of an object of unknown
    type, each through a timed call: a failure or timeout is the note."""
    what = "len"
    try:
        if any("__len__" in _tdict(c) for c in _tmro(t)[:-1]):
            count = timed(lambda: len(obj), look)
            v["size"] = "%d item%s" % (count, "" if count == 1 else "s")
        what = "repr"
        text = timed(lambda: repr(obj), look)
        v["preview"] = fit(text if type(text) is str else "", look["preview"])
    except LookTimeout as e:
        if e.args:
            v["note"] = "%s not called: the look's %s s for calls was spent" % (what, LOOK_BUDGET)
        else:
            v["note"] = "%s took over %s s" % (what, look["timeout"])
    except Exception as e:
        v["note"] = "%s raised %s" % (what, said(e))


def own_names(ns, hidden, all):
    """The session's own names, sorted: not modules, not functions or
    classes imported from elsewhere, not _names, not what hidden(name,
    value) hides (IPython's own); every name when all."""
    found = []
    for k in list(ns):
        if type(k) is not str:
            continue
        if not all:
            if k.startswith("_") or hidden(k):
                continue
            value = ns.get(k)
            t = type(value)
            if t is _ModuleType:
                continue
            if t is _FunctionType or t is type:
                if (value.__module__ if t is _FunctionType else _tmodule(value)) != "__main__":
                    continue
            elif t is _BuiltinType and type(value.__self__) is _ModuleType:
                continue  # a C module's function: from math import sqrt
        found.append(k)
    found.sort()
    return found


def cell_look(ns, hidden, names_limit=500):
    """The names and the look a cell's "done" carries: structure only,
    no call of the objects' own code."""
    names = own_names(ns, hidden, False)
    look = {"preview": VAR_PREVIEW, "live": False, "timeout": 0, "deadline": 0}
    lines = []
    with Quiet():  # a library's warning is not the cell's output
        for k in names[:VARS_LIMIT]:
            try:
                lines.append(var_of(k, ns[k], look))
            except BaseException as e:
                lines.append({"name": clip(k, VAR_NAME_LIMIT, "name"), "type": "?", "note": "looking raised " + said(e)})
    return names[:names_limit], lines, len(names)


def look_at(ns, hidden, query):
    """A look asked for between cells: the "vars" event's fields. Nothing
    it calls prints into the session's output (sys.stdout and fds 1 and
    2 point nowhere meanwhile)."""
    import time
    path = query.get("path") or ""
    look = {"preview": min(int(query.get("preview") or VAR_PREVIEW), 1000),
            "timeout": min(float(query.get("timeout") or 0.2), 5.0), "live": True,
            "all": bool(query.get("all"))}
    look["deadline"] = time.monotonic() + max(LOOK_BUDGET, look["timeout"])
    limit = max(min(int(query.get("limit") or VARS_LIMIT), 10000), 0)
    with Quiet():
        if not path:
            names = own_names(ns, hidden, look["all"])
            return {"vars": [var_of(k, ns[k], look) for k in names[:limit]], "total": len(names)}
        obj = resolve(ns, path, look)
        lines, total = members_of(path, obj, look, limit)
        return {"vars": lines, "total": total}


def flush_c():
    """Flush C's stdio buffers, once flush_all has found the C library."""
    if _libc[0]:
        try:
            _libc[0].fflush(None)
        except Exception:
            pass


class Quiet:
    """sys.stdout and sys.stderr to Discard, fds 1 and 2 to /dev/null, for
    as long as a look calls code; all put back after."""

    def __enter__(self):
        flush_c()  # what a cell left in C's buffers is its output: out first
        self.streams = sys.stdout, sys.stderr
        for stream in self.streams:
            try:
                stream.flush()
            except Exception:
                pass
        sys.stdout = sys.stderr = Discard()
        self.fds = []
        try:
            null = os.open(os.devnull, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return self
        for fd in (1, 2):
            try:
                self.fds.append((fd, high_fd(fd)))
                _dup2(null, fd)
            except OSError:
                pass
        os.close(null)
        return self

    def __exit__(self, *exc):
        flush_c()  # and what the look's calls left there, into nothing
        for fd, copy in self.fds:
            try:
                _dup2(copy, fd)
            finally:
                os.close(copy)
        sys.stdout, sys.stderr = self.streams
        return False
