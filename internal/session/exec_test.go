package session

import (
	"context"
	"slices"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
)

// A cell's output, value, error and status come back in its reply.
func TestExecReturnsWhatTheCellDid(t *testing.T) {
	m := newTestManager(t)
	for _, tc := range []struct {
		code      string
		status    string
		output    string
		value     string
		errorType string
	}{
		{code: "print hello", status: api.StatusDone, output: "hello\n"},
		{code: "value 42", status: api.StatusDone, value: "42"},
		{code: "print a\nprint b\nvalue c", status: api.StatusDone, output: "a\nb\n", value: "c"},
		{code: "print oops\nraise ValueError bad", status: api.StatusError, output: "oops\n", errorType: "ValueError"},
	} {
		r := execOK(t, m, "s", req(tc.code))
		if r.Status != tc.status || r.Output != tc.output || r.Value != tc.value {
			t.Errorf("%q: got status %q, output %q, value %q; want %q, %q, %q", tc.code, r.Status, r.Output, r.Value, tc.status, tc.output, tc.value)
		}
		gotType := ""
		if r.Error != nil {
			gotType = r.Error.Type
		}
		if gotType != tc.errorType {
			t.Errorf("%q: got error type %q, want %q", tc.code, gotType, tc.errorType)
		}
		if r.Session != "s" {
			t.Errorf("%q: reply names session %q", tc.code, r.Session)
		}
	}
}

// Each cell of a session gets the next number, in the reply and in the
// listing; the first exec creates the session and says so.
func TestCellNumbersIncrement(t *testing.T) {
	m := newTestManager(t)
	var gen string
	for n := 1; n <= 3; n++ {
		r := execOK(t, m, "s", req("value x"))
		if r.Cell != n {
			t.Errorf("cell %d: reply says cell %d", n, r.Cell)
		}
		if created := count(r.Notes, api.NoteCreated); created != boolInt(n == 1) {
			t.Errorf("cell %d: %d notes of kind created, notes %v", n, created, kinds(r.Notes))
		}
		if n == 1 {
			gen = r.Generation
		} else if r.Generation != gen {
			t.Errorf("cell %d: generation changed from %s to %s", n, gen, r.Generation)
		}
	}
	i := describe(t, m, "s")
	if i.Cells != 3 || i.State != Idle || i.Generation != gen || i.Runtime != fakeRuntime {
		t.Errorf("describe: cells %d, state %q, generation %s, runtime %q", i.Cells, i.State, i.Generation, i.Runtime)
	}
	if n := startedIn(m); n != 1 {
		t.Errorf("%d runtime processes started for one session", n)
	}
}

// The names a cell leaves are the session's, listed and described.
func TestNamesAreListed(t *testing.T) {
	m := newTestManager(t)
	execOK(t, m, "s", req("names x y"))
	if i := describe(t, m, "s"); !slices.Equal(i.Names, []string{"x", "y"}) {
		t.Errorf("names %v, want [x y]", i.Names)
	}
	// A cell that reports no names leaves them as they were.
	execOK(t, m, "s", req("print hi"))
	if i := describe(t, m, "s"); !slices.Equal(i.Names, []string{"x", "y"}) {
		t.Errorf("after a cell without names: %v, want [x y]", i.Names)
	}
}

// Output printed while a cell runs but before its caller asks again is
// all in the reply, once.
func TestOutputWhileRunningComesInTheReply(t *testing.T) {
	m := newTestManager(t)
	f, ch := startBlocked(t, m, "s", req("print one\nblock"))
	f.Print("two\n")
	f.Finish(driver.Result{Value: "3"})
	r := await(t, ch)
	if r.err != nil || r.r.Output != "one\ntwo\n" || r.r.Value != "3" || r.r.Status != api.StatusDone {
		t.Fatalf("got %+v, %v", r.r, r.err)
	}
	w, err := m.Wait(context.Background(), "s", api.WaitRequest{Client: alice}, nil)
	if err != nil || w.Output != "" || count(w.Notes, api.NoteCollected) != 1 {
		t.Errorf("wait after the reply: output %q, notes %v, err %v; want nothing new", w.Output, kinds(w.Notes), err)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
