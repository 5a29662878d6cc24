package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Check says what Seatbelt enforces of policy p (Normal, not full): all
// it needs, whatever the macOS version.
func Check(p api.Sandbox) (api.Enforced, error) {
	if _, err := os.Stat(SeatbeltExec); err != nil {
		e := api.Enforced{}
		return e, Judge(p, []string{SeatbeltExec})
	}
	return SeatbeltParts(p), nil
}

// Trampoline says whether a sandboxed runtime is started through the
// trampoline (Spec.Wrap): on macOS it is, to run it under sandbox-exec.
const Trampoline = true

// StartConfined starts a runtime whose command is the trampoline's.
func StartConfined(s Spec, start func() error) error { return start() }

// confineExec runs argv under sandbox-exec with s's profile; it returns
// only on failure.
func confineExec(s Spec, argv []string) error {
	s = resolved(s)
	args := append([]string{"sandbox-exec", "-p", SeatbeltProfile(s)}, argv...)
	err := syscall.Exec(SeatbeltExec, args, os.Environ())
	return fmt.Errorf("cannot start %s under %s: %w", argv[0], SeatbeltExec, err)
}

// resolved is s with its places as Seatbelt matches them: symlinks
// resolved (/tmp is /private/tmp).
func resolved(s Spec) Spec {
	res := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return p
	}
	all := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = res(p)
		}
		return out
	}
	s.Cwd, s.Tmp, s.RuntimeDir = res(s.Cwd), res(s.Tmp), res(s.RuntimeDir)
	s.Policy.Readable, s.Policy.Writable = all(s.Policy.Readable), all(s.Policy.Writable)
	return s
}

// KernelABI is Landlock's ABI version: none here.
func KernelABI() int { return 0 }
