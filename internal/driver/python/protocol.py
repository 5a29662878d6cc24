# polyrepl's Python worker protocol, shared by the python and ipython
# runtimes: each runtime's worker is this text followed by its own part,
# written out as one file.
#
# The daemon starts a worker as `python -u worker.py`, with the end marker
# in $POLYREPL_WORKER_SENTINEL (removed at once, so that neither `ps` nor the
# cell's children see it), and talks to it over three channels (the
# protocol of internal/driver/worker):
#   fd 3  commands in: a header line "exec CELL VALUE_LIMIT NBYTES NONCE" and
#         then NBYTES of UTF-8 code (no JSON: the decoder would import re)
#   fd 4  events out, one JSON object per line ({"op": "hello"|"done", ...});
#         a "done" echoes the cell's NONCE, so the daemon can tell it from
#         anything a cell writes there
#   fd 1  and fd 2 are one pipe that carries every byte the cell prints: its
#         own prints, its subprocesses' and C code's. After a cell ends, the
#         worker writes SENTINEL to fd 1 so the daemon knows that all of that
#         cell's output has arrived before it reports the cell done.
# The worker moves fds 3 and 4 to high, close-on-exec descriptors and keeps
# copies of fds 1 and 2 there too, so a cell does not stumble on its
# channels, its children do not inherit them, and a cell that points fd 1
# elsewhere gets it back for the next cell.
#
# Everything lives inside functions, so the user's namespace holds only what
# the user (and IPython) put there. Keep this valid Python 3.8 and free of
# heavy imports: it is on the path of every session's start, where json,
# signal (enum), ast, inspect and linecache (re) would each cost
# milliseconds. It uses their C halves.
import os
import sys

WORKER_FILE = os.path.abspath(__file__)

# The worker's own references to what it calls after a cell: a cell may
# replace os.write or sys.settrace in the modules it shares with the worker
# (`os.write = lambda *a: 0`), and the worker must still reach its channels.
_write = os.write
_fstat = os.fstat
_dup2 = os.dup2
_settrace = sys.settrace
_setprofile = sys.setprofile
_gettrace = sys.gettrace
_getprofile = sys.getprofile

# Bounds of what one "done" event carries, in characters: a cell's error or
# names can be of any size (a KeyError of a 6 M-character key, five names of
# 20 MB), and the event must stay small enough for the daemon to take it
# whole. The value is bounded by the VALUE_LIMIT of each exec.
MESSAGE_LIMIT = 10000
TRACEBACK_LIMIT = 30000
NOTE_LIMIT = 10000
NAME_LIMIT = 200
TYPE_LIMIT = 200
NAMES_LIMIT = 500
# A question's prompt, in characters (the daemon's api.PromptLimit): the
# "input" event says how long the whole was, and stays small.
PROMPT_LIMIT = 2000

SENTINEL_VAR = "POLYREPL_WORKER_SENTINEL"
# Where the worker saves the whole of an error it cuts (a private
# directory of the daemon's): the event stays small, and nothing is lost.
SPOOL_VAR = "POLYREPL_WORKER_SPOOL"
_spool = [None]


def serve(start, run_cell, complete=None, look=None):
    """Set up the channels, say hello with what start() returns (start may
    exit with status 3 and a reason on stderr), then run each cell with
    run_cell(cell, code, value_limit), which returns the "done" event, until
    the daemon closes the command channel. Between cells, a "complete
    NBYTES NONCE" command asks complete(word) for the word's completions,
    sent as a "complete" event, and a "vars NBYTES NONCE" command asks
    look(query) for a look at the session (vars.py), sent as a "vars"
    event, and "fork" copies the worker (fork.py); nothing is printed."""
    if sys.version_info < (3, 8):
        sys.stderr.write("polyrepl needs Python 3.8 or newer; %s is %s\n"
                         % (sys.executable, sys.version.split()[0]))
        sys.exit(3)
    worker_pid = os.getpid()
    # The end marker comes in the environment, not on the command line that
    # every user can read (ps, /proc/PID/cmdline); an older daemon put it
    # in argv. It is taken out before any cell runs, so a cell's children
    # do not inherit it.
    sentinel = os.environ.pop(SENTINEL_VAR, "")
    _spool[0] = os.environ.pop(SPOOL_VAR, None)
    if not sentinel and len(sys.argv) > 1:
        sentinel = sys.argv[1]
    sentinel = sentinel.encode()
    # Look like the interactive interpreter: no script name, the cwd first
    # on the import path (not this file's directory).
    sys.argv = [""]
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(WORKER_FILE):
        sys.path[0] = ""

    # The channels move to high, close-on-exec descriptors: a cell writing
    # to fd 4 or opening a file (which gets the lowest free number) does
    # not touch them, and the cell's subprocesses do not inherit them. The
    # copies of fds 1 and 2 are what the worker restores after a cell that
    # pointed them elsewhere.
    command_fd, event_fd = high_fd(3), high_fd(4)
    os.close(3)
    os.close(4)
    saved = []
    for fd in (1, 2):
        try:
            saved.append((fd, high_fd(fd), identity(fd)))
        except OSError:
            pass  # started without it: nothing to restore
    out_fd = saved[0][1] if saved and saved[0][0] == 1 else 1
    commands = os.fdopen(command_fd, "rb")
    events = os.fdopen(event_fd, "wb")

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

    current = {"cell": 0, "nonce": None}
    install_stdin(commands, send, current, lambda: flush_all(sentinel, out_fd))

    hello = {"op": "hello", "implementation": sys.implementation.name,
             "executable": sys.executable, "pid": os.getpid()}
    hello.update(start())
    send(hello)

    while True:
        header = commands.readline()
        if not header:
            break  # the daemon closed the channel: end quietly
        parts = header.split()
        if len(parts) == 2 and parts[0] == b"input":
            commands.read(int(parts[1]))  # an answer that came too late: the cell ended
            continue
        if len(parts) == 3 and parts[0] == b"complete":
            word = commands.read(int(parts[1])).decode("utf-8", "replace")
            matches = []
            if complete is not None:
                try:
                    matches = complete(word)
                except BaseException:
                    matches = []
            send({"op": "complete", "nonce": parts[2].decode("ascii", "replace"),
                  "matches": [m for m in matches[:200] if isinstance(m, str) and len(m) <= 300]})
            continue
        if len(parts) == 3 and parts[0] == b"vars":
            event = {"op": "vars", "nonce": parts[2].decode("ascii", "replace")}
            try:
                event.update(look(loads(commands.read(int(parts[1])).decode("utf-8", "replace"))))
            except LookupError as e:
                event["error"] = cut(str(e.args[0] if e.args else e), 2 * VAR_NOTE_LIMIT, " ")
            except BaseException as e:
                event["error"] = "the look failed: " + said(e) if look else "this worker cannot look"
            untrace()
            send(event)
            continue
        if len(parts) == 3 and parts[0] == b"fork":
            marker = fork_command(commands.read(int(parts[1])), parts[2], send,
                                  (command_fd, event_fd), saved, out_fd)
            if marker is not None:  # the copy, on its own channels
                sentinel, worker_pid = marker, os.getpid()
                hello.update(pid=worker_pid, forked=True)
                send(hello)
            continue
        if len(parts) not in (4, 5) or parts[0] != b"exec":
            continue
        cell, value_limit, size = int(parts[1]), int(parts[2]), int(parts[3])
        nonce = parts[4].decode("ascii", "replace") if len(parts) == 5 else None
        code = commands.read(size).decode("utf-8", "surrogateescape")
        current["cell"], current["nonce"] = cell, nonce
        try:
            result = run_cell(cell, code, value_limit)
        except BaseException as e:
            # The worker's own code failed (a trace function the cell left
            # raising in it, a bug): the cell's error, not the session's end.
            result = {"op": "done", "cell": cell, "status": "error", "error": error_of(e, None)}
        raised = untrace()[2]
        if raised is not None and result.get("status") == "done":
            result["status"] = "error"
            result["error"] = error_of(raised, None)
        if os.getpid() != worker_pid:
            # A child forked by the cell ran off its end: it must not
            # answer for the session or read its commands.
            flush_all(b"", out_fd)
            os._exit(0)
        # What says which cell this is comes first, so the daemon can tell
        # even from the head of an event too long to take.
        event = {"op": "done", "cell": cell}
        if nonce is not None:
            event["nonce"] = nonce
        event["status"] = result.get("status", "done")
        for key, value in result.items():
            if key not in event:
                event[key] = value
        flush_all(b"", out_fd)
        restore_streams(event, saved)
        event["flushed"] = flush_all(sentinel, out_fd)
        send(bounded(event))


# ---- input: a cell that reads standard input asks the daemon ---------------

def install_stdin(commands, send, current, mark):
    """Make sys.stdin and input() ask the daemon: each line a cell reads
    is a question ("input" event) answered on the command channel
    ("input NBYTES" then the line, or "eof"). The daemon tells its caller
    at once; nothing reads polyrepl's own commands as a cell's input."""
    import builtins

    def ask(prompt, password=False, shown=False):
        # The fields the daemon reads from the head of an event come
        # first, the prompt last: held to PROMPT_LIMIT, it stays small,
        # and even an event too long to take would say what it was.
        event = {"op": "input", "cell": current["cell"]}
        if current["nonce"] is not None:
            event["nonce"] = current["nonce"]
        # What the cell printed so far goes out first, ended by the
        # marker, so that the question comes after it.
        event["flushed"] = mark()
        event["password"], event["shown"] = password, shown
        if len(prompt) > PROMPT_LIMIT:
            event["prompt_total"] = len(prompt)
        event["prompt"] = cut(prompt, PROMPT_LIMIT)
        send(event)
        header = commands.readline()
        parts = header.split()
        if not header:
            raise EOFError("the daemon closed the command channel")
        if parts and parts[0] == b"input" and len(parts) == 2:
            return commands.read(int(parts[1])).decode("utf-8", "surrogateescape") + "\n"
        return ""  # eof

    def asked_by():
        """(prompt, password) when getpass reads the line: its prompt is
        in its frame, and a password is never shown or kept."""
        f = sys._getframe(2)
        for _ in range(8):
            if f is None:
                break
            if f.f_code.co_filename.endswith("getpass.py"):
                return str(f.f_locals.get("prompt", "")), True
            f = f.f_back
        return "", False

    class Stdin:
        encoding, errors, newlines, closed, mode, name = "utf-8", "surrogateescape", None, False, "r", "<stdin>"

        def readline(self, size=-1):
            prompt, password = asked_by()
            line = ask(prompt, password, shown=password)  # getpass wrote its prompt itself
            return line if size is None or size < 0 else line[:size]

        def read(self, size=-1):
            chunks = []
            while size is None or size < 0 or sum(map(len, chunks)) < size:
                line = self.readline()
                if not line:
                    break
                chunks.append(line)
            text = "".join(chunks)
            return text if size is None or size < 0 else text[:size]

        def readlines(self, hint=-1):
            return list(iter(self.readline, ""))

        def __iter__(self):
            return iter(self.readline, "")

        def isatty(self):
            return False

        def readable(self):
            return True

        def fileno(self):
            return 0

        def flush(self):
            pass

        def close(self):
            pass

    def ask_input(prompt=""):
        sys.stdout.flush()
        sys.stderr.flush()
        line = ask(str(prompt))
        if not line:
            raise EOFError("EOF when reading a line")
        return line[:-1] if line.endswith("\n") else line

    def ask_secret(prompt="Password: ", stream=None):
        line = ask(str(prompt), password=True)
        if not line:
            raise EOFError("EOF when reading a password")
        return line[:-1] if line.endswith("\n") else line

    sys.stdin = sys.__stdin__ = Stdin()
    builtins.input = ask_input
    sys.modules["getpass"] = secret_module(ask_secret)


def secret_module(ask_secret):
    """A getpass module whose getpass asks the daemon for a secret (the
    real one would warn that it cannot hide the echo, and read stdin); the
    rest of the real module (getuser, GetPassWarning) is loaded when first
    used, so that starting the worker costs no import."""
    module = type(sys)("getpass")
    real = []

    def load(name):
        if not real:
            fake = sys.modules.pop("getpass", None)
            try:
                import getpass as g  # the real module, now that ours is out of the way
            finally:
                sys.modules["getpass"] = fake if fake is not None else module
            real.append(g)
        return getattr(real[0], name)

    module.getpass = ask_secret
    module.__getattr__ = load
    return module


def high_fd(fd):
    """A close-on-exec duplicate of fd, numbered high, where a cell's own
    files (which take the lowest free numbers) do not reach."""
    import fcntl
    err = None
    for low in (900, 100, 10):
        try:
            return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, low)
        except OSError as e:
            err = e  # over the descriptor limit: try lower
    raise err


def identity(fd):
    st = _fstat(fd)
    return (st.st_dev, st.st_ino)


def restore_streams(result, saved):
    """Point fds 1 and 2 back at the output pipe if the cell pointed them
    elsewhere (os.dup2 of /dev/null over fd 1 silences C code), so that the
    next cell's output arrives; the "done" event says which were
    redirected, and which could not be restored."""
    redirected, unrestored = [], []
    for fd, copy, ident in saved:
        try:
            same = identity(fd) == ident
        except OSError:
            same = False  # closed by the cell
        if same:
            continue
        redirected.append(fd)
        try:
            _dup2(copy, fd)
        except OSError as e:
            unrestored.append("fd %d: %s" % (fd, e.strerror or e))
    if redirected:
        result["redirected"] = redirected
    if unrestored:
        result["unrestored"] = "; ".join(unrestored)


def untrace():
    """Turn off the trace and profile functions a cell set, so the worker's
    own code runs untraced: (trace, profile, what one of them raised). A
    raising profile function raises at the first call below; Python unsets
    it then, so the next round succeeds."""
    raised = None
    for _ in range(4):
        try:
            trace, profile = _gettrace(), _getprofile()
            _setprofile(None)
            _settrace(None)
            return trace, profile, raised
        except BaseException as e:
            raised = e
    return None, None, raised


def cut(text, limit, sep="\n"):
    """text, or its head and tail with the cut said between them, as the
    daemon's bound.Marker says it."""
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    n = len(text) - limit
    return "%s%s[\u2026 %s cut \u2026]%s%s" % (
        text[:head], sep, "1 character" if n == 1 else "{:,} characters".format(n), sep, text[len(text) - tail:])


def bounded(result):
    """The "done" event held to the bounds above: whatever a cell raised or
    named, the line the daemon reads stays small."""
    error = result.get("error")
    if isinstance(error, dict):
        message, tb = error.get("message"), error.get("traceback")
        if (isinstance(message, str) and len(message) > MESSAGE_LIMIT
                or isinstance(tb, str) and len(tb) > TRACEBACK_LIMIT):
            save_whole(error)
        for key, limit in (("type", TYPE_LIMIT), ("message", MESSAGE_LIMIT), ("traceback", TRACEBACK_LIMIT)):
            if isinstance(error.get(key), str):
                if key != "type":
                    error[key + "_total"] = len(error[key])
                error[key] = cut(error[key], limit, " " if key == "type" else "\n")
    if isinstance(result.get("note"), str):
        result["note"] = cut(result["note"], NOTE_LIMIT)
    names = result.get("names")
    if isinstance(names, list):
        result["names"] = [cut(str(n), NAME_LIMIT, " ") for n in names[:NAMES_LIMIT]]
    return result


def save_whole(error):
    """Write the whole of an error about to be cut to a new file in the
    spool directory, named in error["whole"]; if that fails the cut still
    holds, and error["whole_err"] says why."""
    if not _spool[0]:
        return
    message, tb = str(error.get("message", "")), str(error.get("traceback", ""))
    line = "%s: %s" % (error.get("type"), message) if error.get("type") else message
    text = tb if tb and message in tb else (line + "\n\n" + tb if tb else line + "\n")
    path, err = spool_text("error", text)
    if path:
        error["whole"] = path
    elif err:
        error["whole_err"] = err


def spool_text(kind, text):
    """Save text whole to a new private file in the spool directory:
    (its path, None), or (None, why not); (None, None) with no spool."""
    if not _spool[0]:
        return None, None
    path = os.path.join(_spool[0], "%s-%d-%s.txt" % (kind, os.getpid(), os.urandom(6).hex()))
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            view = memoryview(text.encode("utf-8", "backslashreplace"))
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        return path, None
    except (OSError, UnicodeError) as e:
        return None, str(e)


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


def flush_all(sentinel, out_fd=1):
    """Push out everything the cell wrote, then mark the end of its output
    on out_fd, the worker's own copy of the output pipe."""
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
        while sentinel:
            sentinel = sentinel[_write(out_fd, sentinel):]
        return True
    except OSError:
        return False  # the pipe is gone; the daemon won't wait


def put_value(result, text, value_limit):
    """Put a value's display in the "done" event, its head and tail only
    when it is over the limit."""
    result["value_total"] = len(text)
    if len(text) > value_limit:
        head = value_limit // 2
        result["value_head"] = text[:head]
        result["value_tail"] = text[len(text) - (value_limit - head):]
        path, err = spool_text("value", text)
        if path:
            result["value_whole"] = path
        elif err:
            result["value_whole_err"] = err
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


# ---- rich output: figures and rich reprs, saved for the daemon --------------

FIGURES_LIMIT = 20  # figures and rich outputs saved per cell; more are counted

# The rich forms a value can have, by the method that gives each (as
# IPython's display machinery asks), and the file extension it is kept as.
RICH_METHODS = (("image/png", "_repr_png_", ".png"), ("image/jpeg", "_repr_jpeg_", ".jpg"),
                ("image/svg+xml", "_repr_svg_", ".svg"), ("text/html", "_repr_html_", ".html"),
                ("text/markdown", "_repr_markdown_", ".md"), ("text/latex", "_repr_latex_", ".tex"))
EXT = {mime: ext for mime, _, ext in RICH_METHODS}


def bundle_of(obj):
    """obj's rich forms by MIME type, as IPython's display machinery asks
    for them: _repr_mimebundle_, then each _repr_*_ method."""
    bundle = {}
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
    return bundle


def show_rich(rich, obj):
    """Save obj's richest form as the cell's rich output; whether it had
    one. Matplotlib figures are shown at the cell's end instead."""
    if type(obj).__module__.startswith("matplotlib"):
        return False
    try:
        bundle = bundle_of(obj)
    except Exception:
        return False
    return save_bundle(rich, bundle, cut(repr(obj), 200))


def save_bundle(rich, bundle, text):
    """Save the richest form in a MIME bundle (an image if it has one, else
    HTML, Markdown, SVG or LaTeX); whether there was one to save."""
    for mime in ("image/png", "image/jpeg", "image/svg+xml", "text/html", "text/markdown", "text/latex"):
        if mime not in bundle:
            continue
        data = bundle[mime]
        if isinstance(data, str) and mime.startswith("image/") and mime != "image/svg+xml":
            import binascii
            data = binascii.a2b_base64(data)
        if isinstance(data, str):
            data = data.encode("utf-8", "backslashreplace")
        if not isinstance(data, (bytes, bytearray)):
            continue
        try:
            save_rich(rich, mime, bytes(data), text)
        except OSError:
            return False
        return True
    return False


def save_rich(rich, mime, data, text):
    """Keep one rich output as a new private file in the spool."""
    if mime in ("image/png", "image/jpeg"):
        # An image is what its bytes are: a _repr_png_ can return a JPEG.
        if data[:8] == b"\x89PNG\r\n\x1a\n":
            mime = "image/png"
        elif data[:3] == b"\xff\xd8\xff":
            mime = "image/jpeg"
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
    """A PNG's width and height, from its header; 0, 0 when the header is
    not a PNG's (bytes called PNG can be anything: their size is then
    unknown, not read from garbage as 2550338678x680730779)."""
    with open(path, "rb") as f:
        head = f.read(33)
    if len(head) < 33 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return 0, 0
    import zlib
    if zlib.crc32(head[12:29]) != int.from_bytes(head[29:33], "big"):
        return 0, 0
    width, height = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    if not (0 < width < 2 ** 31 and 0 < height < 2 ** 31):
        return 0, 0
    return width, height
