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

// BenchmarkList is `sessions` with 200 sessions and their memory: one
// scan of the process table for them all (it was one each: 9.6 s for
// 500 sh sessions).
func BenchmarkList(b *testing.B) {
	m := newTestManager(b)
	const n = 200
	for i := range n {
		if _, err := m.Exec(context.Background(), fmt.Sprintf("s%d", i), req("x = 1"), nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if l := m.List(true); len(l) != n {
			b.Fatalf("listed %d sessions, want %d", len(l), n)
		}
	}
}
