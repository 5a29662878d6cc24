package limit

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The cgroup v2 ways need a unified hierarchy with the memory controller,
// which the machines these tests run on do not have (their memory
// controller is bound to cgroup v1). TestCgroupV2InVM boots a real
// kernel under qemu with this test binary as its init, and TestInVM, run
// there, holds hogs to limits through a delegated cgroup and through a
// scope asked of a stand-in busctl (the VM has no systemd).

// TestCgroupV2InVM boots the VM and reports what TestInVM found in it.
func TestCgroupV2InVM(t *testing.T) {
	if os.Getpid() == 1 {
		t.Skip("this is the VM")
	}
	if raceEnabled {
		t.Skip("a race-detector build is not fit to be a 512 MB VM's init")
	}
	qemu, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		t.Skip("qemu-system-x86_64 is not installed (Debian: qemu-system-x86), so the cgroup v2 ways are not tested")
	}
	kernel := os.Getenv("POLYREPL_TEST_KERNEL")
	if kernel == "" {
		found, _ := filepath.Glob("/boot/vmlinuz-*")
		if len(found) == 0 {
			t.Skip("no kernel to boot: set $POLYREPL_TEST_KERNEL or install linux-image-amd64, so the cgroup v2 ways are not tested")
		}
		kernel = found[len(found)-1]
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if f, err := elf.Open(exe); err == nil {
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				f.Close()
				t.Skip("this test binary is dynamically linked, so it cannot be the VM's init")
			}
		}
		f.Close()
	}
	initrd := filepath.Join(t.TempDir(), "initrd.cpio")
	if err := writeInitramfs(initrd, exe); err != nil {
		t.Fatal(err)
	}
	run := "-test.run=^TestInVM$"
	if testing.Verbose() {
		run += " -test.v"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	began := time.Now()
	cmd := exec.CommandContext(ctx, qemu, "-m", "512", "-smp", "1", "-nographic", "-no-reboot",
		"-kernel", kernel, "-initrd", initrd,
		"-append", "console=ttyS0 quiet panic=-1 POLYREPL_IN_VM=1 -- "+run)
	out, err := cmd.CombinedOutput()
	text := strings.ReplaceAll(string(out), "\r", "")
	m := regexp.MustCompile(`(?m)^VM-EXIT (\d+)$`).FindStringSubmatch(text)
	if m == nil || m[1] != "0" {
		t.Fatalf("the VM (%s, %s) did not pass (qemu: %v):\n%s", filepath.Base(kernel), time.Since(began).Round(time.Second), err, text)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "--- ") || strings.Contains(line, "memory limits:") {
			t.Log(strings.TrimSpace(line))
		}
	}
	t.Logf("VM with %s booted, tested and stopped in %s", filepath.Base(kernel), time.Since(began).Round(100*time.Millisecond))
}

// writeInitramfs writes an initramfs (a "newc" cpio archive) whose init
// is exe, with a bin/busctl that is exe too.
func writeInitramfs(path, exe string) error {
	body, err := os.ReadFile(exe)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	ino := 0
	add := func(name string, mode uint32, data []byte) {
		ino++
		fmt.Fprintf(&b, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
			ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
		b.WriteString(name + "\x00")
		for b.Len()%4 != 0 {
			b.WriteByte(0)
		}
		b.Write(data)
		for b.Len()%4 != 0 {
			b.WriteByte(0)
		}
	}
	for _, d := range []string{"bin", "dev", "proc", "sys", "tmp"} {
		add(d, unix.S_IFDIR|0o755, nil)
	}
	add("init", unix.S_IFREG|0o755, body)
	add("bin/busctl", unix.S_IFLNK|0o777, []byte("/init"))
	add("TRAILER!!!", 0, nil)
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// vmInit is the VM's init: it mounts what the tests need, runs them,
// says how they ended and powers the machine off.
func vmInit(m *testing.M) int {
	for _, mnt := range []struct{ src, dir, fstype string }{
		{"proc", "/proc", "proc"}, {"sysfs", "/sys", "sysfs"}, {"devtmpfs", "/dev", "devtmpfs"},
		{"tmpfs", "/tmp", "tmpfs"}, {"cgroup2", "/sys/fs/cgroup", "cgroup2"},
	} {
		if err := unix.Mount(mnt.src, mnt.dir, mnt.fstype, 0, ""); err != nil {
			fmt.Printf("cannot mount %s: %v\n", mnt.dir, err)
		}
	}
	os.Setenv("PATH", "/bin")
	code := m.Run()
	fmt.Printf("VM-EXIT %d\n", code)
	unix.Sync()
	unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	return code
}

// fakeBusctl does, for the VM, what systemd does when asked for a
// delegated scope: it makes the scope's cgroup under system.slice and
// moves the process there. It checks it was asked the way systemd wants.
func fakeBusctl(args []string) int {
	want := []string{"call", "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
		"org.freedesktop.systemd1.Manager", "StartTransientUnit", "ssa(sv)a(sa(sv))"}
	if len(args) < len(want)+3 || strings.Join(args[:len(want)], " ") != strings.Join(want, " ") {
		fmt.Fprintf(os.Stderr, "fake busctl: unexpected call %q\n", args)
		return 1
	}
	props := strings.Join(args[len(want):], " ")
	var scope string
	var pid, n int
	if _, err := fmt.Sscanf(props, "%s fail %d PIDs au 1 %d", &scope, &n, &pid); err != nil ||
		!strings.HasSuffix(scope, ".scope") || !strings.Contains(props, " Delegate b true ") || !strings.HasSuffix(props, " 0") {
		fmt.Fprintf(os.Stderr, "fake busctl: not a delegated scope for one process: %q (%v)\n", props, err)
		return 1
	}
	dir := filepath.Join("/sys/fs/cgroup/system.slice", scope)
	if err := os.Mkdir(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := write(dir, "cgroup.procs", strconv.Itoa(pid)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(`o "/org/freedesktop/systemd1/job/1"`)
	return 0
}

// TestInVM runs as the VM's init: the daemon's cgroup is the VM's own
// hierarchy, which it rearranges for each case.
func TestInVM(t *testing.T) {
	if os.Getpid() != 1 || os.Getenv("POLYREPL_IN_VM") == "" {
		t.Skip("runs only as the init of TestCgroupV2InVM's VM")
	}
	root := "/sys/fs/cgroup"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// into makes the cgroup dir under the root and moves this process in.
	into := func(dir string) string {
		t.Helper()
		g := filepath.Join(root, dir)
		must(os.MkdirAll(g, 0o755))
		must(write(g, "cgroup.procs", strconv.Itoa(os.Getpid())))
		return g
	}
	must(write(root, "cgroup.subtree_control", "+memory"))

	t.Run("delegated", func(t *testing.T) {
		g := into("delegated.scope")
		must(unix.Setxattr(g, "trusted.delegate", []byte("1"), 0))
		l := &Limiter{}
		lim, st, out, err := hogUnder(t, l, 256, 64)
		must(err)
		if lim.By != ByCgroup || l.dir != g {
			t.Fatalf("held by %q under %q, want cgroup under %s", lim.By, l.dir, g)
		}
		if own, _ := ownCgroup(func(id, _ string) bool { return id == "0" }); own != "/delegated.scope/"+daemonLeaf {
			t.Errorf("the daemon is in %s, want its leaf under the delegated cgroup", own)
		}
		killedForMemory(t, lim, st, out)
		lim, st, out, err = hogUnder(t, l, 16, 64)
		must(err)
		if b, _ := os.ReadFile(filepath.Join(lim.group, "memory.max")); strings.TrimSpace(string(b)) != "67108864" {
			t.Errorf("the session's memory.max is %q, want 64 MiB", b)
		}
		withinLimit(t, lim, st, out)
	})

	t.Run("cap", func(t *testing.T) {
		// A cap on all sessions together: a hog with no limit of its
		// own is killed by the cap, one with its own limit below it by
		// that limit, each told as such.
		g := into("cap.scope")
		must(unix.Setxattr(g, "trusted.delegate", []byte("1"), 0))
		l := &Limiter{Total: 128 << 20, Key: "vm"}
		st := l.Cap()
		if !st.Enforced || st.By != ByCgroup || filepath.Dir(st.Group) != g {
			t.Fatalf("the cap in a delegated cgroup v2: %+v", st)
		}
		lim, ps, out, err := hogUnder(t, l, 256, 0)
		must(err)
		if lim.Over() != OverCap {
			t.Errorf("a hog with no limit of its own killed under the cap: Over %q", lim.Over())
		}
		killedForMemory(t, lim, ps, out)
		lim, ps, out, err = hogUnder(t, l, 256, 64)
		must(err)
		if lim.Over() != OverOwn {
			t.Errorf("a hog killed by its own 64 MB limit under the cap: Over %q", lim.Over())
		}
		killedForMemory(t, lim, ps, out)
		l.ReleaseCap(5 * time.Second)
		if _, err := os.Stat(st.Group); err == nil {
			t.Errorf("the cap's group %s is still there after ReleaseCap", st.Group)
		}
	})

	t.Run("systemd", func(t *testing.T) {
		// A plain cgroup, as a login session's scope is: not delegated,
		// so the daemon asks (the stand-in) systemd for a scope.
		into("session-1.scope")
		sl := filepath.Join(root, "system.slice")
		must(os.MkdirAll(sl, 0o755))
		must(write(sl, "cgroup.subtree_control", "+memory"))
		l := &Limiter{}
		lim, st, out, err := hogUnder(t, l, 256, 64)
		must(err)
		scope := filepath.Join(sl, "polyrepl-daemon-1.scope")
		if lim.By != ByCgroup || l.dir != scope {
			t.Fatalf("held by %q under %q, want cgroup under %s", lim.By, l.dir, scope)
		}
		killedForMemory(t, lim, st, out)
	})

	t.Run("nothing delegated", func(t *testing.T) {
		into("session-2.scope")
		t.Setenv("PATH", "/nowhere")
		if _, err := (&Limiter{Want: "cgroup"}).Apply(os.Getpid(), "polyrepl-none", 64<<20); err == nil ||
			!strings.Contains(err.Error(), "not marked delegated") || !strings.Contains(err.Error(), "no busctl") {
			t.Errorf("asking for a cgroup with none delegated: %v", err)
		}
		l := &Limiter{}
		lim, st, out, err := hogUnder(t, l, 16, 256)
		must(err)
		if lim.By != ByRlimit {
			t.Errorf("held by %q, want the rlimit", lim.By)
		}
		withinLimit(t, lim, st, out)
	})
}
