package record

import (
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
)

// BenchmarkActivity is what every reply costs a full record: a client's
// cell added and finished, then what the others did told to it — the
// record at its keep of entries, most of them told already.
func BenchmarkActivity(b *testing.B) {
	r, err := Open(b.TempDir(), "s")
	if err != nil {
		b.Fatal(err)
	}
	me := api.Client{Who: "bench", How: "go"}
	other := api.Client{Who: "other", How: "cli"}
	for i := range api.RecordKeep {
		who := me
		if i%10 == 0 {
			who = other
		}
		r.Update(r.Add(api.Entry{Kind: api.EntryCell, Code: "1+1", Who: who.Who, How: who.How}), func(e *api.Entry) { e.Status = api.StatusDone })
	}
	r.Activity(me)
	b.ReportAllocs()
	for b.Loop() {
		seq := r.Add(api.Entry{Kind: api.EntryCell, Code: "1+1", Who: me.Who, How: me.How, Status: api.StatusRunning})
		r.Update(seq, func(e *api.Entry) { e.Status = api.StatusDone })
		if a := r.Activity(me); a != nil {
			b.Fatalf("told its own cell: %+v", a)
		}
	}
}
