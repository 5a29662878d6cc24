package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/polyrepl/polyrepl/internal/api"
)

// A Grant is one place a confined runtime may use, and how: the unit of
// Landlock's rules (a path and everything beneath it), and of the
// Seatbelt profile's allowances.
type Grant struct {
	Path  string `json:"path"`
	Dir   bool   `json:"dir,omitempty"`   // a directory: its tree, and directory rights
	Write bool   `json:"write,omitempty"` // also write, create, remove, rename
	Dev   bool   `json:"dev,omitempty"`   // also ioctl on the device
	// List grants listing a directory's tree, and nothing else: the
	// workspace that holds a hidden place is granted entry by entry, and
	// this lets its own listing (ls, a glob, Octave's load path) work.
	// The names in a hidden place under it can be listed; its files
	// still cannot be read or written.
	List bool `json:"list,omitempty"`
}

// Tree is what planning reads of the file system; a test gives a fake one.
type Tree interface {
	// ReadDir lists a directory's entries, with their types.
	ReadDir(dir string) ([]fs.DirEntry, error)
	// Stat follows symlinks.
	Stat(path string) (fs.FileInfo, error)
	// Resolve is the path with every symlink in it resolved.
	Resolve(path string) (string, error)
}

// OSTree is the real file system.
type OSTree struct{}

func (OSTree) ReadDir(dir string) ([]fs.DirEntry, error) { return os.ReadDir(dir) }
func (OSTree) Stat(path string) (fs.FileInfo, error)     { return os.Stat(path) }
func (OSTree) Resolve(path string) (string, error)       { return filepath.EvalSymlinks(path) }

// Devices a runtime uses besides reading: written, and those that are
// terminals also ioctl'd (a REPL on a PTY asks its size, its modes).
var devices = []Grant{
	{Path: "/dev/null", Write: true, Dev: true},
	{Path: "/dev/zero", Write: true, Dev: true},
	{Path: "/dev/full", Write: true, Dev: true},
	{Path: "/dev/random", Write: true, Dev: true},
	{Path: "/dev/urandom", Write: true, Dev: true},
	{Path: "/dev/tty", Write: true, Dev: true},
	{Path: "/dev/ptmx", Write: true, Dev: true},
	{Path: "/dev/pts", Dir: true, Write: true, Dev: true},
	{Path: "/dev/shm", Dir: true, Write: true},
}

// Plan lists what s grants, on the file system t: Landlock only
// allows, so "read everything but the hidden places" becomes the
// siblings of each hidden place and of every directory above it, down
// from /; a writable root that holds a hidden place likewise becomes
// its other entries. A symlink among them that leads into a hidden
// place, or above one, is left out (a rule would follow it); one that
// does not is granted where it leads. A directory above a hidden place
// is not itself granted, so it cannot be listed — unless it is the cwd
// or a listed place (Grant.List).
func Plan(s Spec, t Tree) []Grant {
	p := planner{t: t, hidden: s.Hidden}
	p.expand("/", false, false)
	for _, d := range s.Policy.Readable {
		p.expand(d, false, true)
	}
	cwdFirst := s.Policy.Policy == api.SandboxWorkspaceWrite && s.Cwd != ""
	for i, d := range WritableRoots(s.Policy, s.Cwd) {
		// The cwd is the workspace, not a listed place: inside a hidden
		// place it stays hidden.
		p.expand(d, true, i > 0 || !cwdFirst)
	}
	for _, d := range []string{s.Tmp, s.RuntimeDir} {
		if d != "" {
			p.expand(d, true, true)
		}
	}
	// The workspace and the listed places are listed whole, even when
	// they hold a hidden place.
	for _, d := range append(append([]string{s.Cwd}, WritableRoots(s.Policy, "")...), s.Policy.Readable...) {
		if r, err := t.Resolve(d); err == nil && !p.isHidden(r) && p.holdsHidden(r) {
			p.out = append(p.out, Grant{Path: r, Dir: true, List: true})
		}
	}
	for _, g := range devices {
		if fi, err := t.Stat(g.Path); err == nil && fi.IsDir() == g.Dir {
			p.out = append(p.out, g)
		}
	}
	return p.out
}

type planner struct {
	t      Tree
	hidden []string
	out    []Grant
}

// isHidden says whether path is a hidden place or inside one.
func (p *planner) isHidden(path string) bool {
	return slices.ContainsFunc(p.hidden, func(h string) bool { return Under(path, h) })
}

// holdsHidden says whether a hidden place lies strictly inside dir.
func (p *planner) holdsHidden(dir string) bool {
	return slices.ContainsFunc(p.hidden, func(h string) bool { return h != dir && Under(h, dir) })
}

// expand grants root (write: also writing), or, when a hidden place
// lies inside it, its entries but that place. A root inside a hidden
// place is granted only when it was listed by name (listed).
func (p *planner) expand(root string, write, listed bool) {
	if r, err := p.t.Resolve(root); err == nil {
		root = r
	}
	if !listed && p.isHidden(root) {
		return
	}
	fi, err := p.t.Stat(root)
	if err != nil {
		return
	}
	p.walk(root, fi.IsDir(), write)
}

func (p *planner) walk(path string, dir, write bool) {
	if !dir || !p.holdsHidden(path) {
		p.out = append(p.out, Grant{Path: path, Dir: dir, Write: write})
		return
	}
	entries, err := p.t.ReadDir(path)
	if err != nil {
		return
	}
	for _, e := range entries {
		c := filepath.Join(path, e.Name())
		if p.isHidden(c) {
			continue
		}
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			to, err := p.t.Resolve(c)
			if err != nil || p.isHidden(to) || p.holdsHidden(to) {
				continue
			}
			fi, err := p.t.Stat(c)
			if err != nil {
				continue
			}
			p.out = append(p.out, Grant{Path: c, Dir: fi.IsDir(), Write: write})
		case e.IsDir():
			p.walk(c, true, write)
		default:
			p.out = append(p.out, Grant{Path: c, Write: write})
		}
	}
}
