
# ---- fork: a copy of the session, taken between cells ----------------------
#
# "fork NBYTES NONCE" and {"dir": DIR} ask the worker for a copy of itself:
# os.fork(), the child's channels re-made from the named pipes DIR holds
# (cmd, out, ev, and con for a console), which the session that adopts the
# copy made and opened first. The parent answers {"op": "fork", "nonce",
# "pid", "threads", "shared", "children"} (what the copy did not get: the
# parent's other threads; what it shares: open sockets and files; what it
# does not carry: the parent's child processes) and goes on; the child
# says hello on its own channels, as a worker that just started.

FORK_LIST = 8      # names given of each kind; the rest counted
FORK_WORDS = 80    # characters of each name


def fork_command(body, nonce, send, channels, saved, out_fd):
    """A "fork" command: in the copy, its own end marker (which the
    parent never sees); in the parent, None once it answered."""
    nonce = nonce.decode("ascii", "replace")
    try:
        into = loads(body.decode("utf-8", "replace"))
        dirpath, marker, cookie = into["dir"], into["sentinel"].encode(), into.get("cookie") or ""
    except (ValueError, KeyError, TypeError, AttributeError):
        send({"op": "fork", "nonce": nonce, "error": "a fork needs a directory and an end marker"})
        return None
    if not fork_worker(dirpath, nonce, send, channels, saved, out_fd):
        return None
    key, eq, value = cookie.partition("=")
    if key and eq:
        os.environ[key] = value  # what the copy starts is its session's
    return marker


def fork_facts(own):
    """What a fork taken now leaves behind or shares, as data: the threads
    besides this one (a BLAS pool, a data loader: not copied), the open
    sockets, pipes and files (shared with the copy), the child processes
    (not the copy's). own are the worker's descriptors, not counted."""
    me = os.getpid()
    names = {}
    try:
        import threading
        main = threading.main_thread()
        for t in threading.enumerate():
            if t is not main and getattr(t, "native_id", None):
                names[t.native_id] = t.name
    except Exception:
        pass

    def comm(path):
        try:
            with open(path) as f:
                return f.read().strip()
        except OSError:
            return "?"

    threads = []
    try:
        for tid in sorted(os.listdir("/proc/self/task"), key=int):
            if int(tid) != me:
                threads.append(names.get(int(tid)) or comm("/proc/self/task/%s/comm" % tid))
    except OSError:
        pass
    shared = []
    try:
        for fd in sorted(os.listdir("/proc/self/fd"), key=int):
            if int(fd) in own:
                continue
            try:
                target = os.readlink("/proc/self/fd/" + fd)
            except OSError:
                continue  # the listing's own descriptor, closed since
            if target.startswith("socket:"):
                shared.append("socket (fd %s)" % fd)
            elif target.startswith("pipe:"):
                shared.append("pipe (fd %s)" % fd)
            elif target.startswith("/") and not target.startswith(("/proc/", "/dev/null", "/dev/urandom")):
                shared.append(target)
    except OSError:
        pass
    children = []
    try:
        for tid in os.listdir("/proc/self/task"):
            with open("/proc/self/task/%s/children" % tid) as f:
                for pid in f.read().split():
                    children.append("%s (pid %s)" % (comm("/proc/%s/comm" % pid), pid))
    except OSError:
        pass
    facts = {}
    for key, items in (("threads", threads), ("shared", shared), ("children", children)):
        if items:
            facts[key] = [cut(s, FORK_WORDS) for s in items[:FORK_LIST]]
            facts[key + "_total"] = len(items)
    return facts


def fork_worker(dirpath, nonce, send, channels, saved, out_fd):
    """Fork; True in the child, whose channels are then DIR's pipes. The
    parent sends the "fork" event; a child that cannot open DIR's pipes
    ends at once (the session adopting it is told by its pipes)."""
    import warnings
    own = set(channels) | {0, 1, 2, out_fd} | {copy for _, copy, _ in saved}
    facts = fork_facts(own)
    flush_all(b"", out_fd)
    try:
        with warnings.catch_warnings():
            # Python 3.12 warns of forking with threads on stderr, which
            # is the session's output; the event says it instead.
            warnings.simplefilter("ignore")
            pid = os.fork()
    except OSError as e:
        send({"op": "fork", "nonce": nonce, "error": "fork failed: %s" % (e.strerror or e)})
        return False
    if pid:
        event = {"op": "fork", "nonce": nonce, "pid": pid}
        event.update(facts)
        send(event)
        return False
    try:
        remake_channels(dirpath, channels, saved)
    except BaseException:
        os._exit(70)
    return True


def remake_channels(dirpath, channels, saved):
    """Point the child's channels at DIR's pipes, keeping every descriptor
    number the worker knows: commands, events, fds 1 and 2 and their
    copies, fd 0 if a console. Its own process group first, so that an
    interrupt of either session reaches only its own."""
    command_fd, event_fd = channels
    os.setpgid(0, 0)

    def onto(name, flags, targets):
        fd = os.open(os.path.join(dirpath, name), flags | os.O_CLOEXEC)
        for target, inheritable in targets:
            os.dup2(fd, target, inheritable=inheritable)
        os.close(fd)

    # The adopting session holds a writer of cmd and con, and waits to
    # read out and ev: opened in this order, no open waits for long.
    onto("cmd", os.O_RDONLY, [(command_fd, False)])
    if os.path.exists(os.path.join(dirpath, "con")):
        onto("con", os.O_RDONLY, [(0, True)])
    outs = [(1, True), (2, True)] + [(copy, False) for _, copy, _ in saved]
    onto("out", os.O_WRONLY, outs)
    saved[:] = [(fd, copy, identity(fd)) for fd, copy, _ in saved]
    onto("ev", os.O_WRONLY, [(event_fd, False)])
