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
	"github.com/polyrepl/polyrepl/internal/proc"
	"github.com/polyrepl/polyrepl/internal/testenv"
)

// farHolder is a holder of another protocol, played by a Python process:
// it listens on a socket in the holders' directory and greets whoever
// connects with a hello of protocol 99, keeping a session whose runtime
// is a sleep.
const farHolder = `import json, os, socket, struct, sys
path, leader, start, cookie = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(4)
print("ready", flush=True)
hello = json.dumps({"proto": 99, "polyrepl": "7.0.0", "holder_pid": os.getpid(), "name": "far",
    "generation": "0123456789ab", "runtime": "python", "cookie": cookie,
    "leader": {"pid": leader, "start": start}, "spawn": "a shape no daemon of today reads"}).encode()
while True:
    c, _ = s.accept()
    c.sendall(b"H" + struct.pack(">I", len(hello)) + hello)
`

// A session kept by a holder of another protocol is listed, refused with
// what to do, never ended silently; kill ends it, holder and tree.
func TestAHolderOfAnotherProtocol(t *testing.T) {
	python := testenv.NeedPython(t) // plays a holder of another protocol
	m := newTestManager(t)
	cookie := CookieVar + "=far-test-" + time.Now().Format("150405.000000")
	runtime := exec.Command("sleep", "1000")
	runtime.Env = append(os.Environ(), cookie)
	runtime.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := runtime.Start(); err != nil {
		t.Fatal(err)
	}
	go runtime.Wait()
	start, _ := proc.StartTime(runtime.Process.Pid)
	defer proc.Tree{Leader: proc.Proc{PID: runtime.Process.Pid, Start: start}, Cookie: cookie}.Kill(time.Second)

	if err := os.MkdirAll(m.holdersDir, 0o700); err != nil {
		t.Fatal(err)
	}
	holderProc := exec.Command(python, "-c", farHolder, filepath.Join(m.holdersDir, "0123456789ab.sock"),
		strconv.Itoa(runtime.Process.Pid), strconv.FormatUint(start, 10), cookie)
	out, _ := holderProc.StdoutPipe()
	if err := holderProc.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := make(chan struct{})
	go func() { holderProc.Wait(); close(reaped) }()
	defer holderProc.Process.Kill()
	buf := make([]byte, 16)
	out.Read(buf) // ready

	if names := m.AdoptAll(10 * time.Second); len(names) != 0 {
		t.Errorf("took up %v from a holder of protocol 99", names)
	}
	// No live note names it: it is not waited for, and is listed once
	// it has answered.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := m.Describe("far", api.Client{}); err == nil {
			break
		}
	}
	info := describe(t, m, "far")
	if info.State != api.StateUnreachable || !strings.Contains(info.Problem, "polyrepl 7.0.0") || !strings.Contains(info.Problem, "protocol 99") || info.PID != runtime.Process.Pid {
		t.Errorf("the session as listed: %+v", info)
	}
	_, err := m.Exec(context.Background(), "far", req("1"), nil)
	if e := wantCode(t, err, api.CodeForeign); e != nil && (len(e.Next) == 0 || e.Next[0].Do != api.DoKill) {
		t.Errorf("exec on it: %+v, want a refusal naming kill", e)
	}
	select {
	case <-reaped:
		t.Fatalf("the holder of another protocol was ended unasked")
	default:
	}
	if _, err := m.Kill("far", api.ControlRequest{Client: alice}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reaped:
	case <-time.After(5 * time.Second):
		t.Errorf("kill left the holder running")
	}
	if proc.Alive(proc.Proc{PID: runtime.Process.Pid, Start: start}) {
		t.Errorf("kill left the runtime running")
	}
	_, err = m.Wait(context.Background(), "far", api.WaitRequest{Client: bob}, nil)
	if d := wantCode(t, err, api.CodeDead).Death; d == nil || d.By != api.ByKill {
		t.Errorf("after kill: %+v", d)
	}
}
