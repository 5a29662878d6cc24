package record

import (
	"bytes"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
)

// BenchmarkOutputLarge is the record's part of a cell printing 100 KB in
// the pieces a holder sends: counted, streamed for followers, clipped for
// the entry and saved whole to the entry's file. Plain ASCII takes one
// pass (plain.Simple); the UTF-8 case is the slower path beside it.
func BenchmarkOutputLarge(b *testing.B) {
	for _, k := range []struct {
		name string
		line []byte
	}{
		{"ascii", bytes.Repeat([]byte("x"), 99)},
		{"utf8", bytes.Repeat([]byte("é"), 49)},
	} {
		b.Run(k.name, func(b *testing.B) {
			r, err := Open(b.TempDir(), "s")
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			out := bytes.Repeat(append(k.line, '\n'), 1000) // 100 KB
			b.SetBytes(int64(len(out)))
			b.ReportAllocs()
			for b.Loop() {
				seq := r.Add(api.Entry{Kind: api.EntryCell, Code: "print(x)", Status: api.StatusRunning})
				for p := out; len(p) > 0; p = p[min(len(p), 32<<10):] {
					r.Output(seq, p[:min(len(p), 32<<10)])
				}
				r.Update(seq, func(e *api.Entry) { e.Status = api.StatusDone })
				if e, _ := r.Get(seq); e.OutputCut == nil {
					b.Fatalf("100 KB kept whole in the entry: %d bytes", len(e.Output))
				}
			}
		})
	}
}
