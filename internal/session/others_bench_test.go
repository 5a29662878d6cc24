package session

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkOthersNotes is what every reply pays to tell of the other
// sessions: here ten idle ones, read at a glance (no /proc, no holder).
func BenchmarkOthersNotes(b *testing.B) {
	m := newTestManager(b)
	for i := range 10 {
		if _, err := m.Exec(context.Background(), fmt.Sprintf("s%d", i), req("x = 1"), nil); err != nil {
			b.Fatal(err)
		}
	}
	m.othersNotes("s0", alice)
	b.ReportAllocs()
	for b.Loop() {
		if n := m.othersNotes("s0", alice); n != nil {
			b.Fatalf("idle sessions told of: %+v", n)
		}
	}
}
