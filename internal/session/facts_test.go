package session

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/holder"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// otherHolder is a holder of this protocol built elsewhere, played by a
// Python process, keeping a session of runtime "cobol", which this binary
// has no driver for: it greets with a hello carrying the facts given
// (none: a holder of a build from before holders sent them), answers a
// cell with a line of output and the value 42 (the cell "bye" ends the
// runtime with status 3), answers every request, and says when its
// runtime ended (on end, by its hand).
const otherHolder = `import json, os, signal, socket, struct, sys, threading, time
path, leader, start, cookie, facts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(4)
print("ready", flush=True)
hello = {"proto": PROTO, "polyrepl": "0.9.0", "holder_pid": os.getpid(), "name": "other",
    "generation": "0123456789ab", "runtime": "cobol", "cookie": cookie,
    "leader": {"pid": leader, "start": start}, "created": "2024-01-02T03:04:05Z",
    "spawn": {"runtime": "cobol", "cwd": "/", "env": []}, "version": "1.0", "exe": "/usr/bin/cobol",
    "cells": 0, "last_active": "2024-01-02T03:04:05Z"}
if facts:
    hello["facts"] = json.loads(facts)
lock = threading.Lock()
def send(c, t, b):
    with lock:
        c.sendall(t + struct.pack(">I", len(b)) + b)
def exited(c, code=-1, sig=9):
    send(c, b"X", json.dumps({"code": code, "signal": sig, "at": "2024-01-02T03:04:06Z"}).encode())
    os.remove(path)
    os._exit(0)
def watch(c):
    while True:
        try:
            os.kill(leader, 0)
        except ProcessLookupError:
            exited(c)
        time.sleep(0.05)
def recv(c, n):
    b = b""
    while len(b) < n:
        k = c.recv(n - len(b))
        if not k:
            os._exit(0)
        b += k
    return b
c, _ = s.accept()
send(c, b"H", json.dumps(hello).encode())
threading.Thread(target=watch, args=(c,), daemon=True).start()
while True:
    t = recv(c, 1)
    b = recv(c, struct.unpack(">I", recv(c, 4))[0])
    if t == b"R":
        meta, code = b.split(b"\n", 1)
        meta = json.loads(meta)
        if code == b"bye":
            os.kill(leader, signal.SIGKILL)
            exited(c, 3, 0)
        send(c, b"O", b"hi\n")
        send(c, b"C", json.dumps({"cell": meta["cell"], "status": "done", "value": "42", "names": []}).encode())
    elif t == b"q":
        call = json.loads(b)
        if call["op"] == "end":
            os.kill(leader, signal.SIGKILL)
            exited(c)
        if call.get("id"):
            send(c, b"r", json.dumps({"id": call["id"]}).encode())
`

// A session whose holder runs a runtime this binary has no driver for
// is taken up and works, shown with the facts its holder told, or, from a
// holder of a build that told none, with neutral ones (the value alone, a
// .txt transcript); only a restart, which needs the driver here, says
// what is missing.
func TestAHolderOfAnotherBuild(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3 to play a holder of another build")
	}
	for _, tc := range []struct {
		name, facts, display, ext, exit string
	}{
		{"no facts", "", "42", ".txt", "its own exit"},
		{"facts", `{"name": "cobol", "family": "worker", "ext": ".cob", "value_format": "COBOL[{n}]: {v}", "exit": "STOP RUN"}`, "COBOL[1]: 42", ".cob", "STOP RUN"},
		{"hostile facts", `{"name": "cobol", "family": "worker", "ext": "/../../escape", "value_format": "` + strings.Repeat("v", 5000) + `{v}", "exit": "` + strings.Repeat("x", 5000) + `"}`,
			"", ".txt", "xx… [exit cut: 5,000 characters in all; showing the first 200]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestManager(t)
			stop := plantOtherHolder(t, m, tc.facts)
			defer stop()
			// No live note names it: it is taken up once it answers.
			m.AdoptAll(10 * time.Second)
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if i, err := m.Describe("other", api.Client{}); err == nil && i.State == Idle {
					break
				}
			}
			info := describe(t, m, "other")
			if info.State != Idle || info.Runtime != "cobol" || !strings.HasSuffix(info.Transcript, "/other"+tc.ext) {
				t.Errorf("the session as listed: state %s, runtime %s, transcript %s; want idle, cobol, other%s", info.State, info.Runtime, info.Transcript, tc.ext)
			}
			r, err := m.Exec(context.Background(), "other", api.ExecRequest{Code: "1", Client: alice}, nil)
			if err != nil {
				t.Fatalf("exec on it: %v", err)
			}
			switch {
			case r.Value != "42" || r.Output != "hi\n":
				t.Errorf("exec: value %q, output %q; want 42 and hi", r.Value, r.Output)
			case tc.display != "" && r.Display != tc.display:
				t.Errorf("exec's display %q, want %q", r.Display, tc.display)
			case tc.display == "" && (len(r.Display) > 400 || !strings.Contains(r.Display, "value format cut")):
				t.Errorf("exec's display from a 5,000-character value format: %d bytes, %.80q…; want it cut, the cut said", len(r.Display), r.Display)
			}
			if _, err := m.Exec(context.Background(), "other", api.ExecRequest{Code: "bye", Client: alice}, nil); err != nil {
				t.Fatalf("the cell that ends the runtime: %v", err)
			}
			if d := describe(t, m, "other").Death; d == nil || !strings.Contains(d.Cause, tc.exit) || len(d.Cause) > 400 {
				t.Errorf("the runtime's end: %+v; want it to say %q", d, tc.exit)
			}
			_, err = m.Restart(context.Background(), "other", api.ControlRequest{Client: alice})
			if e := wantCode(t, err, api.CodeBadRequest); e != nil && !strings.Contains(e.ErrorReply.Error, `unknown runtime "cobol"`) {
				t.Errorf("restart: %v; want it to say the runtime is unknown", e)
			}
		})
	}
}

// plantOtherHolder starts otherHolder in m's holders' directory, its
// runtime a sleep, and returns what ends both.
func plantOtherHolder(t *testing.T, m *Manager, facts string) func() {
	t.Helper()
	cookie := CookieVar + "=other-test-" + time.Now().Format("150405.000000")
	runtime := exec.Command("sleep", "1000")
	runtime.Env = append(os.Environ(), cookie)
	runtime.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := runtime.Start(); err != nil {
		t.Fatal(err)
	}
	go runtime.Wait()
	start, _ := proc.StartTime(runtime.Process.Pid)
	if err := os.MkdirAll(m.holdersDir, 0o700); err != nil {
		t.Fatal(err)
	}
	h := exec.Command("/usr/bin/python3", "-c", strings.Replace(otherHolder, "PROTO", strconv.Itoa(holder.Proto), 1), filepath.Join(m.holdersDir, "0123456789ab.sock"),
		strconv.Itoa(runtime.Process.Pid), strconv.FormatUint(start, 10), cookie, facts)
	h.Stderr = os.Stderr
	out, _ := h.StdoutPipe()
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := make(chan struct{})
	go func() { h.Wait(); close(reaped) }()
	buf := make([]byte, 16)
	out.Read(buf) // ready
	return func() {
		h.Process.Kill()
		<-reaped
		proc.Tree{Leader: proc.Proc{PID: runtime.Process.Pid, Start: start}, Cookie: cookie}.Kill(time.Second)
	}
}
