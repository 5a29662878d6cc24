package e2e

// Issue 36's enforcement: a sandboxed session's runtime, of each family,
// tries to leave its sandbox from inside a cell, through the real daemon
// and holder. The sessions are made with raw HTTP, the policy in the
// exec request's spawn.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/sandbox"
)

const sandboxSection = "12 Sandbox: what the kernel enforces"

// sreport reports a row of the sandbox section, and logs it.
func sreport(t *testing.T, scenario, format string, a ...any) {
	t.Helper()
	t.Logf("report: %s: %s", scenario, fmt.Sprintf(format, a...))
	report(t, sandboxSection, scenario, format, a...)
}

// needLandlock skips a test on a kernel whose Landlock lacks scoping.
func needLandlock(t *testing.T) {
	t.Helper()
	if abi := sandbox.KernelABI(); abi < 6 {
		t.Skipf("this kernel has Landlock ABI %d: the sandbox tests need 6 (signal scoping)", abi)
	}
}

// sandboxWorld plants a key in the env's home and listens on loopback,
// for the cells to try.
type sandboxWorld struct {
	e        *env
	key      string
	listener string
	cwd      string // a new session's; the env's home unless set
}

func newSandboxWorld(t *testing.T) *sandboxWorld {
	e := newEnv(t)
	key := filepath.Join(e.home, ".ssh", "id_test")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte("PLANTED-KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return &sandboxWorld{e: e, key: key, listener: ln.Addr().String()}
}

// exec runs code in session name of runtime, under sb (nil: none),
// through the API; it returns the cell's output, or the refusal.
func (w *sandboxWorld) exec(t *testing.T, name, runtime string, sb *api.Sandbox, code string) (api.CellResult, *api.ErrorReply) {
	t.Helper()
	timeout := 90.0
	req := api.ExecRequest{Code: code, Timeout: &timeout, Client: api.Client{Who: "t", How: "api"},
		Spawn: api.Spawn{Runtime: runtime, Cwd: cmp.Or(w.cwd, w.e.home), Env: w.e.vars, Sandbox: sb}}
	body, _ := json.Marshal(req)
	resp, err := w.e.api().Post("http://polyrepl/v1/sessions/"+name+"/exec", "application/json", strings.NewReader(string(body)))
	if err != nil {
		// The first call starts the daemon.
		w.e.must(0, "start")
		resp, err = w.e.api().Post("http://polyrepl/v1/sessions/"+name+"/exec", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		var er api.ErrorReply
		json.Unmarshal(b, &er)
		return api.CellResult{}, &er
	}
	var r api.CellResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("reply %s: %v", b, err)
	}
	return r, nil
}

// results reads the "name=RESULT" lines a probe cell prints.
func results(out string) map[string]string {
	got := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok && !strings.Contains(k, " ") {
			got[k] = v
		}
	}
	return got
}

// pythonProbe tries every escape from a Python cell (worker, Jupyter).
const pythonProbe = `
import os, socket, subprocess
def tr(name, f):
    try:
        f()
        print(name + "=ok")
    except PermissionError as e:
        print(name + "=denied")
    except Exception as e:
        print(name + "=error " + type(e).__name__ + " " + str(e).replace("\n", " "))
H = os.environ["HOME"]
def w(p):
    with open(p, "w") as f: f.write("x")
tr("write_cwd", lambda: w("cwd.txt"))
tr("write_outside", lambda: w(os.path.join(H, "outside.txt")))
tr("write_tmp", lambda: w(os.path.join(os.environ["TMPDIR"], "t.txt")))
def chd():
    os.chdir(H); w("rel.txt")
tr("write_after_chdir", chd)
def sub():
    r = subprocess.run(["/bin/sh", "-c", "echo x > " + os.path.join(H, "sub.txt")], capture_output=True)
    if r.returncode != 0 and b"ermission denied" in r.stderr: raise PermissionError()
tr("write_subprocess", sub)
tr("read_key", lambda: open(os.path.join(H, ".ssh", "id_test")).read())
tr("connect", lambda: socket.create_connection(("127.0.0.1", PORT), timeout=5).close())
tr("signal_holder", lambda: os.kill(os.getppid(), 0))
tr("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", 9)))
tr("ptrace_other", lambda: open("/proc/%d/mem" % OTHER, "rb").read(1))
def sti():
    import fcntl, termios
    m, sl = os.openpty()
    try: fcntl.ioctl(sl, termios.TIOCSTI, b"x")
    finally: os.close(m); os.close(sl)
tr("tiocsti", sti)
print("fds=" + ",".join(sorted(os.listdir("/proc/self/fd"), key=int)))
print("tmpdir=" + os.environ.get("TMPDIR", ""))
`

// shProbe tries them from a shell (bash's worker, sh on a PTY).
const shProbe = `
H="$HOME"
if (echo x > cwd.txt) 2>/dev/null; then echo write_cwd=ok; else echo write_cwd=denied; fi
if (echo x > "$H/outside.txt") 2>/dev/null; then echo write_outside=ok; else echo write_outside=denied; fi
if (echo x > "$TMPDIR/t.txt") 2>/dev/null; then echo write_tmp=ok; else echo write_tmp=denied; fi
if (cd "$H" && echo x > rel.txt) 2>/dev/null; then echo write_after_chdir=ok; else echo write_after_chdir=denied; fi
if cat "$H/.ssh/id_test" >/dev/null 2>&1; then echo read_key=ok; else echo read_key=denied; fi
if kill -0 $PPID 2>/dev/null; then echo signal_holder=ok; else echo signal_holder=denied; fi
if head -c1 /proc/OTHER/mem >/dev/null 2>&1; then echo ptrace_other=ok; else echo ptrace_other=denied; fi
echo tmpdir=$TMPDIR
`

func TestSandboxEnforcedInEveryFamily(t *testing.T) {
	needLandlock(t)
	needPython(t)
	t.Parallel()
	w := newSandboxWorld(t)
	e := w.e
	// Another session, unsandboxed: its runtime is the one traced.
	other, er := w.exec(t, "other", "python", nil, "import os; print(os.getpid())")
	if er != nil {
		t.Fatalf("the other session: %+v", er)
	}
	otherPID := strings.TrimSpace(other.Output)
	_, port, _ := net.SplitHostPort(w.listener)
	denied := []string{"write_outside", "write_after_chdir", "read_key", "signal_holder", "ptrace_other"}
	// workspace-write's sessions work in a directory of the home: the
	// home itself, and its planted key, stay out of their reach.
	work := filepath.Join(e.home, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}

	families := []struct {
		name, runtime, probe string
		also                 []string // more that must be denied
	}{
		{"py", "python", pythonProbe, []string{"write_subprocess", "connect", "udp", "tiocsti"}},
		{"bash", "bash", shProbe, nil},
		{"shpty", "sh", shProbe, nil},
		{"kernel", "jupyter:python3", pythonProbe, []string{"write_subprocess", "connect", "udp", "tiocsti"}},
	}
	for _, policy := range []string{api.SandboxReadOnly, api.SandboxWorkspaceWrite} {
		for _, f := range families {
			t.Run(policy+"/"+f.runtime, func(t *testing.T) {
				if f.runtime == "jupyter:python3" {
					needRuntime(t, e, f.runtime, "python3-ipykernel")
				}
				cwdWrite := "denied"
				w.cwd = ""
				if policy == api.SandboxWorkspaceWrite {
					w.cwd, cwdWrite = work, "ok"
				}
				code := strings.NewReplacer("PORT", port, "OTHER", otherPID).Replace(f.probe)
				r, er := w.exec(t, policy[:2]+f.name, f.runtime, &api.Sandbox{Policy: policy}, code)
				if er != nil {
					t.Fatalf("a %s %s session was refused: %s (%s)", policy, f.runtime, er.Error, er.Hint)
				}
				got := results(r.Output)
				for _, k := range append(append([]string(nil), denied...), f.also...) {
					if got[k] != "denied" {
						t.Errorf("%s %s: %s=%q, want denied\n%s", policy, f.runtime, k, got[k], r.Output)
					}
				}
				if got["write_cwd"] != cwdWrite {
					t.Errorf("%s %s: writing in its cwd: %q, want %s\n%s", policy, f.runtime, got["write_cwd"], cwdWrite, r.Output)
				}
				if got["write_tmp"] != "ok" || !strings.HasPrefix(got["tmpdir"], sandbox.TempParent(e.stateDir())) {
					t.Errorf("%s: writing in its private TMPDIR %q: %s\n%s", f.runtime, got["tmpdir"], got["write_tmp"], r.Output)
				}
				if f.runtime == "python" {
					// The worker's own: its standard streams, the listing's
					// directory, and the protocol's pipes it moved high.
					for _, fd := range strings.Split(got["fds"], ",") {
						if !strings.Contains(",0,1,2,3,900,901,902,903,", ","+fd+",") {
							t.Errorf("descriptor %s is open in a cell: %s", fd, got["fds"])
						}
					}
				}
				for _, p := range []string{"outside.txt", "rel.txt", "sub.txt", "cwd.txt"} {
					if _, err := os.Stat(filepath.Join(e.home, p)); err == nil {
						t.Errorf("%s: %s was written outside", f.runtime, p)
						os.Remove(filepath.Join(e.home, p))
					}
				}
				sreport(t, fmt.Sprintf("%s %s session: escapes from a cell", policy, f.runtime), "%s", summary(got, append(append([]string{"write_cwd"}, denied...), f.also...)))
			})
		}
	}
}

// summary is a probe's results in one line for the report.
func summary(got map[string]string, keys []string) string {
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+" "+got[k])
	}
	return strings.Join(parts, ", ")
}

func TestSandboxWorkspaceWriteWritesItsCwdOnly(t *testing.T) {
	needLandlock(t)
	needPython(t)
	t.Parallel()
	w := newSandboxWorld(t)
	ws := &api.Sandbox{Policy: api.SandboxWorkspaceWrite}
	if err := os.Mkdir(filepath.Join(w.e.home, "proj"), 0o700); err != nil {
		t.Fatal(err)
	}
	r, er := w.exec(t, "ws", "python", ws, `
import os
H = os.environ["HOME"]
open(os.path.join(H, "proj", "in-cwd.txt"), "w").write("x")
try:
    open(os.path.join(H, "top.txt"), "w").write("x"); print("top_write=ok")
except PermissionError: print("top_write=denied")
try:
    open(os.path.join(H, ".ssh", "id_test")).read(); print("key=read")
except PermissionError: print("key=denied")
try:
    open(os.path.join(H, ".ssh", "planted"), "w").write("x"); print("ssh_write=ok")
except PermissionError: print("ssh_write=denied")
print("list_home=" + ("ok" if "proj" in os.listdir(H) else "missing"))
try:
    open("/tmp/polyrepl-escape-test", "w").write("x"); print("tmp_write=ok")
except PermissionError: print("tmp_write=denied")
`)
	if er != nil {
		t.Fatalf("refused: %+v", er)
	}
	got := results(r.Output)
	if _, err := os.Stat(filepath.Join(w.e.home, "proj", "in-cwd.txt")); err != nil || r.Error != nil {
		t.Errorf("a workspace-write session did not write its cwd: %v %+v\n%s", err, r.Error, r.Output)
	}
	if got["key"] != "denied" || got["ssh_write"] != "denied" || got["tmp_write"] != "denied" || got["list_home"] != "ok" {
		t.Errorf("workspace at $HOME: %v\n%s", got, r.Output)
	}
	os.Remove("/tmp/polyrepl-escape-test")
	// Landlock only allows: a workspace that holds a hidden place is
	// granted entry by entry, so a new entry at its top is refused.
	sreport(t, "workspace-write session at $HOME", "writes in its cwd's directories; lists $HOME %s; a new file at $HOME's top %s; ~/.ssh read %s, written %s; /tmp written %s",
		got["list_home"], got["top_write"], got["key"], got["ssh_write"], got["tmp_write"])
}

func TestSandboxGatewaySessionRefused(t *testing.T) {
	t.Parallel()
	w := newSandboxWorld(t)
	timeout := 30.0
	req := api.ExecRequest{Code: "1", Timeout: &timeout, Client: api.Client{Who: "t", How: "api"},
		Spawn: api.Spawn{Runtime: "jupyter:python3", Cwd: w.e.home, Env: w.e.vars, Gateway: "http://127.0.0.1:9",
			Sandbox: &api.Sandbox{Policy: api.SandboxReadOnly}}}
	body, _ := json.Marshal(req)
	w.e.must(0, "start")
	resp, err := w.e.api().Post("http://polyrepl/v1/sessions/gw/exec", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// The daemon refuses it first; the holder would too (the gateway's
	// to confine), were a daemon to let one through.
	if resp.StatusCode == 200 || !strings.Contains(string(b), "gateway") {
		t.Errorf("a sandboxed gateway session: %d %s", resp.StatusCode, b)
	}
	var er api.ErrorReply
	json.Unmarshal(b, &er)
	sreport(t, "read-only policy for a gateway session", "refused (%d, field %s): %s", resp.StatusCode, er.Field, er.Error)
}

func TestSandboxPrivateTmpRemoved(t *testing.T) {
	needLandlock(t)
	needPython(t)
	t.Parallel()
	w := newSandboxWorld(t)
	r, er := w.exec(t, "tmp", "python", &api.Sandbox{Policy: api.SandboxReadOnly}, `import os; print(os.environ["TMPDIR"]); print(oct(os.stat(os.environ["TMPDIR"]).st_mode & 0o777))`)
	if er != nil {
		t.Fatalf("refused: %+v", er)
	}
	lines := strings.Fields(r.Output)
	if len(lines) != 2 || lines[1] != "0o700" {
		t.Fatalf("TMPDIR: %q", r.Output)
	}
	w.e.must(0, "kill", "tmp")
	if !waitFor(30*time.Second, func() bool {
		_, err := os.Stat(lines[0])
		return os.IsNotExist(err)
	}) {
		t.Errorf("the private temporary directory %s is left after the session's end", lines[0])
	}
}

// TestSandboxEveryRuntimeStarts starts each runtime here under
// read-only and runs two cells of its conformance row (a value, a
// print): each must work as unsandboxed, whatever it warns of on the way
// (caches it cannot write in $HOME), which the report gives. Only
// read-only: workspace-write allows all it does and more (its cwd), so a
// runtime that starts under one starts under the other, and running both
// doubled the test's 50 s; TestSandboxEnforcedInEveryFamily runs each
// family under both.
func TestSandboxEveryRuntimeStarts(t *testing.T) {
	needLandlock(t)
	t.Parallel()
	for _, row := range conformance {
		t.Run(row.runtime, func(t *testing.T) {
			t.Parallel() // as TestConformance: each its own daemon
			w := newSandboxWorld(t)
			if found, why := runtimeFound(w.e, row.runtime); !found {
				t.Skipf("runtime %s is not available here: %s", row.runtime, why)
			}
			if row.missing != nil {
				if why := row.missing(); why != "" {
					t.Skipf("runtime %s is not available here: %s", row.runtime, why)
				}
			}
			for _, policy := range []string{api.SandboxReadOnly} {
				name := strings.NewReplacer(":", "-", "-", "")
				sess := name.Replace(row.runtime) + "-" + policy[:2]
				sb := &api.Sandbox{Policy: policy}
				r, er := w.exec(t, sess, row.runtime, sb, row.value.code)
				if er != nil {
					t.Errorf("%s under %s was refused: %s", row.runtime, policy, er.Error)
					sreport(t, fmt.Sprintf("%s under %s", row.runtime, policy), "refused: %s", firstLine(er.Error))
					continue
				}
				startOut := strings.TrimSpace(r.Output)
				if r.Value != row.value.value && strings.TrimSpace(r.Output) != strings.TrimSpace(row.value.value) {
					t.Errorf("%s under %s: %s gave value %q output %q, want %q", row.runtime, policy, row.value.code, r.Value, r.Output, row.value.value)
				}
				p, er := w.exec(t, sess, row.runtime, sb, row.print.code)
				if er != nil || !strings.Contains(p.Output, strings.TrimSpace(row.print.output)) {
					t.Errorf("%s under %s: %s printed %q (%+v)", row.runtime, policy, row.print.code, p.Output, er)
				}
				said := "nothing else"
				if startOut != "" && startOut != strings.TrimSpace(row.value.value) {
					said = fmt.Sprintf("first it printed %q", clip(startOut))
				}
				sreport(t, fmt.Sprintf("%s under %s", row.runtime, policy), "starts and runs cells; %s", said)
				w.e.must(0, "kill", sess)
			}
		})
	}
}

// TestSandboxMatplotlib: matplotlib, which keeps its cache in $HOME,
// still draws in a read-only session; what it warns is reported.
func TestSandboxMatplotlib(t *testing.T) {
	needLandlock(t)
	needPython(t)
	t.Parallel()
	w := newSandboxWorld(t)
	r, er := w.exec(t, "mpl", "python", &api.Sandbox{Policy: api.SandboxReadOnly}, `
import os, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.plot([1, 2, 3])
plt.savefig(os.path.join(os.environ["TMPDIR"], "f.png"))
print("saved")
`)
	if er != nil {
		t.Fatalf("refused: %+v", er)
	}
	if r.Error != nil && r.Error.Type == "ModuleNotFoundError" {
		t.Skip("no matplotlib for this Python")
	}
	if !strings.Contains(r.Output, "saved") {
		t.Fatalf("matplotlib under read-only: %q %+v", r.Output, r.Error)
	}
	said := strings.TrimSpace(strings.Replace(r.Output, "saved", "", 1))
	if said == "" {
		said = "no warning"
	}
	// A figure shown comes back as a rich output, through the session's
	// own driver directory.
	fig, er := w.exec(t, "mpl", "python", &api.Sandbox{Policy: api.SandboxReadOnly}, "import matplotlib.pyplot as plt\nplt.plot([1, 4, 9])\nplt.show()")
	if er != nil || len(fig.Rich) != 1 || fig.Rich[0].MIME != "image/png" {
		t.Fatalf("a figure in a read-only session: %+v %+v", fig, er)
	}
	if _, err := os.Stat(fig.Rich[0].File); err != nil {
		t.Errorf("the figure's file: %v", err)
	}
	sreport(t, "matplotlib in a read-only python session", "draws, saves a figure in TMPDIR, and a figure shown comes back as a PNG; %s", clip(said))
}

// TestSandboxInterruptAndRestart: the holder still interrupts a
// sandboxed runtime (a signal into the sandbox, not out of it), on pipes
// and on a PTY, and a restarted session keeps its policy.
func TestSandboxInterruptAndRestart(t *testing.T) {
	needLandlock(t)
	needPython(t)
	t.Parallel()
	w := newSandboxWorld(t)
	ro := &api.Sandbox{Policy: api.SandboxReadOnly}
	for _, c := range []struct{ name, runtime, loop, after string }{
		{"py", "python", "while True: pass", "print('after')"},
		{"shpty", "sh", "while :; do :; done", "echo after"},
	} {
		zero := 0.0
		req := api.ExecRequest{Code: c.loop, Timeout: &zero, Client: api.Client{Who: "t", How: "api"},
			Spawn: api.Spawn{Runtime: c.runtime, Cwd: w.e.home, Env: w.e.vars, Sandbox: ro}}
		body, _ := json.Marshal(req)
		w.e.must(0, "start")
		resp, err := w.e.api().Post("http://polyrepl/v1/sessions/"+c.name+"/exec", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		w.e.must(0, "interrupt", c.name)
		r, er := w.exec(t, c.name, c.runtime, ro, c.after)
		if er != nil || !strings.Contains(r.Output, "after") {
			t.Errorf("%s after an interrupt: %+v %+v", c.runtime, r, er)
		}
	}
	w.e.must(0, "restart", "py")
	r, er := w.exec(t, "py", "python", ro, "import os\ntry:\n    open(os.path.join(os.environ['HOME'], 'x'), 'w')\nexcept PermissionError: print('still denied')")
	if er != nil || !strings.Contains(r.Output, "still denied") {
		t.Errorf("after restart: %+v %+v", r, er)
	}
	sreport(t, "interrupt and restart of a read-only session", "an endless loop interrupted on pipes (python) and on a PTY (sh); after restart a write outside is %s", map[bool]string{true: "still denied", false: "ALLOWED"}[strings.Contains(r.Output, "still denied")])
}

// TestSandboxPolyreplSocketsFromACell: from a read-only cell, the
// daemon's socket and the holders' are in a hidden place: their
// directory cannot be listed; connecting by path is the kernel's to
// refuse from Landlock ABI 9, and below that the daemon's peer check's
// (issue 36's daemon part), which this reports.
func TestSandboxPolyreplSocketsFromACell(t *testing.T) {
	needLandlock(t)
	needPython(t)
	t.Parallel()
	w := newSandboxWorld(t)
	sock := filepath.Join(w.e.socketDir(), "daemon.sock")
	r, er := w.exec(t, "peer", "python", &api.Sandbox{Policy: api.SandboxReadOnly}, fmt.Sprintf(`
import os, socket
try:
    os.listdir(%[1]q); print("list=ok")
except PermissionError: print("list=denied")
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(%[2]q)
    s.sendall(b"GET /v1/sessions HTTP/1.0\r\n\r\n")
    print("connect=ok answer=" + s.recv(64).split(b"\r\n")[0].decode())
except PermissionError: print("connect=denied")
`, filepath.Dir(sock), sock))
	if er != nil {
		t.Fatalf("refused: %+v", er)
	}
	got := results(r.Output)
	if got["list"] != "denied" {
		t.Errorf("the socket directory was listed from a read-only cell: %s", r.Output)
	}
	if sandbox.KernelABI() >= 9 && got["connect"] != "denied" {
		t.Errorf("ABI %d: the daemon's socket was reached: %s", sandbox.KernelABI(), r.Output)
	}
	sreport(t, fmt.Sprintf("the daemon's socket from a read-only cell (Landlock ABI %d)", sandbox.KernelABI()),
		"its directory listed %s; connect %s", got["list"], got["connect"])
}
