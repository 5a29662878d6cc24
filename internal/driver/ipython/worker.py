# polyrepl's IPython worker: one session's IPython shell, without a terminal.
#
# The daemon starts it as `python -u worker.py SENTINEL` and talks to it over
# three channels (the protocol of internal/driver/worker):
#   fd 3  commands in: a header line "exec CELL VALUE_LIMIT NBYTES" and then
#         NBYTES of UTF-8 code
#   fd 4  events out, one JSON object per line ({"op": "hello"|"done", ...})
#   fd 1  and fd 2 are one pipe that carries every byte the cell prints: its
#         own prints, its subprocesses' and C code's. After a cell ends, the
#         worker writes SENTINEL to fd 1 so the daemon knows that all of that
#         cell's output has arrived before it reports the cell done.
#
# Each cell runs through IPython's InteractiveShell.run_cell, so magics,
# !shell commands, Out[n] and _ work as in IPython. The shell's displayhook
# and traceback display are redirected: the final value and the traceback
# travel in the "done" event instead of being printed.
#
# Everything the worker needs lives inside functions, so the user's namespace
# (IPython's own __main__ module) holds only what IPython and the user put
# there.
import os
import sys


def _main():
    worker_pid = os.getpid()
    worker_file = os.path.abspath(__file__)
    sentinel = sys.argv[1].encode()
    # Look like the interactive interpreter: no script name, the cwd first
    # on the import path (not this file's directory).
    sys.argv = [""]
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(worker_file):
        sys.path[0] = ""

    if sys.version_info < (3, 8):
        sys.stderr.write("polyrepl needs Python 3.8 or newer for IPython; %s is %s\n"
                         % (sys.executable, sys.version.split()[0]))
        sys.exit(3)

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

    try:
        import IPython
        from IPython.core.interactiveshell import InteractiveShell
        from traitlets.config import Config
    except ImportError as e:
        sys.stderr.write("IPython is not installed for %s: pip install ipython, or choose "
                         "an interpreter that has it with --exe (%s)\n" % (sys.executable, e))
        sys.exit(3)

    import _signal

    config = Config()
    config.InteractiveShell.colors = "NoColor"
    config.InteractiveShell.autocall = 0
    config.InteractiveShell.autoindent = False
    # No history database: sessions must not share or lock a sqlite file.
    config.HistoryManager.enabled = False
    config.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=config)
    # Shell commands write straight to the output pipe, not through a pty.
    shell.system = shell.system_raw

    state = {"value": None, "traceback": None, "libc": False}
    install_hooks(shell, state)

    def send(obj):
        events.write(dumps(obj).encode() + b"\n")
        events.flush()

    # SIGINT (and SIGUSR2, which the daemon sends when SIGINT did not stop
    # the cell) raise KeyboardInterrupt only while a cell runs: Python's own
    # C handler then, so no worker frame shows in the traceback; between
    # cells the signals are ignored.
    def between_cells():
        _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
        _signal.signal(_signal.SIGUSR2, _signal.SIG_IGN)

    def in_cell():
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)
        _signal.signal(_signal.SIGUSR2, _signal.default_int_handler)

    between_cells()
    send({"op": "hello", "version": IPython.__version__,
          "implementation": sys.implementation.name,
          "executable": sys.executable, "pid": os.getpid(),
          "note": "IPython %s on Python %s" % (IPython.__version__, sys.version.split()[0])})

    while True:
        header = commands.readline()
        if not header:
            break  # the daemon closed the channel: end quietly
        parts = header.split()
        if len(parts) != 4 or parts[0] != b"exec":
            continue
        cell, value_limit, size = int(parts[1]), int(parts[2]), int(parts[3])
        code = commands.read(size).decode("utf-8", "surrogateescape")
        result = run_cell(shell, state, cell, code, value_limit, in_cell, between_cells)
        if os.getpid() != worker_pid:
            # A child forked by the cell ran off its end: it must not
            # answer for the session or read its commands.
            flush_all(state, b"")
            os._exit(0)
        result["flushed"] = flush_all(state, sentinel)
        send(result)


def install_hooks(shell, state):
    """Keep the value and the traceback out of the output: the displayhook
    still computes IPython's text/plain display and updates Out and _, but
    hands the text to the worker; tracebacks are kept, not printed."""
    hook = shell.displayhook

    def write_format_data(format_dict, md_dict=None):
        state["value"] = format_dict.get("text/plain")

    hook.write_output_prompt = lambda: None
    hook.write_format_data = write_format_data
    hook.finish_displayhook = lambda: None

    def show_traceback(etype, evalue, stb):
        state["traceback"] = shell.InteractiveTB.stb2text(stb)

    def show_usage_error(exc):
        state["traceback"] = "UsageError: %s" % exc

    shell._showtraceback = show_traceback
    shell.show_usage_error = show_usage_error


def run_cell(shell, state, cell, code, value_limit, in_cell, between_cells):
    state["value"] = None
    state["traceback"] = None
    result = {"op": "done", "cell": cell, "status": "done"}
    error = None
    in_cell()
    try:
        outcome = shell.run_cell(code, store_history=True)
        error = outcome.error_before_exec or outcome.error_in_exec
    except KeyboardInterrupt as e:
        # Interrupted inside IPython's own machinery rather than the code.
        error = e
    except BaseException as e:
        error = e
    finally:
        between_cells()
    if error is not None:
        if isinstance(error, KeyboardInterrupt):
            result["status"] = "interrupted"
        elif isinstance(error, SystemExit) and error.code in (None, 0):
            result["note"] = "sys.exit(%s) was caught; the session stays up" % (
                "" if error.code is None else error.code)
            error = None
        else:
            result["status"] = "error"
            if isinstance(error, SystemExit):
                result["note"] = "SystemExit was caught; the session stays up"
    if error is not None:
        result["error"] = describe(error, state["traceback"])
    text = state["value"]
    if text is not None and error is None:
        result["value_total"] = len(text)
        if len(text) > value_limit:
            head = value_limit // 2
            result["value_head"] = text[:head]
            result["value_tail"] = text[len(text) - (value_limit - head):]
        else:
            result["value"] = text
    result["names"] = names(shell)
    return result


def describe(exc, traceback):
    name = type(exc).__qualname__
    module = type(exc).__module__
    if module not in ("builtins", "__main__"):
        name = module + "." + name
    try:
        message = str(exc)
    except Exception:
        message = "<str() of the exception failed>"
    if traceback is None:
        traceback = "%s: %s" % (name, message) if message else name
    return {"type": name, "message": message, "traceback": traceback}


def names(shell, limit=500):
    """The user's names, as %who lists them: not IPython's own (In, Out,
    get_ipython, exit, quit…) unless the user rebound them."""
    ns = shell.user_ns
    hidden = shell.user_ns_hidden
    missing = object()
    found = sorted(k for k in list(ns)
                   if isinstance(k, str) and not k.startswith("_")
                   and ns[k] is not hidden.get(k, missing))
    return found[:limit]


def dumps(obj):
    """JSON for the few shapes the worker sends, with the C string encoder
    of the json package."""
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


if __name__ == "__main__":
    _main()
