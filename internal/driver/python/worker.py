# polyrepl's Python worker: one session's namespace. It follows the
# protocol part above it in the same file (protocol.py): serve() runs the
# channels; this part runs cells in a __main__ module of the session's own.


def _main():
    import builtins
    import _signal

    # A real __main__ module, so that functions and classes defined in the
    # session pickle by reference the way they would in a script.
    main_module = type(sys)("__main__")
    main_module.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main_module
    namespace = main_module.__dict__

    state = {"running": False, "loop": None, "sources": {}, "fed": False, "tracing": (None, None), "rich": []}

    def display(*objs):
        """Show each object as a notebook would: its rich forms (images,
        HTML, Markdown, SVG) saved and told with the cell, else its repr
        printed."""
        for obj in objs:
            if not show_rich(state, obj):
                print(repr(obj))

    if not hasattr(builtins, "display"):
        builtins.display = display

    def on_sigint(signum, frame):
        # Only a running cell is interrupted; a late SIGINT that arrives
        # after the cell finished must not kill the session.
        if state["running"]:
            raise KeyboardInterrupt

    def start():
        # Figures are drawn headless and shown at each cell's end, as
        # IPython's inline backend does; a backend the user chose stays.
        os.environ.setdefault("MPLBACKEND", "agg")
        _signal.signal(_signal.SIGINT, on_sigint)
        # The daemon also sends SIGUSR2 when SIGINT did not stop the cell:
        # os.system() ignores SIGINT while its child runs, but a SIGUSR2
        # handler still runs as soon as it returns.
        _signal.signal(_signal.SIGUSR2, on_sigint)
        return {"version": sys.version.split()[0]}

    serve(start, lambda cell, code, value_limit: run_cell(cell, code, value_limit, namespace, state))


def run_cell(cell, code, value_limit, namespace, state):
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
            result["error"] = describe(e, None, state, only=True)
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
                    put_value(result, repr(value), value_limit)
                    show_rich(state, value)
        finally:
            state["running"] = False
    except KeyboardInterrupt as e:
        result["status"] = "interrupted"
        result["error"] = describe(e, e.__traceback__, state)
    except SystemExit as e:
        if not caught_exit(result, e.code):
            result["status"] = "error"
            result["error"] = describe(e, e.__traceback__, state)
    except BaseException as e:
        result["status"] = "error"
        result["error"] = describe(e, e.__traceback__, state)
    finally:
        state["running"] = False
    if state["rich"]:
        result["rich"] = state["rich"]
        state["rich"] = []
    show_figures(result)
    result["names"] = names(namespace)
    return result


FIGURES_LIMIT = 20  # figures and rich outputs saved per cell; more are counted

# The rich forms a value can have, by the method that gives each (as
# IPython's display machinery asks), and the file extension it is kept as.
RICH_METHODS = (("image/png", "_repr_png_", ".png"), ("image/jpeg", "_repr_jpeg_", ".jpg"),
                ("image/svg+xml", "_repr_svg_", ".svg"), ("text/html", "_repr_html_", ".html"),
                ("text/markdown", "_repr_markdown_", ".md"), ("text/latex", "_repr_latex_", ".tex"))
EXT = {mime: ext for mime, _, ext in RICH_METHODS}


def show_rich(state, obj):
    """Save obj's richest forms (an image if it has one, else HTML,
    Markdown, SVG or LaTeX) as the cell's rich output; whether it had any.
    Matplotlib figures are shown at the cell's end instead."""
    if type(obj).__module__.startswith("matplotlib"):
        return False
    bundle = {}
    try:
        method = getattr(obj, "_repr_mimebundle_", None)
        if callable(method):
            got = method()
            if isinstance(got, tuple):
                got = got[0]
            if isinstance(got, dict):
                bundle.update({k: v for k, v in got.items() if k in EXT})
        for mime, name, _ in RICH_METHODS:
            if mime in bundle:
                continue
            method = getattr(obj, name, None)
            if callable(method):
                got = method()
                if isinstance(got, tuple):
                    got = got[0]
                if got is not None:
                    bundle[mime] = got
    except Exception:
        return False
    # An image says the most; else the first text form, in the order above.
    for mime in ("image/png", "image/jpeg", "image/svg+xml", "text/html", "text/markdown", "text/latex"):
        if mime in bundle:
            data = bundle[mime]
            if isinstance(data, str) and mime.startswith("image/") and mime != "image/svg+xml":
                import binascii
                data = binascii.a2b_base64(data)
            if isinstance(data, str):
                data = data.encode("utf-8", "backslashreplace")
            if not isinstance(data, (bytes, bytearray)):
                continue
            try:
                save_rich(state["rich"], mime, bytes(data), cut(repr(obj), 200))
            except OSError:
                return False
            return True
    return False


def save_rich(rich, mime, data, text):
    """Keep one rich output as a new private file in the spool."""
    spool = _spool[0]
    if not spool or len(rich) >= FIGURES_LIMIT:
        return
    path = os.path.join(spool, "rich-%d-%s%s" % (os.getpid(), os.urandom(6).hex(), EXT.get(mime, ".bin")))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    width, height = png_size(path) if mime == "image/png" else (0, 0)
    rich.append({"mime": mime, "file": path, "width": width, "height": height, "bytes": len(data), "text": text})


def show_figures(result):
    """Save every open matplotlib figure as a PNG in the spool directory
    and close it, as IPython's inline backend shows a cell's figures: the
    daemon takes the files over and tells them as the cell's rich output."""
    plt = sys.modules.get("matplotlib.pyplot")
    spool = _spool[0]
    if plt is None or not spool:
        return
    rich, more = result.get("rich", []), 0
    try:
        nums = plt.get_fignums()
    except Exception:
        return
    for num in nums:
        try:
            fig = plt.figure(num)
            if len(rich) >= FIGURES_LIMIT:
                more += 1
                continue
            path = os.path.join(spool, "figure-%d-%s.png" % (os.getpid(), os.urandom(6).hex()))
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o600)
            with os.fdopen(fd, "wb") as f:
                fig.savefig(f, format="png", dpi=100)
            width, height = png_size(path)
            rich.append({"mime": "image/png", "file": path, "width": width, "height": height,
                         "bytes": os.path.getsize(path), "text": "<Figure size %dx%d>" % (width, height)})
        except Exception as e:
            result.setdefault("rich_errors", []).append(cut(str(e), 500))
        finally:
            try:
                plt.close(num)
            except Exception:
                pass
    if rich:
        result["rich"] = rich
    if more:
        result["rich_more"] = more


def png_size(path):
    """A PNG's width and height, from its header."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return 0, 0
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


CO_COROUTINE = 0x0080  # inspect.CO_COROUTINE, without importing inspect


def run(code, namespace, state):
    # The cell's trace and profile functions (sys.settrace, sys.setprofile)
    # apply to the cell only: they are put back just before it runs and
    # taken off as soon as it returns, so one that raises cannot fire in
    # the worker's own code; what it raises is the cell's error.
    trace, profile = state["tracing"]
    state["tracing"] = (None, None)
    if trace is not None or profile is not None:
        _setprofile(profile)
        _settrace(trace)
    try:
        value = eval(code, namespace)
        if code.co_flags & CO_COROUTINE:
            # Top-level await: run the cell on the session's own event loop.
            import asyncio
            if state["loop"] is None or state["loop"].is_closed():
                state["loop"] = asyncio.new_event_loop()
            value = state["loop"].run_until_complete(value)
    finally:
        trace, profile, raised = untrace()
        state["tracing"] = (trace, profile)
    if raised is not None:
        raise raised
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


def describe(exc, tb, state, only=False):
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
        drop_worker_frames(te)
        text = "".join(te.format())
    return error_of(exc, text)


def drop_worker_frames(te):
    """Remove the worker's own frames (e.g. the SIGINT handler that raised
    KeyboardInterrupt) from a traceback and the exceptions chained to it."""
    import traceback
    seen = set()
    while te is not None and id(te) not in seen:
        seen.add(id(te))
        te.stack = traceback.StackSummary.from_list(
            [f for f in te.stack if f.filename != WORKER_FILE])
        for chained in (te.__cause__, te.__context__):
            if chained is not None:
                drop_worker_frames(chained)
        te = None


def names(namespace, limit=500):
    found = sorted(k for k in list(namespace) if not k.startswith("_"))
    return found[:limit]


if __name__ == "__main__":
    _main()
