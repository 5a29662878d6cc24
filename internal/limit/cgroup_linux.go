package limit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// delegatedV2 is the daemon's own cgroup v2 directory if it may make
// memory-limited groups under it: the memory controller is offered to it,
// it may write there, and the cgroup is delegated, which systemd marks
// with a "trusted.delegate" or "user.delegate" extended attribute (anyone
// else delegating by hand can set one too). asked names the scope the
// daemon just asked systemd for, which needs no mark.
func delegatedV2(asked *string) (string, error) {
	mount, _, err := mountOf(func(fstype, _ string) bool { return fstype == "cgroup2" })
	if err != nil {
		return "", err
	}
	rel, err := ownCgroup(func(id, _ string) bool { return id == "0" })
	if err != nil {
		return "", err
	}
	dir := filepath.Join(mount, rel)
	if asked != nil && filepath.Base(dir) != *asked {
		return "", fmt.Errorf("systemd did not move the daemon into %s (it is in %s)", *asked, dir)
	}
	ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil || !hasWord(string(ctl), "memory") {
		return "", fmt.Errorf("the memory controller is not offered to the daemon's cgroup %s", dir)
	}
	for _, f := range []string{"cgroup.subtree_control", "cgroup.procs"} {
		if unix.Access(filepath.Join(dir, f), unix.W_OK) != nil {
			return "", fmt.Errorf("the daemon's cgroup %s is not delegated to it (%s is not writable)", dir, f)
		}
	}
	if asked == nil && !markedDelegated(dir) {
		return "", fmt.Errorf("the daemon's cgroup %s is not marked delegated (no trusted.delegate or user.delegate attribute)", dir)
	}
	return dir, nil
}

func markedDelegated(dir string) bool {
	for _, attr := range []string{"trusted.delegate", "user.delegate"} {
		buf := make([]byte, 8)
		if n, err := unix.Getxattr(dir, attr, buf); err == nil && string(buf[:n]) == "1" {
			return true
		}
	}
	return false
}

// prepareV2 lets dir's children use the memory controller, moving the
// daemon into its leaf first when it must.
func prepareV2(dir string) error {
	ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return fmt.Errorf("cannot read %s's controllers: %w", dir, err)
	}
	if hasWord(string(ctl), "memory") {
		return nil
	}
	leaf := filepath.Join(dir, daemonLeaf)
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("cannot make the daemon's cgroup %s: %w", leaf, err)
	}
	// Every process of a cgroup delegated to the daemon is the daemon's
	// or one it started (a session's runtime, not yet in its own group).
	procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return fmt.Errorf("cannot list the processes of %s: %w", dir, err)
	}
	for _, pid := range append([]string{strconv.Itoa(os.Getpid())}, strings.Fields(string(procs))...) {
		if err := write(leaf, "cgroup.procs", pid); err != nil && pid == strconv.Itoa(os.Getpid()) {
			os.Remove(leaf)
			return fmt.Errorf("cannot move the daemon into %s: %w", leaf, err)
		}
	}
	if err := write(dir, "cgroup.subtree_control", "+memory"); err != nil {
		return fmt.Errorf("cannot offer the memory controller to the groups under %s (a process came in as the daemon moved?): %w", dir, err)
	}
	return nil
}

// askSystemd asks the systemd manager (the user's, or the system's for
// root) to move the daemon into a new delegated scope, as `systemd-run
// --scope -p Delegate=yes` would for a new process, and returns the
// scope's name once the daemon is in it.
func askSystemd() (string, error) {
	var fs unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &fs); err != nil || fs.Type != unix.CGROUP2_SUPER_MAGIC {
		return "", errors.New("/sys/fs/cgroup is not the unified hierarchy, so there is no systemd to ask for a delegated scope")
	}
	busctl, err := exec.LookPath("busctl")
	if err != nil {
		return "", errors.New("no busctl to ask systemd for a delegated scope")
	}
	pid := strconv.Itoa(os.Getpid())
	scope := "polyrepl-daemon-" + pid + ".scope"
	var args []string
	if os.Geteuid() != 0 {
		args = append(args, "--user")
	}
	args = append(args, "call", "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
		"org.freedesktop.systemd1.Manager", "StartTransientUnit", "ssa(sv)a(sa(sv))",
		scope, "fail", "3",
		"PIDs", "au", "1", pid,
		"Delegate", "b", "true",
		"Description", "s", "polyrepl daemon: its sessions' memory limits",
		"0")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, busctl, args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("systemd gave no delegated scope: busctl: %v %s", err, strings.TrimSpace(string(out)))
	}
	// The call queues the scope's start job; the move follows at once.
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if rel, err := ownCgroup(func(id, _ string) bool { return id == "0" }); err == nil && filepath.Base(rel) == scope {
			return scope, nil
		}
	}
	return "", fmt.Errorf("systemd did not move the daemon into %s within 3s", scope)
}

// writableV1 is the daemon's own cgroup v1 memory directory, if it may
// make groups under it.
func writableV1() (string, error) {
	mount, root, err := mountOf(func(fstype, opts string) bool {
		return fstype == "cgroup" && hasWord(strings.ReplaceAll(opts, ",", " "), "memory")
	})
	if err != nil {
		return "", errors.New("no cgroup v1 memory controller is mounted")
	}
	rel, err := ownCgroup(func(_, ctls string) bool { return hasWord(strings.ReplaceAll(ctls, ",", " "), "memory") })
	if err != nil {
		return "", err
	}
	if root != "/" {
		rel = strings.TrimPrefix(rel, root)
	}
	dir := filepath.Join(mount, rel)
	if unix.Access(dir, unix.W_OK) != nil {
		return "", fmt.Errorf("the daemon's cgroup v1 memory group %s is not writable", dir)
	}
	return dir, nil
}

// ownCgroup is the daemon's cgroup path in the hierarchy whose line in
// /proc/self/cgroup ("ID:CONTROLLERS:PATH") matches.
func ownCgroup(match func(id, ctls string) bool) (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.SplitN(line, ":", 3); len(f) == 3 && match(f[0], f[1]) {
			return f[2], nil
		}
	}
	return "", errors.New("the daemon is in no such cgroup")
}

// mountOf finds the mount point, and the root within its hierarchy, of
// the first mount whose type and super options match.
func mountOf(match func(fstype, opts string) bool) (mount, root string, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS] - FSTYPE SOURCE SUPEROPTIONS"
		before, after, ok := strings.Cut(sc.Text(), " - ")
		a, b := strings.Fields(after), strings.Fields(before)
		if ok && len(a) >= 3 && len(b) >= 5 && match(a[0], a[2]) {
			return b[4], b[3], nil
		}
	}
	return "", "", errors.New("no such mount")
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}
