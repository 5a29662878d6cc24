# polyrepl's look inside ipykernel: the module _polyrepl_look, installed
# in sys.modules by one user_expression (no name enters the user's
# namespace), then called by user_expressions on a silent execute_request
# (a look) and on each cell's own request (the look its result carries).
# It is this part followed by the Python worker's look (vars.py,
# varpath.py); this part gives them what the worker's protocol.py
# would: os, sys, serve, high_fd, _dup2, _libc.
#
# A look's answer travels as the text/plain IPython makes of the value
# of a user_expression: an Answer, whose repr is the JSON on one line,
# ASCII only (so IPython's pretty printer, which splits a repr at line
# breaks, has none to split at).

import os
import sys

_dup2 = os.dup2
_libc = [None]  # C's stdio is not flushed: the kernel's output is its streams'


def serve():
    """vars.py takes the type of a Python function from this one."""


def high_fd(fd):
    """A close-on-exec duplicate of fd, numbered high (protocol.py's)."""
    import fcntl
    err = None
    for low in (900, 100, 10):
        try:
            return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, low)
        except OSError as e:
            err = e
    raise err


class Answer:
    """A look's answer: its repr is its JSON."""
    __slots__ = ("json",)

    def __init__(self, obj):
        import json
        self.json = json.dumps(obj, ensure_ascii=True, separators=(",", ":"))

    def __repr__(self):
        return self.json


def _shell():
    """The kernel's shell, found without the user's get_ipython name."""
    return sys.modules["IPython"].core.getipython.get_ipython()


def _hider(shell):
    """What hides IPython's own names (In, Out, get_ipython, exit…) unless
    the user rebound them, as %who does (the IPython worker's hider)."""
    ns, hidden, missing = shell.user_ns, shell.user_ns_hidden, object()
    return lambda name: ns.get(name, missing) is hidden.get(name, missing)


def look(query):
    """A look asked for between cells: query is the worker protocol's
    JSON ({"path", "all", "limit", "preview", "timeout"}); the answer is
    the "vars" event's fields."""
    try:
        shell = _shell()
        out = look_at(shell.user_ns, _hider(shell), loads(query))
    except LookupError as e:
        out = {"error": cut_error(str(e.args[0] if e.args else e))}
    except BaseException as e:
        out = {"error": "the look failed: " + said(e), "failed": True}
    return Answer(out)


def cell():
    """The look a cell's result carries: the session's own names from
    their structure only, and the names sessions lists, from the same
    source."""
    try:
        shell = _shell()
        names, lines, total = cell_look(shell.user_ns, _hider(shell))
        out = {"names": names, "vars": lines, "total": total}
    except BaseException as e:
        out = {"error": "the look failed: " + said(e), "failed": True}
    return Answer(out)


def cut_error(text):
    return text if len(text) <= 2 * VAR_NOTE_LIMIT else text[:2 * VAR_NOTE_LIMIT - 1] + "\u2026"

