"""Drives Jupyter kernels for polyrepl's benchmark harness.

It reads one JSON request per line on stdin and answers one JSON line on
stdout, so the Go harness can time each round trip:

  {"op": "ping"}                      -> {"ok": true}        (the pipe alone)
  {"op": "start"}                     -> {"ok": true, "id": K, "pid": P, "secs": S}
  {"op": "exec", "id": K, "code": C}  -> {"ok": true, "out": N, "status": "ok"}
  {"op": "stop", "id": K}             -> {"ok": true}
  {"op": "quit"}                      -> {"ok": true}, then every kernel is shut down

An exec sends the cell with a BlockingKernelClient, collects iopub until
the kernel says idle for it, takes the execute_reply, and answers with the
number of characters of output (stream text and text/plain results).
"""

import json
import os
import sys
import time

# Keep the protocol on a private copy of stdout; anything else printed by
# the libraries goes to stderr.
proto = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)

from jupyter_client import KernelManager  # noqa: E402

kernels = {}
next_id = 0
TIMEOUT = 120


def start():
    global next_id
    t0 = time.perf_counter()
    km = KernelManager(kernel_name="python3")
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=TIMEOUT)
    secs = time.perf_counter() - t0
    kid = next_id
    next_id += 1
    kernels[kid] = (km, kc)
    pid = 0
    prov = getattr(km, "provisioner", None)
    proc = getattr(prov, "process", None) if prov is not None else None
    if proc is not None:
        pid = proc.pid
    elif getattr(km, "kernel", None) is not None:
        pid = km.kernel.pid
    return {"id": kid, "pid": pid, "secs": secs}


def execute(kid, code):
    km, kc = kernels[kid]
    msg_id = kc.execute(code)
    out = 0
    while True:
        msg = kc.get_iopub_msg(timeout=TIMEOUT)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            out += len(content["text"])
        elif kind in ("execute_result", "display_data"):
            out += len(content["data"].get("text/plain", ""))
            out += len(content["data"].get("image/png", ""))
        elif kind == "status" and content["execution_state"] == "idle":
            break
    while True:
        reply = kc.get_shell_msg(timeout=TIMEOUT)
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    return {"out": out, "status": reply["content"]["status"]}


def stop(kid):
    km, kc = kernels.pop(kid)
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def main():
    for line in sys.stdin:
        req = json.loads(line)
        op = req["op"]
        try:
            if op == "ping":
                rep = {}
            elif op == "start":
                rep = start()
            elif op == "exec":
                rep = execute(req["id"], req["code"])
            elif op == "stop":
                stop(req["id"])
                rep = {}
            elif op == "quit":
                break
            else:
                raise ValueError("unknown op %r" % op)
            rep["ok"] = True
        except Exception as e:  # the harness reports it and stops the row
            rep = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
        proto.write(json.dumps(rep) + "\n")
    for kid in list(kernels):
        try:
            stop(kid)
        except Exception as e:
            print("stopping kernel %d: %s" % (kid, e), file=sys.stderr)
    proto.write(json.dumps({"ok": True}) + "\n")


if __name__ == "__main__":
    main()
