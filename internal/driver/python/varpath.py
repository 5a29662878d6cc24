

# ---- vars, with a path: what an object holds ---------------------------------
#
# A path is a name, then .attr and [literal] (a string, a number, True,
# False, None), read by the small grammar below and never evaluated: an
# attribute is read from the dicts it lives in where it can be, and a
# built-in container's item by its own lookup; only a class the look does
# not know runs code (a property, __getattr__, __getitem__), through a
# timed call, as a preview does.

def parse_path(path):
    """[name, ("attr", a) | ("item", literal)...] of a path, or ValueError
    saying where it cannot be read."""
    i, n, steps = 0, len(path), []

    def ident(i):
        j = i
        while j < n and (path[j].isalnum() or path[j] == "_"):
            j += 1
        if j == i or not path[i:j].isidentifier():
            raise ValueError("a name was expected at character %d of the path %r" % (i + 1, fit(path, 60)))
        return path[i:j], j

    name, i = ident(path.find(path.strip()[:1]) if path.strip() else 0)
    steps.append(name)
    while i < n:
        c = path[i]
        if c.isspace():
            i += 1
        elif c == ".":
            a, i = ident(i + 1)
            steps.append(("attr", a))
        elif c == "[":
            value, i = literal(path, i + 1)
            while i < n and path[i].isspace():
                i += 1
            if i >= n or path[i] != "]":
                raise ValueError("a ] was expected at character %d of the path %r" % (i + 1, fit(path, 60)))
            steps.append(("item", value))
            i += 1
        else:
            raise ValueError("a path is a name, then .attr or [literal] (a string, number, True, False "
                             "or None): %r at character %d cannot be read" % (c, i + 1))
    return steps


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"'}


def literal(path, i):
    """The literal at path[i:]: (value, where it ends)."""
    n = len(path)
    while i < n and path[i].isspace():
        i += 1
    if i < n and path[i] in "'\"":
        quote, out, i = path[i], [], i + 1
        while i < n and path[i] != quote:
            if path[i] == "\\" and i + 1 < n:
                c = path[i + 1]
                if c in "xu" and i + (4 if c == "x" else 6) <= n:
                    width = 2 if c == "x" else 4
                    try:
                        out.append(chr(int(path[i + 2:i + 2 + width], 16)))
                        i += 2 + width
                        continue
                    except ValueError:
                        pass
                out.append(_ESCAPES.get(c, "\\" + c))
                i += 2
            else:
                out.append(path[i])
                i += 1
        if i >= n:
            raise ValueError("a string in the path is not closed")
        return "".join(out), i + 1
    j = i
    while j < n and (path[j].isalnum() or path[j] in "-+._"):
        j += 1
    word = path[i:j]
    if word in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[word], j
    for number in (int, float):
        try:
            return number(word), j
        except ValueError:
            pass
    raise ValueError("a string, number, True, False or None was expected in [] at character %d" % (i + 1))


def resolve(ns, path, look):
    """The object path names, or LookupError in Python's words."""
    try:
        steps = parse_path(path)
    except ValueError as e:
        raise LookupError(str(e))
    name = steps[0]
    if name in ns:
        obj = ns[name]
    else:
        import builtins
        if name not in builtins.__dict__:
            raise LookupError("name %r is not defined" % name)
        obj = builtins.__dict__[name]
    where = name
    for op, key in steps[1:]:
        obj = attribute(obj, key, where, look) if op == "attr" else item(obj, key, where, look)
        where += "." + key if op == "attr" else "[%s]" % short(key, 40)
    return obj


_missing = object()


def attribute(obj, name, where, look):
    """obj.name, read from the dicts it lives in where it can be; a
    property or __getattr__ of a class the look does not know runs only
    through a timed call."""
    kind, t = kind_of(obj)
    if kind == "module":
        if name in obj.__dict__:
            return obj.__dict__[name]
        lazy = " yet (its __getattr__ would make it; a look does not call it)" if "__getattr__" in obj.__dict__ else ""
        raise LookupError("module %r has no attribute %r%s" % (obj.__dict__.get("__name__", where), name, lazy))
    if kind == "class":
        for c in _tmro(obj):
            d = _tdict(c)
            if name in d:
                value = d[name]
                if type(value) in (classmethod, staticmethod):
                    return value.__get__(None, obj)
                return value
        raise LookupError("type object %r has no attribute %r" % (_tqualname(obj), name))
    if kind and kind not in ("function", "builtin", "method"):
        try:
            return timed(lambda: getattr(obj, name), look)  # the library's own attribute
        except LookTimeout:
            raise LookupError("getting %s.%s took over %s s" % (where, name, look["timeout"]))
        except Exception as e:
            raise LookupError("getting %s.%s raised %s" % (where, name, said(e)))
    found = _missing
    for c in _tmro(t):
        if name in _tdict(c):
            found = _tdict(c)[name]
            break
    data = found is not _missing and any("__set__" in _tdict(c) or "__delete__" in _tdict(c) for c in _tmro(type(found)))
    own = instance_dict(obj)
    if not data and name in own:
        return own[name]
    if found is not _missing and not data:
        if type(found) in (_FunctionType, classmethod, staticmethod):
            return found.__get__(obj, t)
        if not any("__get__" in _tdict(c) for c in _tmro(type(found))):
            return found
    if type(found).__name__ == "member_descriptor":
        try:
            return found.__get__(obj, t)  # a slot: C code
        except AttributeError as e:
            raise LookupError(str(e))
    if found is _missing and not any("__getattr__" in _tdict(c) for c in _tmro(t)):
        raise LookupError("%r object has no attribute %r" % (_tqualname(t), name))
    try:
        return timed(lambda: getattr(obj, name), look)
    except LookTimeout:
        raise LookupError("getting %s.%s took over %s s" % (where, name, look["timeout"]))
    except Exception as e:
        raise LookupError("getting %s.%s raised %s" % (where, name, said(e)))


def item(obj, key, where, look):
    """obj[key]: a built-in container's own lookup, which a subclass
    cannot replace; anything else's through a timed call."""
    kind, t = kind_of(obj)
    mro = _tmro(t)
    try:
        if dict in mro:
            if dict.__contains__(obj, key):
                return dict.__getitem__(obj, key)
            raise LookupError("KeyError: %s" % short(key, 60))
        for base in (list, tuple, str, bytes, bytearray, range):
            if base in mro:
                if type(key) is not int:
                    raise LookupError("%s indices must be integers, not %s" % (base.__name__, type(key).__name__))
                return base.__getitem__(obj, key)
        return timed(lambda: obj[key], look)
    except LookupError as e:
        if type(e) is LookupError:
            raise
        raise LookupError("%s[%s]: %s" % (where, short(key, 40), said(e)))
    except LookTimeout:
        raise LookupError("%s[%s] took over %s s" % (where, short(key, 40), look["timeout"]))
    except Exception as e:
        raise LookupError("%s[%s] raised %s" % (where, short(key, 40), said(e)))


def members_of(path, obj, look, limit):
    """The lines for what obj holds (and how many there are), or, for an
    object that holds nothing a path reaches, its own line."""
    kind, t = kind_of(obj)
    if kind == "pdframe":
        return frame_columns(obj, look, limit)
    if kind == "plframe":
        return frame_columns(obj, look, limit, polars=True)
    pairs, total = member_pairs(obj, kind, t, look)
    if pairs is None:
        return [var_of(path, obj, look)], 1
    lines = []
    for name, value in pairs:
        if len(lines) >= limit:
            break
        lines.append(var_of(name, value, look))
    return lines, total


def member_pairs(obj, kind, t, look):
    """(name, value) pairs of what obj holds, at most VARS_WORKER_MAX, and
    how many there are; (None, 0) for an object without members."""
    limit = look.get("limit_pairs", 10000)
    everything = look["all"]
    mro = _tmro(t)
    if kind == "dict":
        items = dict.items(obj) if dict in mro else [(k, obj[k]) for k in list(obj)[:limit]]
        return ((short(k, 60, 0), v) for k, v in items), len(obj) if dict not in mro else dict.__len__(obj)
    if kind == "seq":
        return ((str(i), v) for i, v in enumerate(base_iter(obj, t))), length(obj, t)
    if kind == "set":
        return ((short(v, 60, 1), v) for v in base_iter(obj, t)), length(obj, t)
    if kind in ("ndarray", "tensor") and len(obj.shape) > 0:
        count = int(obj.shape[0])
        return ((str(i), obj[i]) for i in range(count)), count
    if kind in ("pdseries", "plseries", "pdindex"):
        count = len(obj)
        head = obj.head(VARS_LIMIT) if kind != "pdindex" else obj[:VARS_LIMIT]
        if kind == "pdseries":
            return ((short(k, 60, 0), v) for k, v in zip(head.index.tolist(), head.tolist())), count
        return ((str(i), v) for i, v in enumerate(head.to_list() if kind == "plseries" else head.tolist())), count
    if kind == "xdataset":
        found = list(obj.data_vars.items()) + list(obj.coords.items())
        return ((str(k), v) for k, v in found), len(found)
    if kind == "xarray":
        return ((str(k), v) for k, v in obj.coords.items()), len(obj.coords)
    if kind in ("module", "class"):
        d = obj.__dict__ if kind == "module" else _tdict(obj)
        names = sorted(k for k in list(d) if type(k) is str and (everything or not k.startswith("_")))
        return ((k, d[k]) for k in names), len(names)
    if kind in ("str", "bytes", "none", "bool", "int", "float", "complex", "scalar", "npscalar", "range"):
        return None, 0
    own = instance_dict(obj)
    pairs = [(k, own[k]) for k in own if type(k) is str and (everything or not k.startswith("_"))]
    for s in slots_of(t):
        for c in mro:
            d = _tdict(c).get(s)
            if type(d).__name__ == "member_descriptor":
                try:
                    pairs.append((s, d.__get__(obj, t)))
                except AttributeError:
                    pass
                break
    if not pairs and kind:
        return None, 0
    pairs.sort(key=lambda p: p[0])
    return iter(pairs), len(pairs)


def frame_columns(df, look, limit, polars=False):
    """A frame's columns, one line each: dtype, non-null count, memory,
    first values."""
    lines = []
    names = list(df.columns)
    for i, name in enumerate(names[:limit]):
        if polars:
            s = df.get_column(name)
            nulls, memory, first = s.null_count(), s.estimated_size(), s.head(FIRST).to_list()
        else:
            s = df.iloc[:, i]
            nulls, memory, first = len(s) - int(s.count()), s.memory_usage(index=False, deep=False), s.iloc[:FIRST].tolist()
        v = {"name": clip(str(name), VAR_NAME_LIMIT, "name"), "type": clip(str(s.dtype), VAR_TYPE_LIMIT, "type"),
             "size": "%d non-null" % (len(s) - nulls), "memory": int(memory),
             "preview": values(first, look["preview"], "", len(s)), "members": len(s) > 0}
        if nulls:
            v["note"] = "%d null" % nulls
        lines.append(v)
    return lines, len(names)
