package state

import (
	"os"
	"strings"
	"testing"
	"time"
)

// BenchmarkAppendTranscript is the per-cell append of a cell's code to
// its session's transcript.
func BenchmarkAppendTranscript(b *testing.B) {
	d := benchDir(b)
	t, err := OpenTranscript(d.TranscriptPath("bench", ".py"))
	if err != nil {
		b.Fatal(err)
	}
	defer t.Close()
	code := "df = load('events.parquet')\ndf.groupby('user').size().describe()"
	b.ReportAllocs()
	for b.Loop() {
		if err := t.Append("#", "[12] 2026-01-02 03:04:05 · bench via go", code); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSaveLive rewrites a session's live record, as the daemon does
// after a cell that changed the names it holds.
func BenchmarkSaveLive(b *testing.B) {
	d := benchDir(b)
	l := Life{
		Name: "bench", Generation: "0123456789ab", Runtime: "python", Version: "3.11.2",
		Exe: "/usr/bin/python3", PID: 12345, Start: 987654, Cookie: "POLYREPL_SESSION=0123456789ab",
		Cwd: "/home/me/work", Created: time.Now(), Cells: 12,
		Names:      strings.Fields("df json np os pd plt re sys x y"),
		Transcript: "/home/me/.local/state/polyrepl/host/bench.py",
	}
	b.ReportAllocs()
	for b.Loop() {
		l.Cells++
		if err := d.SaveLive(l); err != nil {
			b.Fatal(err)
		}
	}
}

// benchDir opens a state directory in a private temporary directory (Open
// refuses a parent that others can read).
func benchDir(b *testing.B) *Dir {
	b.Helper()
	dir := b.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	d, err := Open(dir + "/state")
	if err != nil {
		b.Fatal(err)
	}
	return d
}
