package session

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	_ "github.com/polyrepl/polyrepl/internal/driver/gnuplot" // the real gnuplot
	_ "github.com/polyrepl/polyrepl/internal/driver/python"  // the real Python worker
	_ "github.com/polyrepl/polyrepl/internal/driver/r"       // the real R worker
)

// BenchmarkInputAsked times a cell's question reaching its caller (exec
// of a read returning with status input: the issue asks under 100 ms)
// and the answer's round trip (input returning the cell's value),
// through a real worker and an in-process holder: Python, whose worker
// says it asks, and R, seen blocked on its console by the kernel.
func BenchmarkInputAsked(b *testing.B) {
	for _, c := range []struct {
		runtime, exe, code, value string
	}{
		{"python", "/usr/bin/python3", "input('q? ')", "'x'"},
		{"r", "/usr/bin/R", `readline("q? ")`, `[1] "x"`},
		{"gnuplot", "/usr/bin/gnuplot", `pause -1 "q? "`, ""},
	} {
		b.Run(c.runtime, func(b *testing.B) {
			if _, err := os.Stat(c.exe); err != nil {
				b.Skipf("needs %s", c.exe)
			}
			m := newTestManager(b)
			ctx := context.Background()
			spawn := api.Spawn{Runtime: c.runtime, Exe: c.exe, Cwd: "/", Env: os.Environ()}
			wait := 10.0
			if _, err := m.Exec(ctx, "in", api.ExecRequest{Code: "1", Client: alice, Spawn: spawn, Timeout: &wait}, nil); err != nil {
				b.Fatal(err)
			}
			var asked, answered time.Duration
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				r, err := m.Exec(ctx, "in", api.ExecRequest{Code: c.code, Client: alice, Timeout: &wait}, nil)
				if err != nil || r.Status != api.StatusInput {
					b.Fatalf("exec: %v %+v", err, r)
				}
				mid := time.Now()
				r, err = m.Input(ctx, "in", api.InputRequest{Text: "x", Client: alice, Timeout: &wait}, nil)
				if err != nil || r.Value != c.value {
					b.Fatalf("input: %v %+v", err, r)
				}
				asked += mid.Sub(start)
				answered += time.Since(mid)
			}
			b.ReportMetric(float64(asked.Microseconds())/float64(b.N), "µs-asked/op")
			b.ReportMetric(float64(answered.Microseconds())/float64(b.N), "µs-answered/op")
		})
	}
}
