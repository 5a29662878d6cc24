package session

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
)

// ask makes the running cell ask q, as a runtime does, and returns once
// the session has heard it.
func (f *fakeProc) ask(t *testing.T, q driver.Prompt) {
	t.Helper()
	f.hmu.Lock()
	a, ok := f.h.(driver.Asker)
	if ok && !f.exited {
		q.Cell = f.cell
		a.InputAsked(q)
	}
	f.hmu.Unlock()
	if !ok {
		t.Fatal("the fake's handler asks no one")
	}
	f.settle()
}

// TestQuestionBoundedAtTheDoor: a prompt of a million characters from a
// runtime that does not cut its own (a kernel's input_request, a
// terminal's prompt) reaches the reply as its head and tail, the cut said
// and its length given, and a listing, a refused exec and the record
// carry less still.
func TestQuestionBoundedAtTheDoor(t *testing.T) {
	m := newTestManager(t)
	f, ch := startBlocked(t, m, "q", req("block"))
	prompt := strings.Repeat("P", 1_000_000)
	f.ask(t, driver.Prompt{Text: prompt})
	r := await(t, ch)
	if r.err != nil || r.r.Status != api.StatusInput || r.r.Prompt == nil {
		t.Fatalf("exec: %v %+v", r.err, r.r)
	}
	p := r.r.Prompt
	if n := utf8.RuneCountInString(p.Text); n > api.PromptLimit+64 || p.Total != 1_000_000 {
		t.Errorf("the reply's prompt is %d characters, total %d; want at most %d and 1000000", n, p.Total, api.PromptLimit+64)
	}
	if !strings.Contains(p.Text, "998,000 characters cut") {
		t.Errorf("the prompt does not say its cut: %.200q", p.Text)
	}
	for _, n := range r.r.Notes {
		if len(n.Said) > api.PromptLimit+64 {
			t.Errorf("note %s says %d bytes of the prompt", n.Kind, len(n.Said))
		}
	}
	info := describe(t, m, "q")
	if in := info.Running.Input; in == nil || utf8.RuneCountInString(in.Text) > api.PromptBrief+64 || in.Total != 1_000_000 {
		t.Errorf("the listing's prompt: %+v", in)
	}
	_, err := m.Exec(context.Background(), "q", req("x"), nil)
	if e := wantCode(t, err, api.CodeInput); len(e.ErrorReply.Error) > 600 {
		t.Errorf("the refusal is %d bytes: %.300s", len(e.ErrorReply.Error), e.ErrorReply.Error)
	}
	f.Finish(driver.Result{})
}

// TestAnswerOverTheLimitRefused: an answer over api.MaxAnswerBytes is
// refused with its size and the limit, and the question still stands.
func TestAnswerOverTheLimitRefused(t *testing.T) {
	m := newTestManager(t)
	f, ch := startBlocked(t, m, "q", req("block"))
	f.ask(t, driver.Prompt{Text: "? "})
	if r := await(t, ch); r.r.Status != api.StatusInput {
		t.Fatalf("exec: %+v", r)
	}
	text := strings.Repeat("a", api.MaxAnswerBytes+5)
	_, err := m.Input(context.Background(), "q", api.InputRequest{Text: text, Client: alice}, nil)
	e := wantCode(t, err, api.CodeBadRequest)
	if want := fmt.Sprintf("the answer is %d bytes; the limit is %d bytes", len(text), api.MaxAnswerBytes); !strings.Contains(e.ErrorReply.Error, want) {
		t.Errorf("refusal %q does not say %q", e.ErrorReply.Error, want)
	}
	if info := describe(t, m, "q"); info.Running == nil || info.Running.Input == nil {
		t.Errorf("the question is gone after a refused answer: %+v", info.Running)
	}
	f.Finish(driver.Result{})
}

// TestOthersNoteBounded: with many sessions holding news, a reply lists
// api.MaxOthers of them and counts the rest; later replies list the rest,
// and none is told twice.
func TestOthersNoteBounded(t *testing.T) {
	m := newTestManager(t)
	const n = 25
	zero := 0.0
	for i := range n {
		r := req("block")
		r.Timeout = &zero
		execOK(t, m, fmt.Sprintf("s%02d", i), r)
	}
	told := map[string]bool{}
	for round, want := range []struct{ listed, more int }{{10, 15}, {10, 5}, {5, 0}, {0, 0}} {
		r := execOK(t, m, "mine", reqBy(bob, "print hi"))
		var others *api.Note
		for i := range r.Notes {
			if r.Notes[i].Kind == api.NoteOthers {
				others = &r.Notes[i]
			}
		}
		if want.listed == 0 {
			if others != nil {
				t.Errorf("round %d: told again: %+v", round, others.Others)
			}
			continue
		}
		if others == nil || len(others.Others) != want.listed || others.Count != want.more || len(others.Next) != want.listed {
			t.Fatalf("round %d: want %d listed and %d more, got %+v", round, want.listed, want.more, others)
		}
		for _, o := range others.Others {
			if told[o.Session] {
				t.Errorf("round %d: %s told twice", round, o.Session)
			}
			told[o.Session] = true
		}
	}
	if len(told) != n {
		t.Errorf("%d of %d sessions told", len(told), n)
	}
	for _, f := range fakes.in(dirsOf(m).runtime) {
		f.Finish(driver.Result{})
	}
}

// TestNamesBounded: a namespace of thousands of names, one of them
// thousands of characters long, is kept to api.MaxNames names of
// api.NameLimit characters, and a listing carries api.ListedNames of
// them with the count of all.
func TestNamesBounded(t *testing.T) {
	m := newTestManager(t)
	names := []string{strings.Repeat("n", 5000)}
	for i := range 1500 {
		names = append(names, fmt.Sprintf("v%d", i))
	}
	execOK(t, m, "ns", req("names "+strings.Join(names, " ")))
	info := describe(t, m, "ns")
	if len(info.Names) != api.ListedNames || info.NamesTotal != 1501 {
		t.Fatalf("listing: %d names, total %d", len(info.Names), info.NamesTotal)
	}
	first := info.Names[0]
	if utf8.RuneCountInString(first) > api.NameLimit+80 || !strings.Contains(first, "[name cut: 5,000 characters in all; showing the first 200]") {
		t.Errorf("a long name is not cut, or the cut not said: %.300q", first)
	}
}

// TestNoSessionHintBounded: a refusal for a name with no session names at
// most api.MaxOthers of the sessions there are, and counts the rest.
func TestNoSessionHintBounded(t *testing.T) {
	m := newTestManager(t)
	for i := range 14 {
		execOK(t, m, fmt.Sprintf("s%02d", i), req("print hi"))
	}
	_, err := m.Wait(context.Background(), "nobody", api.WaitRequest{Client: alice}, nil)
	e := wantCode(t, err, api.CodeNoSession)
	if !strings.HasSuffix(e.Hint, "s09 … and 4 more") || strings.Contains(e.Hint, "s10") {
		t.Errorf("hint %q", e.Hint)
	}
}
