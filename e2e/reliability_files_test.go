// The reliability suite's hostile cells that go for the bounds and the
// daemon's files (issue 14, items 2 and 7): an error of millions of
// characters, and symlinks planted where the daemon writes its record,
// transcript and whole output.

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileCells is the reliability report's section for cells that fight
// back.
const hostileCells = "6 Hostile cells"

// errorBound is the README's bound on a cell's error (message and
// traceback together) in a reply and in a record entry.
const errorBound = 10000

// boundedError is a cell's error as --json, MCP and the record give it.
type boundedError struct {
	Type         string `json:"type"`
	Message      string `json:"message"`
	Traceback    string `json:"traceback"`
	MessageCut   *cut   `json:"message_cut"`
	TracebackCut *cut   `json:"traceback_cut"`
}

// checkBoundedError checks what a user would of an error cut for its
// bound: the texts within it, head and tail kept, the cut said, and the
// file it names holding the whole error. It returns that file.
func checkBoundedError(t *testing.T, where string, e *boundedError, whole string) string {
	t.Helper()
	if e == nil {
		t.Fatalf("%s: no error", where)
	}
	if n := len([]rune(e.Message)) + len([]rune(e.Traceback)); n > errorBound+200 {
		t.Errorf("%s: the error holds %d characters, over the bound of %d", where, n, errorBound)
	}
	if e.MessageCut == nil || e.TracebackCut == nil {
		t.Fatalf("%s: the cut is not said: message_cut %v, traceback_cut %v", where, e.MessageCut, e.TracebackCut)
	}
	if e.MessageCut.Total != len(whole) {
		t.Errorf("%s: message_cut.total = %d, want %d", where, e.MessageCut.Total, len(whole))
	}
	if !strings.HasPrefix(e.Traceback, "Traceback (most recent call last):") || !strings.HasSuffix(strings.TrimSpace(e.Traceback), "xxxx") {
		t.Errorf("%s: the traceback lost its head or tail: %.100q … %q", where, e.Traceback, e.Traceback[max(0, len(e.Traceback)-40):])
	}
	wantContains(t, where+": the traceback", e.Traceback, " characters cut …]")
	file := e.TracebackCut.File
	if file == "" || e.MessageCut.File != file {
		t.Fatalf("%s: the cuts name no file, or two: %q, %q", where, e.MessageCut.File, file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%s: the whole error's file: %v", where, err)
	}
	if !strings.Contains(string(b), "ValueError: "+whole) {
		t.Errorf("%s: %s (%d bytes) does not hold the whole error", where, file, len(b))
	}
	if fi, _ := os.Stat(file); fi == nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %s is not 0600: %v", where, file, fi)
	}
	return file
}

// TestReliabilityLargeError raises an error of 3 M characters: every edge
// (CLI --json and plain, MCP text and structured content, the record,
// history, log and exports) holds it to the bound, head and tail with the
// cut said, and names the file that holds the whole; the session lives on.
func TestReliabilityLargeError(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	const cell = `raise ValueError("x" * 3_000_000)`
	whole := strings.Repeat("x", 3_000_000)

	out, _, code := e.run("exec", "big", cell, "--json")
	if code == 0 {
		t.Errorf("exec of a raising cell exited 0")
	}
	var r struct {
		Status string        `json:"status"`
		Error  *boundedError `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("exec --json: %v: %s", err, clip(out))
	}
	if r.Status != "error" {
		t.Errorf("status %q, want error", r.Status)
	}
	jsonFile := checkBoundedError(t, "exec --json", r.Error, whole)

	_, plain, _ := e.run("exec", "big", cell)
	wantContains(t, "the plain reply's error, on standard error", plain, "ValueError: xxx", "[error cut: 3,000,", "; the whole error is in ")
	mcpSrv := e.startMCP()
	var mr struct {
		Error *boundedError `json:"error"`
	}
	mcpText := mcpSrv.call("exec", map[string]any{"session": "big", "code": cell}, &mr)
	// The model reads the error in the text, bounded; the structured
	// content keeps its cuts, and none of its words (issue 40).
	if e := mr.Error; e == nil || e.Message != "" || e.Traceback != "" || e.MessageCut == nil || e.TracebackCut == nil ||
		e.MessageCut.Total != len(whole) || e.TracebackCut.File == "" || e.MessageCut.File != e.TracebackCut.File {
		t.Fatalf("MCP structured content's error %+v: want its cuts, the whole's total and one file, without its words", e)
	}
	if n := len([]rune(mcpText)); n > errorBound+1000 {
		t.Errorf("the MCP text holds %d characters, over the bound of %d", n, errorBound)
	}
	wantContains(t, "the MCP text", mcpText, "Traceback (most recent call last):", "[error cut: 3,000,", mr.Error.TracebackCut.File)
	if b, err := os.ReadFile(mr.Error.TracebackCut.File); err != nil || !strings.Contains(string(b), "ValueError: "+whole) {
		t.Errorf("the MCP structured cut's file %s does not hold the whole error: %v", mr.Error.TracebackCut.File, err)
	}
	mcpSrv.close()

	hist, _, _ := e.run("history", "big", "--json")
	var h struct {
		Entries []struct {
			Kind  string        `json:"kind"`
			Error *boundedError `json:"error"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(hist), &h); err != nil {
		t.Fatalf("history --json: %v", err)
	}
	raised := 0
	for _, en := range h.Entries {
		if en.Error != nil {
			raised++
			checkBoundedError(t, "a record entry", en.Error, whole)
		}
	}
	if raised != 3 {
		t.Errorf("the record holds %d raising cells, want 3", raised)
	}
	recordFile := filepath.Join(e.stateDir(), "records", "big.jsonl")
	fi, err := os.Stat(recordFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 10*errorBound*3 {
		t.Errorf("the record is %d bytes after three cells, want each entry's error within %d characters", fi.Size(), errorBound)
	}
	sizes := map[string]int{"exec --json": len(out), "exec": len(plain), "MCP tools/call text": len(mcpText), "history --json": len(hist)}
	for _, view := range [][]string{{"log", "big"}, {"history", "big", "#2"}, {"export", "big"}, {"export", "big", "--format", "ipynb"}} {
		text, _ := e.must(0, view...)
		wantContains(t, strings.Join(view, " "), text, "error cut: 3,000,")
		sizes[strings.Join(view, " ")] = len(text)
	}
	for what, n := range sizes {
		if n > 3*errorBound*4 {
			t.Errorf("%s: %d bytes for three cells, over the bound", what, n)
		}
	}
	if v := e.runJSON("exec", "big", "1 + 1"); v.Value != "2" {
		t.Errorf("the session after the error: %v", v)
	}
	report(t, hostileCells, "`"+cell+"`",
		"exec --json %d bytes, plain %d, MCP text %d, record %d after three cells: the error cut to its head and tail (the cut said), the whole in %s; the session lives on",
		len(out), len(plain), len(mcpText), fi.Size(), filepath.Base(jsonFile))
}

// TestReliabilityPlantedFiles plants symlinks where the daemon writes a
// session's record, transcript and whole output: each is refused, the
// reply saying so and what to do, their targets untouched with their mode,
// and the session runs on; once they are removed, the files are the
// daemon's own again.
func TestReliabilityPlantedFiles(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "start")
	state := e.stateDir()
	outside := t.TempDir()
	target := func(name string) string {
		p := filepath.Join(outside, name)
		if err := os.WriteFile(p, []byte("precious\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, 0o644)
		return p
	}
	plant := func(link, target string) {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	planted := map[string]string{
		filepath.Join(state, "records", "p.jsonl"):                 target("record"),
		filepath.Join(state, "p.py"):                               target("transcript"),
		filepath.Join(state, "records", "output", "p-3.txt"):       target("output"),
		filepath.Join(state, "records", "output", "p-4.error.txt"): target("error"),
	}
	os.MkdirAll(filepath.Join(state, "records", "output"), 0o700)
	for link, to := range planted {
		plant(link, to)
	}

	r := e.runJSON("exec", "p", "1 + 1")
	if r.Value != "2" {
		t.Fatalf("the session beside planted files: %v", r)
	}
	saves := strings.Join(r.notesOf("save"), "\n")
	wantContains(t, "the reply's save notes", saves, "refusing "+filepath.Join(state, "records", "p.jsonl"), "refusing "+filepath.Join(state, "p.py"),
		"it is a symlink", "remove it (its target is untouched)")
	// A long output (the record's whole-output file) and a large error.
	r = e.runJSON("exec", "p", `print("y" * 20_000)`)
	if r.OutputCut != nil || len(r.Output) < 20_000 {
		t.Errorf("the reply's output: %d characters, cut %v", len(r.Output), r.OutputCut)
	}
	r = e.runJSON("exec", "p", `raise ValueError("x" * 3_000_000)`)
	wantContains(t, "the large error's save note", strings.Join(r.notesOf("save"), "\n"), "whole error could not be saved", "p-4.error.txt", "it is a symlink")

	for link, to := range planted {
		if b, _ := os.ReadFile(to); string(b) != "precious\n" {
			t.Errorf("%s's target now holds %d bytes: %.80q", filepath.Base(link), len(b), b)
		}
		if fi, _ := os.Stat(to); fi.Mode().Perm() != 0o644 {
			t.Errorf("%s's target now has mode %v, want 0644", filepath.Base(link), fi.Mode().Perm())
		}
		if fi, _ := os.Lstat(link); fi == nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer the planted symlink: %v", link, fi)
		}
	}
	if plain, notes, _ := e.run("exec", "p", "3"); !strings.Contains(plain, "3") || !strings.Contains(notes, "remove it") {
		t.Errorf("the plain reply does not say the refusal: %q, on standard error %q", plain, notes)
	}

	// Removed as the message says, the files are the daemon's own again.
	for link := range planted {
		os.Remove(link)
	}
	e.must(0, "kill", "p")
	r = e.runJSON("exec", "p", `print("y" * 20_000)`)
	if n := r.notesOf("save"); len(n) > 0 {
		t.Errorf("after the links were removed: %v", n)
	}
	for _, f := range []string{filepath.Join(state, "records", "p.jsonl"), filepath.Join(state, "p.py")} {
		fi, err := os.Lstat(f)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s after the links were removed: %v %v", f, fi, err)
		}
	}
	report(t, hostileCells, "`records/p.jsonl`, the transcript `p.py` and the whole-output and whole-error files planted as symlinks to 0644 files",
		"each refused (%q); the targets untouched, still 0644; the session ran on, and once the links were removed the files were its own again, 0600",
		firstSentence(saves))
}

// TestReliabilityPlantedRuntimeFiles plants symlinks at the daemon's
// lock and log in the runtime directory: the daemon refuses to start
// rather than write through them, saying what to do.
func TestReliabilityPlantedRuntimeFiles(t *testing.T) {
	needPython(t)
	t.Parallel()
	for _, name := range []string{"daemon.lock", "daemon.log"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			dir := e.socketDir()
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			to := filepath.Join(t.TempDir(), "target")
			os.WriteFile(to, []byte("precious\n"), 0o644)
			os.Chmod(to, 0o644)
			os.Symlink(to, filepath.Join(dir, name))
			_, stderr, code := e.run("exec", "r", "1")
			if code == 0 {
				t.Errorf("exec with %s planted as a symlink exited 0", name)
			}
			wantContains(t, "the refusal", stderr, "refusing "+filepath.Join(dir, name), "it is a symlink", "remove it")
			if b, _ := os.ReadFile(to); string(b) != "precious\n" {
				t.Errorf("the target of %s now holds %q", name, b)
			}
			if fi, _ := os.Stat(to); fi.Mode().Perm() != 0o644 {
				t.Errorf("the target of %s now has mode %v", name, fi.Mode().Perm())
			}
			os.Remove(filepath.Join(dir, name))
			if r := e.runJSON("exec", "r", "1"); r.Value != "1" {
				t.Errorf("after the link was removed: %v", r)
			}
			report(t, hostileCells, fmt.Sprintf("`%s` planted as a symlink to a 0644 file", name),
				"the daemon was not started through it: %q; the target untouched; once the link was removed, the next call started it", firstSentence(stderr))
		})
	}
}

// firstSentence is the first line of s, for a report.
func firstSentence(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}
