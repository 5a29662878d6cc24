package render

import (
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
)

// Split sends the cell's output and value to one writer and every word
// of polyrepl's (notes, activity, cuts, figures, the error) to the other,
// in Result's order; to one writer it is Result.
func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name       string
		r          api.CellResult
		out, notes string
	}{
		{
			name: "created, output, value",
			r: api.CellResult{Session: "s", Cell: 1, Status: api.StatusDone, Output: "1", Value: "2", Display: "Out[1]: 2",
				Notes: []api.Note{{Kind: api.NoteCreated, Session: "s", Runtime: "python", Cwd: "/w"}}},
			out:   "1\nOut[1]: 2\n",
			notes: "[Created session 's' (python, cwd /w).]\n",
		},
		{
			name: "an error, a cut, a figure, still running",
			r: api.CellResult{Session: "s", Cell: 2, Status: api.StatusError, Output: "partial\n",
				OutputCut: &bound.Cut{Total: 100, Head: 3, Tail: 4, File: "/o.txt"},
				Rich:      []api.Rich{{MIME: "image/png", Width: 2, Height: 3, Bytes: 10, File: "/f.png"}},
				Error:     &api.CellError{Type: "ValueError", Message: "bad", Traceback: "Traceback …\nValueError: bad\n"}},
			out:   "partial\n",
			notes: "[output cut: 100 characters in all; showing the first 3 and the last 4; the whole output is in /o.txt]\n[image 1: 2×3 PNG, 10 B → /f.png]\nTraceback …\nValueError: bad\n",
		},
		{
			name:  "nothing of the cell's",
			r:     api.CellResult{Session: "s", Cell: 3, Status: api.StatusRunning, Notes: []api.Note{{Kind: api.NoteRunning, Session: "s", Cell: 3, Elapsed: 2, Next: []api.Action{{Do: api.DoWait, Session: "s"}}}}},
			out:   "",
			notes: "still running",
		},
	} {
		var out, notes, one strings.Builder
		var both strings.Builder // both writers' text as written, in order: a terminal
		Split(tee{&out, &both}, tee{&notes, &both}, tc.r, PeopleStyle)
		Result(&one, tc.r, PeopleStyle)
		if out.String() != tc.out {
			t.Errorf("%s: out %q, want %q", tc.name, out.String(), tc.out)
		}
		if !strings.Contains(notes.String(), tc.notes) {
			t.Errorf("%s: notes %q, want %q", tc.name, notes.String(), tc.notes)
		}
		if tc.out != "" && strings.Contains(notes.String(), tc.out) {
			t.Errorf("%s: the cell's output is in the notes too: %q", tc.name, notes.String())
		}
		if both.String() != one.String() {
			t.Errorf("%s: Split's writes, in order, read\n%s\nResult reads\n%s", tc.name, both.String(), one.String())
		}
	}
}

// tee writes to two builders.
type tee struct{ a, b *strings.Builder }

func (t tee) Write(p []byte) (int, error) {
	t.a.Write(p)
	return t.b.Write(p)
}
