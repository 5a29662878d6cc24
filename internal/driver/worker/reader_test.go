package worker

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
)

// readLine keeps at most max bytes of a line however long it is, and
// says its whole length.
func TestReadLine(t *testing.T) {
	long := strings.Repeat("x", 300_000)
	in := "short\n" + long + "\n" + "last"
	br := bufio.NewReaderSize(strings.NewReader(in), 1024)
	for _, want := range []struct {
		line string
		n    int
	}{{"short", 5}, {long[:1000], 300_000}, {"last", 4}} {
		line, n, _ := readLine(br, nil, 1000)
		if string(line) != want.line || n != want.n {
			t.Errorf("readLine = %.20q (%d bytes), n %d; want %.20q, n %d", line, len(line), n, want.line, want.n)
		}
	}
}

// eventProcess is a process with only its readers, fed by the test
// through pipes as a worker would be.
func eventProcess(t *testing.T, nonce bool) (p *process, h *countingHandler, events, output *os.File) {
	t.Helper()
	evR, evW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	h = &countingHandler{done: make(chan driver.Result, 8)}
	p = &process{r: &Runtime{CellNonce: nonce}, h: h, sentinel: []byte("\x01END\x02"), ready: true,
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

func awaitResult(t *testing.T, h *countingHandler, within time.Duration) driver.Result {
	t.Helper()
	select {
	case r := <-h.done:
		return r
	case <-time.After(within):
		t.Fatalf("no result within %s", within)
		return driver.Result{}
	}
}

// A line far over maxEvent is read through without closing the channel:
// a result is reported for what it was, and the next one is taken whole.
func TestEventTooLong(t *testing.T) {
	p, h, events, output := eventProcess(t, true)
	p.inflight = &flight{cell: 1, nonce: "n1"}
	go func() {
		fmt.Fprintf(events, `{"op":"done","cell":1,"nonce":"n1","status":"error","error":{"message":"%s"}}`+"\n",
			strings.Repeat("e", maxEvent+(1<<20)))
	}()
	output.Write(p.sentinel)
	r := awaitResult(t, h, 10*time.Second)
	if r.Cell != 1 || r.Status != "error" || r.Dropped <= maxEvent || r.Error == nil {
		t.Fatalf("the too-long result: %+v", r)
	}
	p.evMu.Lock()
	p.inflight = &flight{cell: 2, nonce: "n2"}
	p.evMu.Unlock()
	fmt.Fprintln(events, `{"op":"done","cell":2,"nonce":"n2","status":"done","value":"7","flushed":true}`)
	output.Write(p.sentinel)
	if r := awaitResult(t, h, 5*time.Second); r.Cell != 2 || r.Value != "7" || r.Dropped != 0 {
		t.Fatalf("the result after: %+v", r)
	}
}

// Results that are not for the cell in flight, or lack its nonce, are
// ignored and counted; the cell's own result is delivered with the count.
func TestEventMismatch(t *testing.T) {
	p, h, events, output := eventProcess(t, true)
	p.inflight = &flight{cell: 2, nonce: "n2"}
	for _, fake := range []string{
		`{"op":"done","cell":2,"status":"done","value":"FAKE","flushed":true}`,
		`{"op":"done","cell":2,"nonce":"guess","status":"done","value":"FAKE","flushed":true}`,
		`{"op":"done","cell":3,"nonce":"n2","status":"done","value":"FAKE","flushed":true}`,
	} {
		fmt.Fprintln(events, fake)
	}
	fmt.Fprintln(events, `{"op":"done","cell":2,"nonce":"n2","status":"done","value":"real","flushed":true}`)
	output.Write(p.sentinel)
	r := awaitResult(t, h, 5*time.Second)
	if r.Value != "real" || r.Stray != 3 {
		t.Fatalf("result %+v; want value real and 3 strays", r)
	}
	// A second result for the same cell is a stray too, never a result.
	fmt.Fprintln(events, `{"op":"done","cell":2,"nonce":"n2","status":"done","value":"again","flushed":false}`)
	select {
	case r := <-h.done:
		t.Fatalf("a second result for cell 2 was delivered: %+v", r)
	case <-time.After(300 * time.Millisecond):
	}
}

// A result whose end marker never comes (the cell pointed fd 1
// elsewhere) ends the cell markerWait after it, saying so.
func TestMarkerNeverComes(t *testing.T) {
	p, h, events, output := eventProcess(t, false)
	p.inflight = &flight{cell: 1}
	start := time.Now()
	fmt.Fprintln(events, `{"op":"done","cell":1,"status":"done","value":"5","flushed":true}`)
	r := awaitResult(t, h, markerWait+5*time.Second)
	if took := time.Since(start); r.Value != "5" || !r.OutputLate || took < markerWait {
		t.Fatalf("result %+v after %s; want value 5, OutputLate, after %s", r, took, markerWait)
	}
	// The next cell ends at its marker as usual.
	p.evMu.Lock()
	p.inflight = &flight{cell: 2}
	p.evMu.Unlock()
	output.Write(append([]byte("out\n"), p.sentinel...))
	fmt.Fprintln(events, `{"op":"done","cell":2,"status":"done","value":"6","flushed":true}`)
	if r := awaitResult(t, h, 5*time.Second); r.Value != "6" || r.OutputLate {
		t.Fatalf("the next result: %+v", r)
	}
}
