package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
)

// probeVar makes the test binary, started confined through the
// trampoline, try each escape and print what happened instead of
// running the tests.
const probeVar = "POLYREPL_SANDBOX_PROBE"

func TestMain(m *testing.M) {
	IfConfine()
	if os.Getenv(probeVar) != "" {
		os.Exit(probe())
	}
	os.Exit(m.Run())
}

// probe tries what a cell would, printing "name: ok" or "name: denied"
// (EACCES or EPERM) or "name: error …".
func probe() int {
	outside, cwd, secret, tmp := os.Getenv("OUTSIDE"), os.Getenv("CWD"), os.Getenv("SECRET"), os.Getenv("TMPDIR")
	say := func(name string, err error) {
		switch {
		case err == nil:
			fmt.Printf("%s: ok\n", name)
		case errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM):
			fmt.Printf("%s: denied\n", name)
		default:
			fmt.Printf("%s: error %v\n", name, err)
		}
	}
	say("write-outside", os.WriteFile(filepath.Join(outside, "f"), []byte("x"), 0o600))
	say("write-tmp", os.WriteFile(filepath.Join(tmp, "f"), []byte("x"), 0o600))
	say("write-cwd", os.WriteFile(filepath.Join(cwd, "f"), []byte("x"), 0o600))
	_, err := os.ReadFile(secret)
	say("read-secret", err)
	_, err = os.ReadFile(filepath.Join(outside, "readable"))
	say("read-outside", err)
	if err := os.Chdir(outside); err != nil {
		say("chdir", err)
	}
	say("write-after-chdir", os.WriteFile("g", []byte("x"), 0o600))
	sub := exec.Command("/bin/sh", "-c", "echo x > "+filepath.Join(outside, "h"))
	if out, err := sub.CombinedOutput(); err != nil && strings.Contains(string(out), "Permission denied") {
		fmt.Println("write-subprocess: denied")
	} else {
		say("write-subprocess", err)
	}
	c, err := net.Dial("tcp", os.Getenv("LISTENER"))
	if err == nil {
		c.Close()
	}
	say("connect", err)
	say("signal-parent", syscall.Kill(os.Getppid(), 0))
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	if err == nil {
		syscall.Close(fd)
	}
	say("udp-socket", err)
	fd, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.Close(fd)
	}
	say("tcp-socket", err)
	return 0
}

// TestEnforced starts the test binary confined under each policy — as
// a holder does (StartConfined), and through the trampoline — and has
// it try to escape.
func TestEnforced(t *testing.T) {
	if abi := KernelABI(); abi < abiScope {
		t.Skipf("this kernel has Landlock ABI %d: the test needs %d", abi, abiScope)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	for _, how := range []string{"thread", "trampoline"} {
		t.Run(how, func(t *testing.T) { testEnforced(t, how, ln.Addr().String()) })
	}
	// The test process started them confined, and is not itself: not
	// its main thread, which is the process as a signal or /proc sees
	// it (no_new_privs comes with the confinement).
	if err := os.WriteFile(filepath.Join(t.TempDir(), "free"), []byte("x"), 0o600); err != nil {
		t.Errorf("the starting process was confined too: %v", err)
	}
	for range 20 {
		StartConfined(Spec{Policy: api.Sandbox{Policy: api.SandboxReadOnly}, Tmp: t.TempDir()}, func() error { return nil })
	}
	if b, _ := os.ReadFile("/proc/self/status"); !strings.Contains(string(b), "NoNewPrivs:\t0") {
		t.Errorf("the main thread was confined: %s", b)
	}
}

func testEnforced(t *testing.T, how, listener string) {
	for _, c := range []struct {
		policy, network string
		want            map[string]string
	}{
		{api.SandboxReadOnly, "", map[string]string{"write-outside": "denied", "write-tmp": "ok", "write-cwd": "denied",
			"read-secret": "denied", "read-outside": "ok", "write-after-chdir": "denied", "write-subprocess": "denied",
			"connect": "denied", "signal-parent": "denied", "udp-socket": "denied", "tcp-socket": "ok"}},
		{api.SandboxWorkspaceWrite, "", map[string]string{"write-outside": "denied", "write-tmp": "ok", "write-cwd": "ok",
			"read-secret": "denied", "write-after-chdir": "denied", "write-subprocess": "denied",
			"connect": "denied", "signal-parent": "denied"}},
		{api.SandboxWorkspaceWrite, api.NetworkOn, map[string]string{"write-outside": "denied", "write-cwd": "ok",
			"read-secret": "denied", "connect": "ok", "signal-parent": "denied", "udp-socket": "ok"}},
	} {
		t.Run(c.policy+"-"+c.network, func(t *testing.T) {
			root := t.TempDir()
			home, cwd, outside := filepath.Join(root, "home"), filepath.Join(root, "work"), filepath.Join(root, "outside")
			secret := filepath.Join(home, ".ssh", "id_test")
			own := filepath.Join(root, "state")
			for _, d := range []string{filepath.Dir(secret), cwd, outside, own} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			os.WriteFile(secret, []byte("key"), 0o600)
			os.WriteFile(filepath.Join(outside, "readable"), []byte("x"), 0o600)
			p, err := Normal(&api.Sandbox{Policy: c.policy, Network: c.network})
			if err != nil {
				t.Fatal(err)
			}
			priv, err := MakePrivate(filepath.Base(root), TempParent(own), own)
			if err != nil {
				t.Fatal(err)
			}
			defer priv.Remove()
			s := NewSpec(p, cwd, SecretPlaces(home, own), priv.Tmp, priv.RuntimeDir)
			path, args := os.Args[0], []string{os.Args[0]}
			if how == "trampoline" {
				if path, args, err = s.Wrap(Self(), args); err != nil {
					t.Fatal(err)
				}
			}
			var out strings.Builder
			cmd := &exec.Cmd{Path: path, Args: args, Dir: cwd, Stdout: &out, Stderr: &out,
				Env: append(os.Environ(), append(s.Env(nil), probeVar+"=1", "OUTSIDE="+outside, "CWD="+cwd,
					"SECRET="+secret, "LISTENER="+listener)...)}
			if how == "thread" {
				err = StartConfined(s, cmd.Start)
			} else {
				err = cmd.Start()
			}
			if err == nil {
				err = cmd.Wait()
			}
			if err != nil {
				t.Fatalf("the confined probe failed: %v\n%s", err, out.String())
			}
			got := map[string]string{}
			for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				if k, v, ok := strings.Cut(l, ": "); ok {
					got[k] = v
				}
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s: %s, want %s\n%s", k, got[k], v, out.String())
				}
			}
			if _, err := os.Stat(filepath.Join(outside, "f")); err == nil {
				t.Errorf("the confined probe wrote outside")
			}
		})
	}
}

// TestConfineRefusesWithoutRunning: a trampoline that cannot confine
// itself says why and exits ExitConfine, and the runtime never runs.
func TestConfineRefusesWithoutRunning(t *testing.T) {
	cmd := exec.Command(os.Args[0], Command, "{not json", "/bin/echo", "ran")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitConfine || strings.Contains(string(out), "ran") {
		t.Fatalf("exit %v, printed %q", err, out)
	}
	if !strings.Contains(string(out), "sandbox cannot be read") {
		t.Errorf("printed %q", out)
	}
}

// BenchmarkSandboxedStart is what confining a runtime adds to starting
// it: /bin/true started and waited for plainly, confined by a thread of
// the starting process (as a holder does), and through the trampoline
// (this test binary, a smaller program than polyrepl's). The policy is
// read-only with the places a holder hides: those in $HOME, a state and
// a socket directory, and the sandboxes' temporary parent — in this
// machine's temporary directory (busy-tmp: its every entry is a rule;
// nine engineers' tests keep hundreds there), and in a quiet one of a
// few entries (quiet-tmp, in /var/tmp), as most machines' /tmp is.
func BenchmarkSandboxedStart(b *testing.B) {
	if KernelABI() == 0 {
		b.Skip("no Landlock")
	}
	home, _ := os.UserHomeDir()
	p, _ := Normal(&api.Sandbox{Policy: api.SandboxReadOnly})
	run := func(b *testing.B, start func(*exec.Cmd) error, wrap []string) {
		for range b.N {
			path, args := "/bin/true", []string{"/bin/true"}
			if wrap != nil {
				path, args = wrap[0], append(wrap[1:], args...)
			}
			cmd := &exec.Cmd{Path: path, Args: args}
			if err := start(cmd); err != nil {
				b.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("plain", func(b *testing.B) { run(b, (*exec.Cmd).Start, nil) })
	for _, tmp := range []string{"busy-tmp", "quiet-tmp"} {
		b.Run(tmp, func(b *testing.B) {
			root := b.TempDir()
			if tmp == "quiet-tmp" {
				// /var/tmp: few entries here, as most machines' /tmp.
				var err error
				if root, err = os.MkdirTemp("/var/tmp", "polyrepl-bench-"); err != nil {
					b.Skip(err)
				}
				defer os.RemoveAll(root)
				b.Setenv("TMPDIR", root)
			}
			priv, err := MakePrivate(filepath.Base(root), TempParent(filepath.Join(root, "state")), root)
			if err != nil {
				b.Fatal(err)
			}
			defer priv.Remove()
			s := NewSpec(p, root, SecretPlaces(home, filepath.Join(root, "state"), filepath.Join(root, "run")), priv.Tmp, priv.RuntimeDir)
			b.Logf("%s: %d rules", tmp, len(Plan(s, OSTree{})))
			b.Run("confined", func(b *testing.B) {
				run(b, func(c *exec.Cmd) error { return StartConfined(s, c.Start) }, nil)
			})
			b.Run("trampoline", func(b *testing.B) {
				_, args, _ := s.Wrap(Self(), nil)
				run(b, (*exec.Cmd).Start, append([]string{Self()}, args...))
			})
		})
	}
}
