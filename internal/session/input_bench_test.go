package session

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	_ "github.com/polyrepl/polyrepl/internal/driver/python" // the real Python worker
)

// BenchmarkInputAsked times a Python cell's question reaching its caller
// (exec of input() returning with status input: the issue asks under
// 100 ms) and the answer's round trip (input returning the cell's value),
// through a real worker and an in-process holder.
func BenchmarkInputAsked(b *testing.B) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		b.Skip("needs /usr/bin/python3")
	}
	m := newTestManager(b)
	ctx := context.Background()
	spawn := api.Spawn{Runtime: "python", Exe: "/usr/bin/python3", Cwd: "/", Env: os.Environ()}
	wait := 10.0
	if _, err := m.Exec(ctx, "in", api.ExecRequest{Code: "1", Client: alice, Spawn: spawn, Timeout: &wait}, nil); err != nil {
		b.Fatal(err)
	}
	var asked, answered time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		r, err := m.Exec(ctx, "in", api.ExecRequest{Code: "input('q? ')", Client: alice, Timeout: &wait}, nil)
		if err != nil || r.Status != api.StatusInput {
			b.Fatalf("exec: %v %+v", err, r)
		}
		mid := time.Now()
		r, err = m.Input(ctx, "in", api.InputRequest{Text: "x", Client: alice, Timeout: &wait}, nil)
		if err != nil || r.Value != "'x'" {
			b.Fatalf("input: %v %+v", err, r)
		}
		asked += mid.Sub(start)
		answered += time.Since(mid)
	}
	b.ReportMetric(float64(asked.Microseconds())/float64(b.N), "µs-asked/op")
	b.ReportMetric(float64(answered.Microseconds())/float64(b.N), "µs-answered/op")
}
