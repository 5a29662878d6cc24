package session

import (
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/polyrepl/polyrepl/internal/api"
)

// TestFinishedCellsLetGo: once later cells ran, a finished cell is
// garbage — with its reply's output buffers, ~180 KB for a cell whose
// output was spooled — whatever the record keeps of it. (The record's
// entry once pointed into the cell for its end time, so a daemon grew by
// every big cell for as long as the record kept its 300 entries.)
func TestFinishedCellsLetGo(t *testing.T) {
	m := newTestManager(t)
	big := req("print " + strings.Repeat("x", 2*api.OutputLimit))
	if r := execOK(t, m, "s", big); r.OutputCut == nil {
		t.Fatalf("the cell's output was not cut: %+v", r.OutputCut)
	}
	s := m.get("s")
	s.mu.Lock()
	first := weak.Make(s.cur)
	s.mu.Unlock()
	for range 3 {
		execOK(t, m, "s", big)
	}
	runtime.GC()
	if first.Value() != nil {
		t.Fatal("the first cell is still reachable after three more cells: something keeps a pointer into it")
	}
}
