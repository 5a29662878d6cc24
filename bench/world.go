package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
)

// tagVar marks every process the harness causes, so the end can prove that
// none is left, as the e2e suite does.
const tagVar = "POLYREPL_BENCH_TAG"

// world is the harness's private setting: the binaries it built, the
// daemon's directories, and the environment every child gets.
type world struct {
	cfg        config
	moduleRoot string
	root       string // a short temporary directory holding everything
	bin        string // polyrepl, built with CGO_ENABLED=0
	hello      string // a static Go hello-world
	runtimeDir string // XDG_RUNTIME_DIR
	stateDir   string // XDG_STATE_HOME
	home       string // HOME and the working directory of every child
	tag        string
	env        []string

	daemonPID int
	jup       *jupyter
	gw        *gatewayServer // the Jupyter Server of the gateway row, while it runs (under mu)
	tmuxSock  string         // the private tmux socket name, once a server was started

	mu    sync.Mutex
	skips []string // rows not measured, with why

	closeOnce sync.Once
	closeErr  error
}

func newWorld(c config) (*world, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	// Unix socket paths are limited to 108 bytes: keep the directory short.
	base := ""
	if len(os.TempDir()) > 40 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "prb")
	if err != nil {
		return nil, err
	}
	var buf [8]byte
	rand.Read(buf[:])
	w := &world{
		cfg: c, moduleRoot: root, root: dir,
		bin: filepath.Join(dir, "polyrepl"), hello: filepath.Join(dir, "hello"),
		runtimeDir: filepath.Join(dir, "r"), stateDir: filepath.Join(dir, "s"), home: filepath.Join(dir, "h"),
		tag: hex.EncodeToString(buf[:]),
	}
	for _, d := range []string{w.runtimeDir, w.stateDir, w.home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "XDG_RUNTIME_DIR", k == "XDG_STATE_HOME", k == "HOME", k == tagVar,
			strings.HasPrefix(k, "POLYREPL_"), strings.HasPrefix(k, "JUPYTER_"), k == "IPYTHONDIR",
			k == "PYTHONSTARTUP", k == "TMUX", k == "TMUX_PANE", k == "TMUX_TMPDIR":
			continue
		}
		w.env = append(w.env, kv)
	}
	w.env = append(w.env,
		"XDG_RUNTIME_DIR="+w.runtimeDir, "XDG_STATE_HOME="+w.stateDir, "HOME="+w.home,
		"POLYREPL_PYTHON="+c.python, tagVar+"="+w.tag,
		"JUPYTER_RUNTIME_DIR="+filepath.Join(w.home, "jr"), "IPYTHONDIR="+filepath.Join(w.home, "ipy"),
		"JUPYTER_PLATFORM_DIRS=1", "TMUX_TMPDIR="+dir,
	)
	// The in-process clients find the socket through the environment.
	os.Setenv("XDG_RUNTIME_DIR", w.runtimeDir)
	os.Setenv("XDG_STATE_HOME", w.stateDir)
	// The holders the hop rows start are children of the harness, with
	// its environment: they carry the tag too.
	os.Setenv(tagVar, w.tag)

	logf("building polyrepl (CGO_ENABLED=0) into %s", dir)
	if err := w.goBuild(w.bin, "./cmd/polyrepl"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	src := filepath.Join(dir, "hello.go")
	if err := os.WriteFile(src, []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello, world\") }\n"), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := w.goBuild(w.hello, src); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return w, nil
}

// moduleRoot asks the go tool where go.mod is.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("cannot run `go env GOMOD`: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run the harness inside the polyrepl module (go run ./bench)")
	}
	return filepath.Dir(mod), nil
}

func (w *world) goBuild(out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = w.moduleRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build -o %s %s: %v\n%s", out, pkg, err, b)
	}
	return nil
}

// skip records a row that cannot be measured here, and says so now.
func (w *world) skip(row, why string) {
	logf("skipping %s: %s", row, why)
	w.mu.Lock()
	w.skips = append(w.skips, fmt.Sprintf("%s: %s", row, why))
	w.mu.Unlock()
}

// command makes a child process with the private environment.
func (w *world) command(argv ...string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = w.env
	cmd.Dir = w.home
	return cmd
}

// newClient is an in-process client of the private daemon. It never
// starts a daemon itself: that would run this harness as one.
func (w *world) newClient() *client.Client {
	c := client.New()
	c.Socket = filepath.Join(w.runtimeDir, "polyrepl", "daemon.sock")
	c.AutoStart = false
	return c
}

// spawn is how the harness's sessions start.
func (w *world) spawn(runtime, exe string) api.Spawn {
	return api.Spawn{Runtime: runtime, Exe: exe, Cwd: w.home, Env: w.env}
}

func (w *world) execReq(code string) api.ExecRequest {
	return api.ExecRequest{Code: code, Timeout: api.Seconds(120), Spawn: w.spawn("python", w.cfg.python), Client: api.Client{Who: "bench", How: "go"}}
}

func (w *world) startDaemon(ctx context.Context) error {
	cmd := w.command(w.bin, "start")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("polyrepl start: %v: %s", err, b)
	}
	st, err := w.newClient().Status(ctx)
	if err != nil {
		return fmt.Errorf("the daemon does not answer: %w", err)
	}
	w.daemonPID = st.PID
	logf("daemon pid %d on %s", st.PID, st.Socket)
	return nil
}

func (w *world) stopDaemon(ctx context.Context) error {
	if w.daemonPID == 0 {
		return nil
	}
	pid := w.daemonPID
	w.daemonPID = 0
	if _, err := w.newClient().Stop(ctx, false); err != nil {
		return w.daemonGone(pid, err)
	}
	for deadline := time.Now().Add(10 * time.Second); alive(pid); {
		if time.Now().After(deadline) {
			return w.daemonGone(pid, errors.New("it did not exit within 10s of stop"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// killDaemon SIGKILLs the daemon, as a crash would, and waits until it is
// gone: not only its leader, which is a zombie as soon as it exits while
// its other threads still hold its files, but its socket, which a
// `polyrepl start` reached then and was reset by (issue 40, item 7: the
// start failed, the harness kept the dead daemon's pid, and its next
// stop was refused, ending the run without a report). The daemon is
// then no longer the harness's to stop.
func (w *world) killDaemon() {
	pid := w.daemonPID
	w.daemonPID = 0
	if pid == 0 {
		return
	}
	syscall.Kill(pid, syscall.SIGKILL)
	sock := filepath.Join(w.runtimeDir, "polyrepl", "daemon.sock")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if !alive(pid) && !accepts(sock) {
			return
		}
	}
	logf("the SIGKILLed daemon (pid %d) was not gone within 10s", pid)
}

// accepts says if something takes connections at a unix socket.
func accepts(sock string) bool {
	c, err := net.DialTimeout("unix", sock, 100*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func (w *world) restartDaemon(ctx context.Context) error {
	if err := w.stopDaemon(ctx); err != nil {
		return err
	}
	return w.startDaemon(ctx)
}

// close ends everything the harness started and proves that nothing
// carrying the tag is left, killing (by pid) and naming what is.
func (w *world) close() error {
	w.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		w.stopJupyter()
		w.stopTmux()
		if w.daemonPID != 0 {
			if err := w.stopDaemon(ctx); err != nil {
				logf("%v", err)
			}
		}
		// After the daemon, so that its gateway sessions could still
		// delete their kernels there.
		w.stopGateway()
		// A process in the middle of exiting is not left behind: give
		// stragglers a moment before calling them leftovers.
		var left []string
		for deadline := time.Now().Add(3 * time.Second); ; {
			left = w.tagged(false)
			if len(left) == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		left = w.tagged(true)
		if len(left) > 0 {
			w.closeErr = fmt.Errorf("processes left behind (now killed):\n  %s", strings.Join(left, "\n  "))
		} else {
			logf("no process left behind")
		}
		os.RemoveAll(w.root)
	})
	return w.closeErr
}

// tagged lists the live processes carrying our tag, and kills them (by
// pid) if asked.
func (w *world) tagged(kill bool) []string {
	return procsWith(tagVar+"="+w.tag, kill)
}

// procsWith lists the live processes whose environment holds kv
// (KEY=VALUE), and kills them (by pid) if asked.
func procsWith(kv string, kill bool) []string {
	ents, _ := os.ReadDir("/proc")
	self := os.Getpid()
	want := []byte(kv + "\x00")
	var out []string
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || !bytes.Contains(append(env, 0), want) {
			continue
		}
		if s := procState(pid); s == 'Z' || s == 0 {
			continue
		}
		cl, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		out = append(out, fmt.Sprintf("pid %d: %s", pid, strings.TrimSpace(strings.ReplaceAll(string(cl), "\x00", " "))))
		if kill {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return out
}

// procState is the state letter of /proc/PID/stat, or 0 if it is gone.
func procState(pid int) byte {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

func alive(pid int) bool {
	s := procState(pid)
	return s != 0 && s != 'Z'
}

// vmRSS is a process's resident memory in bytes, from /proc/PID/status.
func vmRSS(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseUint(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// treeRSS sums the resident memory of pid and all its descendants.
func treeRSS(pid int) uint64 {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, d := range ents {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		children[pp] = append(children[pp], p)
	}
	var total uint64
	stack := []int{pid}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		total += vmRSS(p)
		stack = append(stack, children[p]...)
	}
	return total
}
