package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/polyrepl/polyrepl/internal/api"
)

// KernelABI is this kernel's Landlock ABI version, 0 without Landlock.
func KernelABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// Check says what this kernel enforces of policy p (Normal, not full),
// and refuses (*Refused) when a part p needs is missing and p is not
// BestEffort.
func Check(p api.Sandbox) (api.Enforced, error) {
	e, missing := LandlockParts(p, KernelABI(), SeccompNet)
	return e, Judge(p, missing)
}

// Filesystem rights, by what they let a runtime do.
const (
	rightsRead  = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	rightsWrite = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
		ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock |
		ll.AccessFSMakeFifo | ll.AccessFSMakeBlock | ll.AccessFSMakeSym | ll.AccessFSRefer | ll.AccessFSTruncate
	// rightsFile are those a rule on a file (not a directory) may carry.
	rightsFile = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// handledFS is every filesystem right Landlock of ABI abi knows.
func handledFS(abi int) uint64 {
	switch {
	case abi <= 0:
		return 0
	case abi == 1:
		return 1<<13 - 1
	case abi == 2:
		return 1<<14 - 1
	case abi < 5:
		return 1<<15 - 1
	case abi < 9:
		return 1<<16 - 1
	}
	return 1<<17 - 1
}

// ruleset is the Landlock ruleset for s on a kernel of ABI abi.
func ruleset(s Spec, abi int) ll.RulesetAttr {
	attr := ll.RulesetAttr{HandledAccessFS: handledFS(abi)}
	if s.Policy.Network != api.NetworkOn {
		if abi >= abiNet {
			attr.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
		}
		if abi >= abiUDP {
			attr.HandledAccessNet |= ll.AccessNetBindUDP | ll.AccessNetConnectSendUDP
		}
	}
	if abi >= abiScope {
		attr.Scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	return attr
}

// rights is what a grant allows, within what the ruleset handles.
func rights(g Grant, s Spec, handled uint64) uint64 {
	if g.List {
		return ll.AccessFSReadDir & handled
	}
	r := uint64(rightsRead)
	if g.Write {
		r |= rightsWrite
	}
	if g.Dev {
		r |= ll.AccessFSIoctlDev
	}
	if g.Dir && s.Policy.Network == api.NetworkOn {
		// Pathname unix sockets where the runtime may read (ABI 9):
		// none in a hidden place, so none of polyrepl's.
		r |= ll.AccessFSResolveUnix
	}
	if !g.Dir {
		r &= rightsFile
	}
	return r & handled
}

// Trampoline says whether a sandboxed runtime is started through the
// trampoline (Spec.Wrap): not on Linux, where StartConfined confines
// the thread that starts it instead, which costs no second program's
// start (the trampoline remains for tests and for a holder that asks).
const Trampoline = false

// newRuleset makes the Landlock ruleset for s: -1 when this kernel has
// no Landlock and s accepts less (BestEffort).
func newRuleset(s Spec) (int, error) {
	abi := KernelABI()
	if abi == 0 {
		if !s.Policy.BestEffort {
			return -1, errors.New("this kernel has no Landlock: the runtime was not started")
		}
		return -1, nil
	}
	attr := ruleset(s, abi)
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return -1, fmt.Errorf("cannot create a Landlock ruleset (ABI %d): %w", abi, err)
	}
	for _, g := range Plan(s, OSTree{}) {
		if err := addGrant(fd, g, rights(g, s, attr.HandledAccessFS)); err != nil {
			syscall.Close(fd)
			return -1, err
		}
	}
	if attr.HandledAccessNet&ll.AccessNetBindTCP != 0 {
		for _, port := range s.Ports {
			na := ll.NetPortAttr{AllowedAccess: ll.AccessNetBindTCP, Port: uint64(port)}
			if err := ll.LandlockAddNetPortRule(fd, &na, 0); err != nil {
				syscall.Close(fd)
				return -1, fmt.Errorf("cannot allow the kernel's port %d: %w", port, err)
			}
		}
	}
	return fd, nil
}

// restrictThread confines the calling thread (locked to its goroutine)
// by ruleset fd, with no_new_privs, the seccomp filter against typing
// into terminals, and under network off the one for what Landlock
// leaves open (seccomp_linux.go).
func restrictThread(fd int, s Spec) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("cannot set no_new_privs: %w", err)
	}
	if err := filterTTY(); err != nil {
		return err
	}
	if s.Policy.Network != api.NetworkOn {
		if err := filterNet(); err != nil {
			return err
		}
	}
	if err := ll.LandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("cannot enforce the Landlock ruleset: %w", err)
	}
	return nil
}

// confineExec confines this process by s and executes argv in its
// place; it returns only on failure. Only this thread is confined
// (with no_new_privs): the execve that follows keeps this thread alone.
func confineExec(s Spec, argv []string) error {
	runtime.LockOSThread()
	fd, err := newRuleset(s)
	if err != nil {
		return err
	}
	if fd >= 0 {
		defer syscall.Close(fd)
		if err := restrictThread(fd, s); err != nil {
			return err
		}
	}
	return execRuntime(argv)
}

// StartConfined calls start (an exec.Cmd's Start) on an OS thread of
// its own that it first confines by s: the process start forks from
// that thread (as SysProcAttr.Pdeathsig's documentation relies on), so
// the runtime is born confined, with its pid, start time, process group
// and terminal as the caller set them. The thread is never unlocked, so
// it ends with its goroutine and no other code runs on it; the Go
// runtime makes its later threads from a thread of its own, never from
// a locked one. The holder itself stays unconfined.
func StartConfined(s Spec, start func() error) error {
	fd, err := newRuleset(s)
	if err != nil {
		return err
	}
	if fd < 0 {
		return start()
	}
	defer syscall.Close(fd)
	var err2 error
	offMain(func() {
		if err2 = restrictThread(fd, s); err2 == nil {
			err2 = start()
		}
	})
	return err2
}

// offMain runs f on a thread locked for good, which is never the
// process's main thread: a goroutine that ends locked to the main
// thread does not end it, and the main thread is the process as others
// see it (a signal to the holder's pid, its /proc entries) — it must
// not join the runtime's domain.
func offMain(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			// Hold the main thread while another one does the work.
			offMain(f)
			runtime.UnlockOSThread()
			return
		}
		f() // and stay locked: the thread ends with this goroutine
	}()
	<-done
}

// addGrant adds one path-beneath rule; a place gone since it was
// planned is passed over.
func addGrant(fd int, g Grant, access uint64) error {
	if access == 0 {
		return nil
	}
	pfd, err := unix.Open(g.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot open %s for a Landlock rule: %w", g.Path, err)
	}
	defer unix.Close(pfd)
	attr := ll.PathBeneathAttr{ParentFd: pfd, AllowedAccess: access}
	if err := ll.LandlockAddPathBeneathRule(fd, &attr, 0); err != nil {
		return fmt.Errorf("cannot add the Landlock rule for %s: %w", g.Path, err)
	}
	return nil
}

// execRuntime replaces this process with argv: same pid, start time, process
// group and terminal; the environment passes as it came.
func execRuntime(argv []string) error {
	err := syscall.Exec(argv[0], argv, os.Environ())
	return fmt.Errorf("cannot start %s: %w", argv[0], err)
}
