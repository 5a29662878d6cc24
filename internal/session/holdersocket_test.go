package session

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/polyrepl/polyrepl/internal/holder"
	"github.com/polyrepl/polyrepl/internal/state"
	"github.com/polyrepl/polyrepl/internal/testenv"
)

// A live note says where its holder listens; a later daemon goes there
// only if that is a holder's socket of the user's in a private
// directory, and otherwise looks in its own holders' directory: the
// note is a file on disk a cell could have written.
func TestHolderSocketFromTheLiveNote(t *testing.T) {
	m := newTestManager(t)
	const gen = "0123456789ab"
	own := holder.SocketName(m.holdersDir, gen)
	dir := testenv.ShortDir(t)
	there := filepath.Join(dir, gen+".sock")
	ln, err := net.Listen("unix", there)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	file := filepath.Join(dir, "f", gen+".sock")
	os.Mkdir(filepath.Dir(file), 0o700)
	os.WriteFile(file, nil, 0o600)
	open := filepath.Join(dir, "open")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o755)
	inOpen := filepath.Join(open, gen+".sock")
	if ln2, err := net.Listen("unix", inOpen); err == nil {
		defer ln2.Close()
	}
	for _, c := range []struct {
		name, socket, want string
	}{
		{"none said", "", own},
		{"its own", own, own},
		{"elsewhere", there, there},
		{"relative", "x/" + gen + ".sock", own},
		{"not clean", dir + "/../" + filepath.Base(dir) + "/" + gen + ".sock", own},
		{"another generation's name", filepath.Join(dir, "ffffffffffff.sock"), own},
		{"a regular file", file, own},
		{"in a directory open to others", inOpen, own},
		{"absent", filepath.Join(dir, "gone", gen+".sock"), own},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := m.holderSocket(state.Life{Name: "s", Generation: gen, Socket: c.socket}); got != c.want {
				t.Errorf("holderSocket(%q) = %q, want %q", c.socket, got, c.want)
			}
		})
	}
}
