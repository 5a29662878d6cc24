package worker

import (
	"bytes"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
)

// countingHandler counts output bytes and signals each cell's end.
type countingHandler struct {
	n    atomic.Int64
	done chan driver.Result
}

func (h *countingHandler) Output(p []byte)          { h.n.Add(int64(len(p))) }
func (h *countingHandler) CellDone(r driver.Result) { h.done <- r }
func (h *countingHandler) Exited(driver.Exit)       {}

// BenchmarkReadOutput is the daemon side of a cell's output without
// Python: 64 KiB pipe writes scanned for the end marker and passed to the
// handler, then the marker and the cell's result, as for a cell printing
// 100 MB.
func BenchmarkReadOutput(b *testing.B) {
	const total = 100 << 20
	chunk := bytes.Repeat([]byte("step 12345: loss=0.123456 acc=0.987654\n"), 64<<10/40)
	sentinel := []byte("\x01polyrepl-end-0123456789abcdef01234567\x02")
	b.SetBytes(total)
	for b.Loop() {
		r, w, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		h := &countingHandler{done: make(chan driver.Result, 1)}
		p := &process{h: h, sentinel: sentinel, ready: true, late: time.NewTimer(time.Hour),
			doneSent: make(chan struct{}, 1), evEOF: make(chan struct{}), outEOF: make(chan struct{})}
		p.pending = &driver.Result{Cell: 1, Status: "done"}
		go p.readOutput(r)
		for sent := 0; sent < total; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := w.Write(sentinel); err != nil {
			b.Fatal(err)
		}
		<-h.done
		w.Close()
		<-p.outEOF
	}
}
