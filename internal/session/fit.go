package session

import (
	"fmt"
	"os"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
)

// fitLocked holds a reply's output and value to the bounds its asker
// takes inline (api.Client's Output and Value), below the daemon's own:
// head and tail, the cut counted from the whole, and the whole saved
// where no file holds it yet, so that nothing a smaller bound cuts is
// lost. A value the runtime already cut keeps the total it counted.
//
// part, if not nil, is where the reply's whole output already is (the
// bytes of the cell's whole-output file it was read from): a cut of it
// points there, and saves no copy.
func (s *Session) fitLocked(r *api.CellResult, c *cell, asker api.Client, part *bound.Cut) {
	var err error
	if asker.Output > 0 {
		had := r.OutputCut
		if had == nil {
			had = part
		}
		r.Output, r.OutputCut, err = s.fit(r.Output, had, asker.Output, fmt.Sprintf("%s-%d-*.txt", s.Name, c.n))
		if err != nil {
			r.Notes = append(r.Notes, api.Note{Kind: api.NoteSave, Session: s.Name, Cell: c.n, Saved: api.SavedOutput, Err: err.Error()})
		}
	}
	if asker.Value > 0 && r.Value != "" {
		before := r.Value
		r.Value, r.ValueCut, err = s.fit(r.Value, r.ValueCut, asker.Value, fmt.Sprintf("%s-%d-value-*.txt", s.Name, c.n))
		if err != nil {
			r.Notes = append(r.Notes, api.Note{Kind: api.NoteSave, Session: s.Name, Cell: c.n, Saved: api.SavedValue, Err: err.Error()})
		}
		if r.Value != before && r.Display != "" {
			r.Display = s.facts().Display(c.n, c.result.ValueName, r.Value)
		}
	}
}

// fit cuts text to limit characters at line ends, as every cut is; when
// it cuts a text no file holds (cut is nil: the text is whole), it saves
// the whole to a new file in the output directory first.
func (s *Session) fit(text string, cut *bound.Cut, limit int, pattern string) (string, *bound.Cut, error) {
	if cut != nil {
		// Cut from the whole: one marker, counting what the whole lost.
		short, c := bound.Recut(text, cut, limit)
		if c == cut && cut.Head+cut.Tail == 0 {
			return text, nil, nil // a part that fits whole: nothing was cut
		}
		return short, c, nil
	}
	short, c := bound.HeadTailLines(text, limit)
	if c == nil {
		return text, cut, nil
	}
	f, err := os.CreateTemp(s.m.outputDir, pattern)
	if err == nil {
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
		} else {
			c.File = f.Name()
		}
	}
	if err != nil {
		err = fmt.Errorf("save the whole text in %s: %w; only the head and tail are kept (check free space and permissions there)", s.m.outputDir, err)
	}
	return short, c, err
}
