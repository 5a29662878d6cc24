package render

import (
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
)

// The creation line says how a life stands to the one before it under
// the same name: started as it after a death or a kill, or replacing its
// runtime when the call named another.
func TestCreatedSaysTheLifeBefore(t *testing.T) {
	base := api.Note{Kind: api.NoteCreated, Session: "rr", Runtime: "r", Version: "4.2.2", Cwd: "/w"}
	for _, tc := range []struct {
		again           bool
		ended, replaced string
		want            string
	}{
		{want: "Created session 'rr' (r 4.2.2, cwd /w)."},
		{again: true, want: "Created session 'rr' again, started as the life that died (r 4.2.2, cwd /w)."},
		{again: true, ended: api.ByKill, want: "Created session 'rr' again, started as the life before it (r 4.2.2, cwd /w)."},
		{replaced: "python", want: "Created session 'rr' (r 4.2.2, cwd /w). It replaces the python session of that name."},
	} {
		n := base
		n.Again, n.Ended, n.Replaced = tc.again, tc.ended, tc.replaced
		if got := Note(n, People); got != tc.want {
			t.Errorf("again %v, ended %q, replaced %q:\n got %q\nwant %q", tc.again, tc.ended, tc.replaced, got, tc.want)
		}
	}
}
