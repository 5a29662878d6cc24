package api

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/bound"
)

// BenchmarkCellResultJSON encodes and decodes a reply carrying the most
// output a reply may hold, as the daemon and the client do for each call.
func BenchmarkCellResultJSON(b *testing.B) {
	r := CellResult{
		Session: "bench", Generation: "0123456789ab", Cell: 12, Status: StatusDone,
		Output:    strings.Repeat("step 12345: loss=0.123456 acc=0.987654\n", OutputLimit/40),
		Value:     "42",
		Elapsed:   0.25,
		OutputCut: &bound.Cut{Total: 100001, Head: 15000, Tail: 15000, File: "/tmp/bench-12.txt"},
		Notes:     []Note{{Kind: NoteRunning, Session: "bench", Cell: 12, Elapsed: 0.25, Next: []Action{{Do: DoWait, Session: "bench"}}}},
	}
	b.ReportAllocs()
	for b.Loop() {
		buf, err := json.Marshal(r)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(buf)))
		var back CellResult
		if err := json.Unmarshal(buf, &back); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecRequestJSON is a trivial cell's request with a typical
// environment, which every exec carries.
func BenchmarkExecRequestJSON(b *testing.B) {
	env := make([]string, 40)
	for i := range env {
		env[i] = "VARIABLE_" + strings.Repeat("X", i%8) + "=/usr/local/bin:/usr/bin:/bin:/home/me/.local/bin"
	}
	req := ExecRequest{Code: "1+1", Spawn: Spawn{Cwd: "/home/me/work", Env: env}, Client: Client{Who: "me", How: "cli"}}
	b.ReportAllocs()
	for b.Loop() {
		buf, err := json.Marshal(req)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(buf)))
		var back ExecRequest
		if err := json.Unmarshal(buf, &back); err != nil {
			b.Fatal(err)
		}
	}
}
