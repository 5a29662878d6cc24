package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The generated part is rewritten; what a person wrote outside it stays.
func TestWriteReportKeepsWhatWasTried(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docs", "benchmarks.md")
	if err := writeReport(path, "first run\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "first run") || !strings.Contains(string(b), triedHeading) {
		t.Fatalf("new file lacks the generated part or the heading:\n%s", b)
	}
	mine := strings.Replace(string(b), triedBody, "\n\nProfiled the daemon; moved the live record off the cell path.\n", 1)
	if err := os.WriteFile(path, []byte("Intro by a person.\n\n"+mine), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeReport(path, "second run\n"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	got := string(b)
	for _, want := range []string{"Intro by a person.", "second run", "moved the live record off the cell path"} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "first run") || strings.Count(got, beginMarker) != 1 || strings.Count(got, triedHeading) != 1 {
		t.Errorf("the old generated part was not replaced exactly once:\n%s", got)
	}

	// A file without markers keeps its "What was tried" section.
	if err := os.WriteFile(path, []byte("old table\n\n"+triedHeading+"\n\nnotes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeReport(path, "third run\n"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	got = string(b)
	if strings.Contains(got, "old table") || !strings.Contains(got, "third run") || !strings.Contains(got, triedHeading+"\n\nnotes\n") {
		t.Errorf("unexpected report:\n%s", got)
	}
}

func TestPairedRatio(t *testing.T) {
	nan := nanSeries(1)[0]
	a := series{2, 4, nan, 9}
	b := series{1, 1, 5, 3}
	if r := pairedRatio(a, b); r != 3 {
		t.Errorf("pairedRatio = %v, want 3 (the median of 2, 4 and 3)", r)
	}
	if q := quantile([]float64{5, 1, 4, 2, 3}, 0.5); q != 3 {
		t.Errorf("median = %v, want 3", q)
	}
	if q := quantile([]float64{5, 1, 4, 2, 3}, 0.99); q != 5 {
		t.Errorf("p99 = %v, want 5", q)
	}
}
