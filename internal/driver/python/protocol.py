# polyrepl's Python worker protocol, shared by the python and ipython
# runtimes: each runtime's worker is this text followed by its own part,
# written out as one file.
#
# The daemon starts a worker as `python -u worker.py SENTINEL` and talks to
# it over three channels (the protocol of internal/driver/worker):
#   fd 3  commands in: a header line "exec CELL VALUE_LIMIT NBYTES" and then
#         NBYTES of UTF-8 code (no JSON: the decoder would import re)
#   fd 4  events out, one JSON object per line ({"op": "hello"|"done", ...})
#   fd 1  and fd 2 are one pipe that carries every byte the cell prints: its
#         own prints, its subprocesses' and C code's. After a cell ends, the
#         worker writes SENTINEL to fd 1 so the daemon knows that all of that
#         cell's output has arrived before it reports the cell done.
#
# Everything lives inside functions, so the user's namespace holds only what
# the user (and IPython) put there. Keep this valid Python 3.8 and free of
# heavy imports: it is on the path of every session's start, where json,
# signal (enum), ast, inspect and linecache (re) would each cost
# milliseconds. It uses their C halves.
import os
import sys

WORKER_FILE = os.path.abspath(__file__)


def serve(start, run_cell):
    """Set up the channels, say hello with what start() returns (start may
    exit with status 3 and a reason on stderr), then run each cell with
    run_cell(cell, code, value_limit), which returns the "done" event, until
    the daemon closes the command channel."""
    if sys.version_info < (3, 8):
        sys.stderr.write("polyrepl needs Python 3.8 or newer; %s is %s\n"
                         % (sys.executable, sys.version.split()[0]))
        sys.exit(3)
    worker_pid = os.getpid()
    sentinel = sys.argv[1].encode()
    # Look like the interactive interpreter: no script name, the cwd first
    # on the import path (not this file's directory).
    sys.argv = [""]
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(WORKER_FILE):
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

    hello = {"op": "hello", "implementation": sys.implementation.name,
             "executable": sys.executable, "pid": os.getpid()}
    hello.update(start())
    send(hello)

    while True:
        header = commands.readline()
        if not header:
            break  # the daemon closed the channel: end quietly
        parts = header.split()
        if len(parts) != 4 or parts[0] != b"exec":
            continue
        cell, value_limit, size = int(parts[1]), int(parts[2]), int(parts[3])
        code = commands.read(size).decode("utf-8", "surrogateescape")
        result = run_cell(cell, code, value_limit)
        if os.getpid() != worker_pid:
            # A child forked by the cell ran off its end: it must not
            # answer for the session or read its commands.
            flush_all(b"")
            os._exit(0)
        result["flushed"] = flush_all(sentinel)
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


_libc = [False]  # the C library, once looked up (None if it cannot be)


def flush_all(sentinel):
    """Push out everything the cell wrote, then mark the end of its output."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            pass
    if _libc[0] is False:
        _libc[0] = None
        try:
            import ctypes
            _libc[0] = ctypes.CDLL(None)
        except Exception:
            pass
    if _libc[0] is not None:
        try:
            _libc[0].fflush(None)  # C stdio buffers, e.g. printf
        except Exception:
            pass
    if not sentinel:
        return False
    try:
        os.write(1, sentinel)
        return True
    except OSError:
        return False  # fd 1 was closed by the cell; the daemon won't wait


def put_value(result, text, value_limit):
    """Put a value's display in the "done" event, its head and tail only
    when it is over the limit."""
    result["value_total"] = len(text)
    if len(text) > value_limit:
        head = value_limit // 2
        result["value_head"] = text[:head]
        result["value_tail"] = text[len(text) - (value_limit - head):]
    else:
        result["value"] = text


def error_of(exc, traceback):
    """The "error" of a "done" event: the exception's qualified type, its
    message and the traceback text the user would see."""
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


def caught_exit(result, code):
    """sys.exit() in a cell ends the cell, not the session: a clean exit is
    a note, another an error (set by the caller) with a note. Returns
    whether the exit was clean."""
    if code is None or code == 0:
        result["note"] = "sys.exit(%s) was caught; the session stays up" % ("" if code is None else code)
        return True
    result["note"] = "SystemExit was caught; the session stays up"
    return False
