# polyrepl's IPython worker: one session's IPython shell, without a terminal.
# It follows the protocol part above it in the same file (the python
# runtime's protocol.py): serve() runs the channels.
#
# Each cell runs through IPython's InteractiveShell.run_cell, so magics,
# !shell commands, Out[n] and _ work as in IPython. The shell's displayhook
# and traceback display are redirected: the final value and the traceback
# travel in the "done" event instead of being printed.


def _main():
    shell_box = []
    state = {"value": None, "traceback": None, "rich": []}

    # SIGINT (and SIGUSR2, which the daemon sends when SIGINT did not stop
    # the cell) raise KeyboardInterrupt only while a cell runs: Python's own
    # C handler then, so no worker frame shows in the traceback; between
    # cells the signals are ignored.
    def between_cells():
        import _signal
        _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
        _signal.signal(_signal.SIGUSR2, _signal.SIG_IGN)

    def in_cell():
        import _signal
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)
        _signal.signal(_signal.SIGUSR2, _signal.default_int_handler)

    def start():
        # Figures are drawn headless and shown at each cell's end, as the
        # inline backend does; a backend the user chose stays.
        os.environ.setdefault("MPLBACKEND", "agg")
        try:
            import IPython
            from IPython.core.interactiveshell import InteractiveShell
            from traitlets.config import Config
        except ImportError as e:
            sys.stderr.write("%s has no IPython (%s): install it there (%s -m pip install ipython), "
                             "or name a Python that has it with --python, or set $POLYREPL_PYTHON\n"
                             % (sys.executable, e, sys.executable))
            sys.exit(3)
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
        install_hooks(shell, state)
        # Once IPython has caught the cell's exception, another interrupt
        # (the daemon tries again 250 ms later) would land in the making of
        # the traceback, and IPython would print "KeyboardInterrupt" into
        # the output: from there on the cell is over, so signals wait.
        showtraceback = shell.showtraceback

        def quiet_showtraceback(*args, **kwargs):
            between_cells()
            return showtraceback(*args, **kwargs)

        shell.showtraceback = quiet_showtraceback
        shell_box.append(shell)
        between_cells()
        return {"version": IPython.__version__,
                "note": "IPython %s on Python %s" % (IPython.__version__, sys.version.split()[0])}

    serve(start, lambda cell, code, value_limit: run_cell(
        shell_box[0], state, cell, code, value_limit, in_cell, between_cells),
        lambda word: complete(shell_box[0], word),
        lambda query: look_at(shell_box[0].user_ns, hider(shell_box[0]), query))


# A word IPython may complete without running any of the session's code:
# a name or magic, dotted names (their objects are looked up, as Python's
# Tab does), or a dotted name's key being typed (df["co).
_completable = r"%{0,2}[^\W\d]\w*(?:\.\w*)*|[^\W\d]\w*(?:\.\w+)*\[[\"'][^\"'\\\]]*"


def complete(shell, word):
    """What word may become, by IPython's own completer on the session's
    namespace (names, keywords, magics, attributes after a dot, a dict's or
    DataFrame's keys), as IPython's Tab does, without jedi (slow to load,
    and it adds nothing the namespace lacks). A word with a call, an
    index or any other expression is not completed (IPython would
    evaluate it). Nothing it prints reaches the session's output."""
    import io
    import re
    if not re.fullmatch(_completable, word):
        return []
    completer = shell.Completer
    completer.use_jedi = False
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = io.StringIO()
    try:
        text, matches = completer.complete(text=word, line_buffer=word, cursor_pos=len(word))
    finally:
        sys.stdout, sys.stderr = saved
    head = word[:len(word) - len(text)] if text and word.endswith(text) else ""
    return sorted(set(head + m for m in matches if isinstance(m, str)))


def install_hooks(shell, state):
    """Keep the value and the traceback out of the output: the displayhook
    still computes IPython's text/plain display and updates Out and _, but
    hands the text to the worker; tracebacks are kept, not printed."""
    hook = shell.displayhook
    # Every formatter on, as in a notebook, so a value's rich forms (a PIL
    # image, a DataFrame's HTML) come through as its rich output.
    shell.display_formatter.active_types = list(shell.display_formatter.formatters)

    def write_format_data(format_dict, md_dict=None):
        state["value"] = format_dict.get("text/plain")
        if len(format_dict) > 1:
            save_bundle(state["rich"], format_dict, cut(format_dict.get("text/plain", ""), 200))

    # display(): each object's richest form saved, as a notebook shows it;
    # one with only text prints it.
    def publish(data, metadata=None, *args, **kwargs):
        if not save_bundle(state["rich"], data, cut(data.get("text/plain", ""), 200)):
            text = data.get("text/plain")
            if text is not None:
                print(text)

    shell.display_pub.publish = publish

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
    if isinstance(error, KeyboardInterrupt):
        result["status"] = "interrupted"
    elif isinstance(error, SystemExit) and caught_exit(result, error.code):
        error = None
    elif error is not None:
        result["status"] = "error"
    if error is not None:
        result["error"] = error_of(error, state["traceback"])
    text = state["value"]
    if text is not None and error is None:
        put_value(result, text, value_limit)
    if state["rich"]:
        result["rich"], state["rich"] = state["rich"], []
    show_figures(result)
    result["names"], result["vars"], result["vars_total"] = cell_look(shell.user_ns, hider(shell))
    return result


def hider(shell):
    """What hides IPython's own names (In, Out, get_ipython, exit,
    quit…), as %who does, unless the user rebound them; its _names (_,
    __, _i3, _oh, _dh) start with _ and are hidden as every _name is."""
    ns, hidden, missing = shell.user_ns, shell.user_ns_hidden, object()
    return lambda name: ns.get(name, missing) is hidden.get(name, missing)


if __name__ == "__main__":
    _main()
