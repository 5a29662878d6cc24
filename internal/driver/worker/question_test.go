package worker

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
)

// askingHandler is a handler that takes questions.
type askingHandler struct {
	countingHandler
	asks chan driver.Prompt
}

func (h *askingHandler) InputAsked(q driver.Prompt) { h.asks <- q }

// askingProcess is eventProcess with a handler that takes questions.
func askingProcess(t *testing.T) (p *process, h *askingHandler, events, output *os.File) {
	t.Helper()
	evR, evW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	h = &askingHandler{countingHandler: countingHandler{done: make(chan driver.Result, 8)}, asks: make(chan driver.Prompt, 8)}
	p = &process{r: &Runtime{CellNonce: true}, h: h, sentinel: []byte("\x01END\x02"), ready: true,
		helloed: make(chan struct{}), doneSent: make(chan struct{}, 1), evEOF: make(chan struct{}), outEOF: make(chan struct{})}
	go p.readEvents(evR)
	go p.readOutput(outR)
	t.Cleanup(func() {
		evW.Close()
		outW.Close()
		<-p.evEOF
		<-p.outEOF
	})
	return p, h, evW, outW
}

func awaitAsk(t *testing.T, h *askingHandler) driver.Prompt {
	t.Helper()
	select {
	case q := <-h.asks:
		return q
	case <-time.After(10 * time.Second):
		t.Fatal("no question within 10s")
		return driver.Prompt{}
	}
}

// A question whose event is over maxEvent (a worker that does not cut
// its prompt) is still asked, saying what happened, when its head shows
// it is the cell's: the cell waits for an answer, and a stray would leave
// it running with nobody told.
func TestQuestionTooLongIsAsked(t *testing.T) {
	p, h, events, output := askingProcess(t)
	p.inflight = &flight{cell: 4, nonce: "n4"}
	go fmt.Fprintf(events, `{"op":"input","cell":4,"nonce":"n4","flushed":true,"password":false,"shown":false,"prompt":"%s"}`+"\n",
		strings.Repeat("P", maxEvent+(1<<20)))
	output.Write(p.sentinel)
	q := awaitAsk(t, h)
	if q.Cell != 4 || !strings.Contains(q.Text, "too long to take") || !strings.Contains(q.Text, "bytes") {
		t.Fatalf("the question: %+v", q)
	}
}

// A question of a million characters within maxEvent (a worker of an
// older version) is cut to api.PromptLimit where the driver takes it;
// one its worker cut keeps the total the worker said.
func TestQuestionPromptBounded(t *testing.T) {
	p, h, events, _ := askingProcess(t)
	for i, c := range []struct {
		prompt    string
		total     int
		wantTotal int
	}{
		{strings.Repeat("P", 1_000_000), 0, 1_000_000},
		{strings.Repeat("Q", 1000) + "\n[… 4,998,000 characters cut …]\n" + strings.Repeat("Q", 1000), 5_000_000, 5_000_000},
		{"Name? ", 0, 0},
	} {
		cell, nonce := i+1, fmt.Sprintf("n%d", i+1)
		p.evMu.Lock()
		p.inflight = &flight{cell: cell, nonce: nonce}
		p.evMu.Unlock()
		total := ""
		if c.total > 0 {
			total = fmt.Sprintf(`,"prompt_total":%d`, c.total)
		}
		fmt.Fprintf(events, `{"op":"input","cell":%d,"nonce":%q,"flushed":false%s,"prompt":%q}`+"\n", cell, nonce, total, c.prompt)
		q := awaitAsk(t, h)
		if n := utf8.RuneCountInString(q.Text); n > api.PromptLimit+64 || q.Total != c.wantTotal {
			t.Errorf("case %d: %d characters, total %d; want at most %d, total %d", i, n, q.Total, api.PromptLimit+64, c.wantTotal)
		}
		if c.wantTotal == 0 && q.Text != c.prompt {
			t.Errorf("case %d: a short prompt changed: %q", i, q.Text)
		}
	}
}

// TestEventHeadQuestion: the head of a question event, in the order the
// Python worker sends it, says all a question needs but its prompt.
func TestEventHeadQuestion(t *testing.T) {
	line := `{"op":"input","cell":3,"nonce":"abc","flushed":true,"password":true,"shown":false,"prompt":"PPPP`
	h := eventHead([]byte(line))
	if h.op != "input" || h.cell != 3 || h.nonce != "abc" || !h.flushed || !h.password || h.shown {
		t.Errorf("eventHead = %+v", h)
	}
}
