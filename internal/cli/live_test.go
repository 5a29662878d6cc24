package cli

import (
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
)

// newTestLive is a liveCell writing to builders, its follower already
// gone: the test hands it the record's events itself.
func newTestLive(out, errs *strings.Builder) *liveCell {
	l := &liveCell{e: &env{stdout: out, stderr: errs}, gen: "g", cell: 1, line: liveLine{tty: true}, done: make(chan struct{})}
	l.cancel = func() {}
	close(l.done)
	return l
}

// The record's events draw the cell's output as it prints, a progress
// bar in place; the last reply adds only what the record did not show.
func TestLiveCell(t *testing.T) {
	entry := func(status string) api.RecordEvent {
		return api.RecordEvent{Event: api.EventEntry, Entry: &api.Entry{Seq: 7, Kind: api.EntryCell, Generation: "g", Cell: 1, Status: status}}
	}
	chunk := func(off int, text, pending string) api.RecordEvent {
		return api.RecordEvent{Event: api.EventOutput, Output: &api.OutputChunk{Seq: 7, Offset: off, Text: text, Pending: pending}}
	}
	end := api.RecordEvent{Event: api.EventEnd, Entry: &api.Entry{Seq: 7, Kind: api.EntryCell, Generation: "g", Cell: 1, Status: api.StatusDone}}
	done := api.CellResult{Cell: 1, Status: api.StatusDone, Output: "a\n100%\nb", Value: "2", Display: "Out[1]: 2"}

	for _, tc := range []struct {
		name   string
		events []api.RecordEvent
		reply  api.CellResult
		screen string // what standard output shows
		output string // the reply's output left to print
	}{{
		name:   "all streamed",
		events: []api.RecordEvent{entry(api.StatusRunning), chunk(0, "a\n", "5%"), chunk(2, "", "50%"), chunk(2, "100%\n", ""), chunk(7, "b", ""), end},
		reply:  done,
		screen: "a\n5%\r\x1b[K50%\r\x1b[K100%\nb\n",
	}, {
		name:   "the record never showed it",
		events: nil,
		reply:  done,
		screen: "a\n100%\nb\n",
	}, {
		name:   "the entry came whole",
		events: []api.RecordEvent{{Event: api.EventEntry, Entry: &api.Entry{Seq: 7, Kind: api.EntryCell, Generation: "g", Cell: 1, Status: api.StatusDone, Output: "a\n100%\nb"}}},
		reply:  done,
		screen: "a\n100%\nb\n",
	}, {
		name:   "running, the record behind the reply",
		events: []api.RecordEvent{entry(api.StatusRunning), chunk(0, "a\n", "10")},
		reply:  api.CellResult{Cell: 1, Status: api.StatusRunning, Output: "a\n100%\nb"},
		screen: "a\n10\r\x1b[K100%\nb\n",
	}, {
		name:   "another cell's output",
		events: []api.RecordEvent{entry(api.StatusRunning), {Event: api.EventOutput, Output: &api.OutputChunk{Seq: 6, Text: "not ours\n"}}, chunk(0, "a\n100%\nb", ""), end},
		reply:  done,
		screen: "a\n100%\nb\n",
	}} {
		var out, errs strings.Builder
		l := newTestLive(&out, &errs)
		l.from = 0
		for _, ev := range tc.events {
			l.event(ev)
		}
		r := l.finish(tc.reply)
		if out.String() != tc.screen {
			t.Errorf("%s: the screen shows %q, want %q", tc.name, out.String(), tc.screen)
		}
		if r.Output != tc.output || r.Value != tc.reply.Value {
			t.Errorf("%s: the reply left output %q, value %q; want %q and the value", tc.name, r.Output, r.Value, tc.output)
		}
	}
}

// A follower that fell behind says so, on standard error.
func TestLiveCellSkipped(t *testing.T) {
	var out, errs strings.Builder
	l := newTestLive(&out, &errs)
	l.event(api.RecordEvent{Event: api.EventEntry, Entry: &api.Entry{Seq: 3, Kind: api.EntryCell, Generation: "g", Cell: 1, Status: api.StatusRunning}})
	l.event(api.RecordEvent{Event: api.EventOutput, Output: &api.OutputChunk{Seq: 3, Offset: 0, Text: "one\n"}})
	l.event(api.RecordEvent{Event: api.EventOutput, Output: &api.OutputChunk{Seq: 3, Offset: 100, Skipped: 96, File: "/w.txt", Text: "late\n"}})
	if out.String() != "one\nlate\n" || !strings.Contains(errs.String(), "96 characters not shown") || !strings.Contains(errs.String(), "/w.txt") {
		t.Errorf("out %q, errors %q", out.String(), errs.String())
	}
}

// A runtime that prints its own error: the reply's error is not shown
// again when the record showed it.
func TestLiveCellOwnError(t *testing.T) {
	var out, errs strings.Builder
	l := newTestLive(&out, &errs)
	l.event(api.RecordEvent{Event: api.EventEntry, Entry: &api.Entry{Seq: 3, Kind: api.EntryCell, Generation: "g", Cell: 1, Status: api.StatusRunning}})
	l.event(api.RecordEvent{Event: api.EventOutput, Output: &api.OutputChunk{Seq: 3, Text: "Error: object 'y' not found\n"}})
	l.event(api.RecordEvent{Event: api.EventEnd, Entry: &api.Entry{Seq: 3, Kind: api.EntryCell, Generation: "g", Cell: 1, Status: api.StatusError}})
	r := l.finish(api.CellResult{Cell: 1, Status: api.StatusError, Output: "Error: object 'y' not found\n", Error: &api.CellError{Message: "Error: object 'y' not found"}})
	if r.Error != nil || r.Output != "" {
		t.Errorf("the error shown twice: %+v", r)
	}
}
