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
            if not show_rich(state["rich"], obj):
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

    def run(cell, code, value_limit):
        try:
            return run_cell(cell, code, value_limit, namespace, state)
        finally:
            # A debugger leaves its SIGINT handler after `continue` (to
            # break into it on Ctrl-C): the next cell is interrupted by the
            # worker's again. A handler the cell chose itself stays.
            handler = _signal.getsignal(_signal.SIGINT)
            bdb = sys.modules.get("bdb")
            if bdb is not None and isinstance(getattr(handler, "__self__", None), bdb.Bdb):
                _signal.signal(_signal.SIGINT, on_sigint)

    serve(start, run, lambda word: complete(word, namespace),
          lambda query: look_at(namespace, hidden, query))


def hidden(name):
    """Whether a name is the worker's own: none of them are in the
    session's namespace."""
    return False


def complete(word, namespace):
    """What word may become, by rlcompleter on the session's namespace
    (names, keywords, builtins, and attributes after a dot: df.co -> the
    frame's columns and methods), as the interactive interpreter's Tab
    does. Nothing it prints reaches the session's output, and it sets no
    readline completer (its import would)."""
    import io
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = io.StringIO()
    hid = "readline" not in sys.modules
    if hid:
        sys.modules["readline"] = None  # rlcompleter's import then sets nothing
    try:
        import rlcompleter
        completer = rlcompleter.Completer(namespace)
        found = []
        for state in range(1000):
            m = completer.complete(word, state)
            if m is None:
                break
            if m not in found:
                found.append(m)
        return sorted(found)
    finally:
        if hid and sys.modules.get("readline", 0) is None:
            del sys.modules["readline"]
        sys.stdout, sys.stderr = saved


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
                    show_rich(state["rich"], value)
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
    result["names"], result["vars"], result["vars_total"] = cell_look(namespace, hidden)
    return result


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


if __name__ == "__main__":
    _main()
