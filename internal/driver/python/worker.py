# polyrepl's Python worker: one session's namespace.
#
# The daemon starts it as `python -u worker.py SENTINEL` and talks to it over
# three channels:
#   fd 3  commands in: a header line "exec CELL VALUE_LIMIT NBYTES" and then
#         NBYTES of UTF-8 code (no JSON: the decoder would import re)
#   fd 4  events out, one JSON object per line ({"op": "hello"|"done", ...})
#   fd 1  and fd 2 are one pipe that carries every byte the cell prints: its
#         own prints, its subprocesses' and C code's. After a cell ends, the
#         worker writes SENTINEL to fd 1 so the daemon knows that all of that
#         cell's output has arrived before it reports the cell done.
#
# Everything the worker needs lives inside functions, so the user's namespace
# (a fresh module installed as __main__) holds only what the user defined.
# Keep this file valid Python 3.8 and free of heavy imports: it is on the path
# of every session's start, where json, signal (enum), ast, inspect and
# linecache (re) would each cost milliseconds. It uses their C halves.
import os
import sys


def _main():
    if sys.version_info < (3, 8):
        sys.stderr.write("polyrepl needs Python 3.8 or newer; %s is %s\n"
                         % (sys.executable, sys.version.split()[0]))
        sys.exit(3)

    import builtins
    import _signal

    worker_file = os.path.abspath(__file__)
    worker_pid = os.getpid()
    sentinel = sys.argv[1].encode()
    # Look like the interactive interpreter: no script name, the cwd first
    # on the import path (not this file's directory).
    sys.argv = [""]
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(worker_file):
        sys.path[0] = ""

    # The control channels must not leak into the cell's subprocesses.
    os.set_inheritable(3, False)
    os.set_inheritable(4, False)
    commands = os.fdopen(3, "rb")
    events = os.fdopen(4, "wb")

    # Text written by Python code is UTF-8 whatever the locale, so the
    # daemon can decode it; write-through keeps it ordered with the bytes
    # that subprocesses and C code write to the same pipe.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(encoding="utf-8", errors="backslashreplace",
                               write_through=True)
        except (AttributeError, ValueError):
            pass

    def send(obj):
        events.write(dumps(obj).encode() + b"\n")
        events.flush()

    # A real __main__ module, so that functions and classes defined in the
    # session pickle by reference the way they would in a script.
    main_module = type(sys)("__main__")
    main_module.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main_module
    namespace = main_module.__dict__

    state = {"running": False, "loop": None, "libc": False, "sources": {}, "fed": False}

    def on_sigint(signum, frame):
        # Only a running cell is interrupted; a late SIGINT that arrives
        # after the cell finished must not kill the session.
        if state["running"]:
            raise KeyboardInterrupt

    _signal.signal(_signal.SIGINT, on_sigint)
    # The daemon also sends SIGUSR2 when SIGINT did not stop the cell:
    # os.system() ignores SIGINT while its child runs, but a SIGUSR2
    # handler still runs as soon as it returns.
    _signal.signal(_signal.SIGUSR2, on_sigint)

    send({"op": "hello", "version": sys.version.split()[0],
          "implementation": sys.implementation.name,
          "executable": sys.executable, "pid": os.getpid()})

    while True:
        header = commands.readline()
        if not header:
            break  # the daemon closed the channel: end quietly
        parts = header.split()
        if len(parts) != 4 or parts[0] != b"exec":
            continue
        cell, value_limit, size = int(parts[1]), int(parts[2]), int(parts[3])
        code = commands.read(size).decode("utf-8", "surrogateescape")
        result = run_cell(cell, code, value_limit, namespace, state, worker_file)
        if os.getpid() != worker_pid:
            # A child forked by the cell ran off its end: it must not
            # answer for the session or read its commands.
            flush_all(state, b"")
            os._exit(0)
        result["flushed"] = flush_all(state, sentinel)
        send(result)


def dumps(obj):
    """JSON for the few shapes the worker sends, with the C string encoder
    of the json package (importing json itself would import re)."""
    from _json import encode_basestring_ascii as quote
    if obj is None:
        return "null"
    if obj is True:
        return "true"
    if obj is False:
        return "false"
    if isinstance(obj, int):
        return str(int(obj))
    if isinstance(obj, str):
        return quote(obj)
    if isinstance(obj, dict):
        return "{" + ",".join(quote(str(k)) + ":" + dumps(v) for k, v in obj.items()) + "}"
    if isinstance(obj, (list, tuple)):
        return "[" + ",".join(dumps(v) for v in obj) + "]"
    return quote(str(obj))


def flush_all(state, sentinel):
    """Push out everything the cell wrote, then mark the end of its output."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            pass
    if state["libc"] is False:
        state["libc"] = None
        try:
            import ctypes
            state["libc"] = ctypes.CDLL(None)
        except Exception:
            pass
    if state["libc"] is not None:
        try:
            state["libc"].fflush(None)  # C stdio buffers, e.g. printf
        except Exception:
            pass
    if not sentinel:
        return False
    try:
        os.write(1, sentinel)
        return True
    except OSError:
        return False  # fd 1 was closed by the cell; the daemon won't wait


def run_cell(cell, code, value_limit, namespace, state, worker_file):
    import _ast

    filename = "<cell %d>" % cell
    remember_source(state, filename, code)

    result = {"op": "done", "cell": cell, "status": "done"}
    flags = getattr(_ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)
    try:
        try:
            tree = compile(code, filename, "exec", _ast.PyCF_ONLY_AST | flags, dont_inherit=True)
        except (SyntaxError, ValueError, OverflowError) as e:
            result["status"] = "error"
            result["error"] = describe(e, None, worker_file, state, only=True)
            return result
        last = None
        # REPL semantics: a final expression's value is shown, unless the
        # cell ends with ';' (as in IPython).
        if tree.body and isinstance(tree.body[-1], _ast.Expr) and not code.rstrip().endswith(";"):
            last = _ast.Expression(tree.body.pop().value)
        state["running"] = True
        try:
            if tree.body:
                run(compile(_ast.Module(tree.body, []), filename, "exec", flags, dont_inherit=True),
                    namespace, state)
            if last is not None:
                value = run(compile(last, filename, "eval", flags, dont_inherit=True), namespace, state)
                if value is not None:
                    import builtins
                    builtins._ = value
                    text = repr(value)
                    result["value_total"] = len(text)
                    if len(text) > value_limit:
                        head = value_limit // 2
                        result["value_head"] = text[:head]
                        result["value_tail"] = text[len(text) - (value_limit - head):]
                    else:
                        result["value"] = text
        finally:
            state["running"] = False
    except KeyboardInterrupt as e:
        result["status"] = "interrupted"
        result["error"] = describe(e, e.__traceback__, worker_file, state)
    except SystemExit as e:
        code = e.code
        if code is None or code == 0:
            result["note"] = "sys.exit(%s) was caught; the session stays up" % ("" if code is None else code)
        else:
            result["status"] = "error"
            result["error"] = describe(e, e.__traceback__, worker_file, state)
            result["note"] = "SystemExit was caught; the session stays up"
    except BaseException as e:
        result["status"] = "error"
        result["error"] = describe(e, e.__traceback__, worker_file, state)
    finally:
        state["running"] = False
    result["names"] = names(namespace)
    return result


CO_COROUTINE = 0x0080  # inspect.CO_COROUTINE, without importing inspect


def run(code, namespace, state):
    value = eval(code, namespace)
    if code.co_flags & CO_COROUTINE:
        # Top-level await: run the cell on the session's own event loop.
        import asyncio
        if state["loop"] is None or state["loop"].is_closed():
            state["loop"] = asyncio.new_event_loop()
        value = state["loop"].run_until_complete(value)
    return value


def remember_source(state, filename, code):
    """Keep a cell's source for tracebacks and inspect.getsource. linecache
    imports re, so it is only fed once something else imported it."""
    entry = (len(code), None, code.splitlines(True), filename)
    state["sources"][filename] = entry
    linecache = sys.modules.get("linecache")
    if linecache is not None:
        if not state["fed"]:
            linecache.cache.update(state["sources"])
            state["fed"] = True
        linecache.cache[filename] = entry


def describe(exc, tb, worker_file, state, only=False):
    """The error as the user would see it in a REPL: their frames only."""
    import linecache
    import traceback
    linecache.cache.update(state["sources"])
    state["fed"] = True
    if only:
        text = "".join(traceback.format_exception_only(type(exc), exc))
    else:
        # Start at the first frame of the user's code, dropping the worker's
        # frames (and asyncio's, for top-level await) above it.
        t = tb
        while t is not None and not t.tb_frame.f_code.co_filename.startswith("<cell "):
            t = t.tb_next
        te = traceback.TracebackException(type(exc), exc, t if t is not None else tb)
        drop_worker_frames(te, worker_file)
        text = "".join(te.format())
    name = type(exc).__qualname__
    module = type(exc).__module__
    if module not in ("builtins", "__main__"):
        name = module + "." + name
    try:
        message = str(exc)
    except Exception:
        message = "<str() of the exception failed>"
    return {"type": name, "message": message, "traceback": text}


def drop_worker_frames(te, worker_file):
    """Remove the worker's own frames (e.g. the SIGINT handler that raised
    KeyboardInterrupt) from a traceback and the exceptions chained to it."""
    import traceback
    seen = set()
    while te is not None and id(te) not in seen:
        seen.add(id(te))
        te.stack = traceback.StackSummary.from_list(
            [f for f in te.stack if f.filename != worker_file])
        for chained in (te.__cause__, te.__context__):
            if chained is not None:
                drop_worker_frames(chained, worker_file)
        te = None


def names(namespace, limit=500):
    found = sorted(k for k in list(namespace) if not k.startswith("_"))
    return found[:limit]


if __name__ == "__main__":
    _main()
