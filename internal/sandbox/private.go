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
// driver files. A fork of the session goes on using them — its runtime
// is a copy of one that was told them, and inherits a Landlock domain
// that lets it write only there — so a fork's holder shares them (Share)
// and they are removed when the last holder using them ends, whichever
// that is: the fork outlives its parent as often as not.
type Private struct {
	Tmp        string
	RuntimeDir string
	parent     string   // TempParent, where the locks are
	gen        string   // the generation the places are named after
	lock       *os.File // held while the holder lives; the runtime does not inherit it
}

// runtimePrefix names a session's own directory in the runtimes'.
const runtimePrefix = "sandbox-"

// leaseInfix names a sharing holder's lock: <gen>.lease-<its generation>,
// beside the owner's <gen>.lock.
const leaseInfix = ".lease-"

// MakePrivate makes the private places of the session of generation gen
// (0700): its temporary directory under parent (TempParent), and its
// driver directory in runtimeDir. Those of holders that are gone (killed before
// they could remove theirs) are removed on the way: a holder holds a
// lock on its own while it lives.
func MakePrivate(gen, parent, runtimeDir string) (*Private, error) {
	if !isGeneration(gen) {
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
	p := &Private{Tmp: filepath.Join(parent, gen), RuntimeDir: filepath.Join(runtimeDir, runtimePrefix+gen), parent: parent, gen: gen, lock: lock}
	for _, d := range []string{p.Tmp, p.RuntimeDir} {
		os.RemoveAll(d) // a holder's of this generation that failed to start
		if err := os.Mkdir(d, 0o700); err != nil {
			p.Remove()
			return nil, fmt.Errorf("cannot make the session's private directory: %w", err)
		}
	}
	return p, nil
}

// Share keeps the private places whose driver directory is dir (a
// sandboxed parent's Hello.ForkDir) while the holder of generation self
// lives: a fork's holder, whose runtime uses them. It returns nil for a
// dir that is no sandbox's own (a session without a sandbox keeps its
// driver files in the runtimes' directory, which nobody removes).
func Share(parent, dir, self string) (*Private, error) {
	base := filepath.Base(dir)
	gen, ok := strings.CutPrefix(base, runtimePrefix)
	if !ok || !isGeneration(gen) || !isGeneration(self) {
		return nil, nil
	}
	p := &Private{Tmp: filepath.Join(parent, gen), RuntimeDir: dir, parent: parent, gen: gen}
	if _, err := os.Stat(p.Tmp); err != nil {
		return nil, fmt.Errorf("the parent session's private temporary directory is gone (%w): fork a session that lives", err)
	}
	lock, err := os.OpenFile(filepath.Join(parent, gen+leaseInfix+self), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot keep the parent session's private temporary directory: %w", err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("the fork %s's hold on its parent's private places is held by another holder: %w", self, err)
	}
	p.lock = lock
	return p, nil
}

// Remove lets go of the private places, for a holder that ends, and
// removes them unless another holder still uses them (a fork's, or the
// parent's of a fork).
func (p *Private) Remove() {
	os.Remove(p.lock.Name())
	p.lock.Close()
	if !inUse(p.parent, p.gen) {
		removePlaces(p.parent, filepath.Dir(p.RuntimeDir), p.gen)
	}
}

// isGeneration says whether gen can name a file of its own.
func isGeneration(gen string) bool {
	return gen != "" && gen == filepath.Base(gen) && !strings.HasPrefix(gen, ".")
}

// sweep removes the private places of holders that are gone: those
// whose lock and leases no holder holds.
func sweep(parent, runtimeDir, self string) {
	entries, _ := os.ReadDir(parent)
	seen := map[string]bool{self: true}
	for _, e := range entries {
		gen, ok := strings.CutSuffix(e.Name(), ".lock")
		if !ok {
			gen, _, ok = strings.Cut(e.Name(), leaseInfix)
		}
		if !ok || seen[gen] {
			continue
		}
		seen[gen] = true
		if !inUse(parent, gen) {
			removePlaces(parent, runtimeDir, gen)
		}
	}
}

// inUse says whether a living holder holds gen's lock or a lease on its
// places. Locks nobody holds are removed on the way.
func inUse(parent, gen string) bool {
	locks, _ := filepath.Glob(filepath.Join(parent, gen+leaseInfix+"*"))
	locks = append(locks, filepath.Join(parent, gen+".lock"))
	used := false
	for _, l := range locks {
		f, err := os.OpenFile(l, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			os.Remove(l)
		} else {
			used = true
		}
		f.Close()
	}
	return used
}

// removePlaces removes gen's private places.
func removePlaces(parent, runtimeDir, gen string) {
	os.RemoveAll(filepath.Join(parent, gen))
	os.RemoveAll(filepath.Join(runtimeDir, runtimePrefix+gen))
}
