package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/polyrepl/polyrepl/internal/paths"
)

// TempParent is the directory, polyrepl's own, that holds sandboxed
// sessions' private temporary directories: hidden from every sandboxed
// session, so none reads another's. It is in the state directory
// (state), on disk and already hidden, rather than in /tmp: a hidden
// place in /tmp would make every entry of /tmp a Landlock rule of its
// own (830 entries here: +10 ms a session's start), and /tmp unlistable
// and its later entries unreadable.
func TempParent(state string) string {
	return filepath.Join(state, "sandbox-tmp")
}

// Private is a sandboxed session's own places, which its holder makes
// and removes: its temporary directory (TMPDIR) and its directory of
// driver files.
type Private struct {
	Tmp        string
	RuntimeDir string
	lock       *os.File // held while the holder lives; the runtime does not inherit it
}

// runtimePrefix names a session's own directory in the runtimes'.
const runtimePrefix = "sandbox-"

// MakePrivate makes the private places of the session of generation gen
// (0700): its temporary directory under parent (TempParent), and its
// driver directory in runtimeDir. Those of holders that are gone (killed before
// they could remove theirs) are removed on the way: a holder holds a
// lock on its own while it lives.
func MakePrivate(gen, parent, runtimeDir string) (*Private, error) {
	if gen == "" || gen != filepath.Base(gen) || strings.HasPrefix(gen, ".") {
		return nil, fmt.Errorf("cannot name a private directory after the generation %q", gen)
	}
	if err := paths.EnsurePrivateDir(parent); err != nil {
		return nil, fmt.Errorf("cannot make the sandboxes' temporary directory: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(parent, gen+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot make the session's private temporary directory: %w", err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("the session %s's private temporary directory is held by another holder: %w", gen, err)
	}
	sweep(parent, runtimeDir, gen)
	p := &Private{Tmp: filepath.Join(parent, gen), RuntimeDir: filepath.Join(runtimeDir, runtimePrefix+gen), lock: lock}
	for _, d := range []string{p.Tmp, p.RuntimeDir} {
		os.RemoveAll(d) // a holder's of this generation that failed to start
		if err := os.Mkdir(d, 0o700); err != nil {
			p.Remove()
			return nil, fmt.Errorf("cannot make the session's private directory: %w", err)
		}
	}
	return p, nil
}

// Remove removes the private places, for a holder that ends.
func (p *Private) Remove() {
	os.RemoveAll(p.Tmp)
	os.RemoveAll(p.RuntimeDir)
	os.Remove(p.lock.Name())
	p.lock.Close()
}

// sweep removes the private places of holders that are gone: those
// whose lock no holder holds.
func sweep(parent, runtimeDir, self string) {
	locks, _ := filepath.Glob(filepath.Join(parent, "*.lock"))
	for _, l := range locks {
		gen := strings.TrimSuffix(filepath.Base(l), ".lock")
		if gen == self {
			continue
		}
		f, err := os.OpenFile(l, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			os.RemoveAll(filepath.Join(parent, gen))
			os.RemoveAll(filepath.Join(runtimeDir, runtimePrefix+gen))
			os.Remove(l)
		}
		f.Close()
	}
}
