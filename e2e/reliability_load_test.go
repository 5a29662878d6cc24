// The reliability suite's load and flood scenarios: a flood of output, 200
// sessions in a loop, and the 30 s soak of 50 clients (reliability_test.go
// holds the report they write to).

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/proc/proctest"
)

// TestReliabilityFloods floods a session: a gigabyte of output (256 MB
// where the disk has less than 4 GB free), one 100 MB line without a newline, invalid UTF-8
// and terminal escapes. Replies stay bounded and valid, the daemon stays
// small, the session usable, and the whole output is where the reply says.
func TestReliabilityFloods(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "flood", "import sys")
	pid := e.status().PID
	// A gigabyte where the disk has room for its spool file and then some
	// (CI machines' disks vary), else a quarter of one.
	mb := 1024
	var fs syscall.Statfs_t
	if syscall.Statfs(e.stateDir(), &fs) == nil && int64(fs.Bavail)*int64(fs.Bsize) < 4<<30 && !long() {
		mb = 256
		t.Logf("less than 4 GB free for the state directory: flooding with %d MB", mb)
	}
	for _, tc := range []struct {
		what, code string
		bytes      int64
	}{
		{fmt.Sprintf("a cell printing %d MB in lines", mb),
			fmt.Sprintf("line = 'x' * 1023 + '\\n'\nblock = line * 1024\nfor _ in range(%d): sys.stdout.write(block)", mb), int64(mb) << 20},
		{"a cell printing one 100 MB line with no newline",
			"chunk = 'y' * (1 << 20)\nfor _ in range(100): sys.stdout.write(chunk)", 100 << 20},
	} {
		t0 := time.Now()
		r := e.runJSON("exec", "flood", tc.code, "-t", "300")
		took := time.Since(t0)
		var size int64 = -1
		if r.OutputCut != nil {
			if fi, err := os.Stat(r.OutputCut.File); err == nil {
				size = fi.Size()
			}
		}
		mem, _ := proctest.RSS(pid)
		if r.Status != "done" || r.OutputCut == nil || int64(r.OutputCut.Total) != tc.bytes || size != tc.bytes || len([]rune(r.Output)) > 30100 {
			t.Errorf("%s: status %s, %d characters in the reply, cut %+v, file of %d bytes", tc.what, r.Status, len([]rune(r.Output)), r.OutputCut, size)
		}
		// The record's entry names a file of its own, which holds all of
		// it too (it once missed most of the runtime's first chunk).
		es := e.history("flood")
		if c := es[len(es)-1].OutputCut; c == nil || c.File == "" {
			t.Errorf("%s: the record's entry names no whole-output file: %+v", tc.what, c)
		} else if fi, err := os.Stat(c.File); err != nil || fi.Size() != tc.bytes {
			t.Errorf("%s: the record's whole-output file %s: %v, want %d bytes", tc.what, c.File, err, tc.bytes)
		} else {
			os.Remove(c.File)
		}
		if mem > 200<<20 {
			t.Errorf("%s: the daemon holds %d MB", tc.what, mem>>20)
		}
		report(t, "1 Load and floods", tc.what, "%s in %s; the reply carried %d characters and said where the rest is; the spool file holds all %d bytes; daemon RSS %d MB",
			r.Status, took.Round(100*time.Millisecond), len([]rune(r.Output)), size, mem>>20)
		if r.OutputCut != nil {
			os.Remove(r.OutputCut.File)
		}
	}
	r := e.runJSON("exec", "flood", `sys.stdout.buffer.write(b'bad \xff\xfe bytes, \x1b[31mred\x1b[0m, \x1b]0;title\x07a title\n10%\r100%\n'); sys.stdout.flush()`)
	want := "bad \ufffd bytes, red, a title\n100%\n" // a run of invalid bytes is one U+FFFD
	if r.Output != want {
		t.Errorf("invalid UTF-8 and escapes: %q, want %q", r.Output, want)
	}
	report(t, "1 Load and floods", "a cell printing invalid UTF-8, colour and title escapes and a carriage-return progress line", "reply %q: valid UTF-8, escapes removed, the progress line collapsed", r.Output)
	if r = e.runJSON("exec", "flood", "6*7"); r.Value != "42" {
		t.Errorf("after the floods: %v", r)
	}
	report(t, "1 Load and floods", "the session after the floods", "usable: `6*7` gave %s", r.Value)
}

// TestReliabilityLeaks creates, uses and kills 200 sessions and counts
// what the daemon holds before and after.
func TestReliabilityLeaks(t *testing.T) {
	needPython(t)
	t.Parallel()
	e := newEnv(t)
	e.must(0, "exec", "warm", "1")
	e.must(0, "kill", "warm")
	count := func(dir string) int {
		es, _ := os.ReadDir(dir)
		return len(es)
	}
	out := filepath.Join(e.stateDir(), "output")
	before := e.status()
	runtimeFiles, outFiles := count(e.socketDir()), count(out)
	n := 200
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("leak%d", i)
		if r := e.runJSON("exec", name, fmt.Sprintf("x = %d\nprint(x)", i)); r.Output != fmt.Sprintf("%d\n", i) {
			t.Fatalf("session %d: %v", i, r)
		}
		e.must(0, "kill", name)
	}
	// The last kill's reaping and closing may still be under way: poll
	// until the daemon is back to its size or the upper bound passes.
	var after statusReply
	var procs int
	settled := func() bool {
		after, procs = e.status(), len(e.working())
		return after.FDs <= before.FDs+2 && after.Goroutines <= before.Goroutines+5 && procs == 1 &&
			count(e.socketDir()) == runtimeFiles && count(out) == outFiles
	}
	if !waitFor(10*time.Second, settled) {
		t.Errorf("after %d sessions: fds %d→%d, goroutines %d→%d, processes %d (the daemon alone is 1), runtime dir %d→%d files, output dir %d→%d",
			n, before.FDs, after.FDs, before.Goroutines, after.Goroutines, procs, runtimeFiles, count(e.socketDir()), outFiles, count(out))
	}
	records, _ := filepath.Glob(filepath.Join(e.stateDir(), "records", "*.jsonl"))
	report(t, "1 Load and floods", fmt.Sprintf("%d sessions created, used and killed in a loop", n),
		"daemon fds %d→%d, goroutines %d→%d, processes left besides the daemon %d, runtime-dir files %d→%d, spool files %d→%d (each name keeps its record, by design: %d records)",
		before.FDs, after.FDs, before.Goroutines, after.Goroutines, procs-1, runtimeFiles, count(e.socketDir()), outFiles, count(out), len(records))
}

// TestReliabilityLoad runs 50 clients against 10 sessions (for 30 s, 5
// minutes with POLYREPL_LONG): every reply must be its own request's, nothing lost
// or duplicated, and each session's record complete and in order. It runs
// alone (not in parallel), so the other tests' timing is not disturbed.
// `go test -short` skips it, for quick local runs.
func TestReliabilityLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("the 30 s load soak is skipped with -short")
	}
	needPython(t)
	e := newEnv(t)
	const sessions, clients = 10, 50
	dur := 30 * time.Second
	if long() {
		dur = 5 * time.Minute
	}
	for s := 0; s < sessions; s++ {
		e.must(0, "exec", fmt.Sprintf("load%d", s), "0")
	}
	c := e.api()
	type sent struct{ client, n int }
	var (
		mu                  sync.Mutex
		done                = map[string][]sent{}
		replies, busy, errs int
		bad                 []string
	)
	deadline := time.Now().Add(dur)
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; time.Now().Before(deadline); n++ {
				name := fmt.Sprintf("load%d", (i+n)%sessions)
				body := fmt.Sprintf(`{"code":"print('c%d-%d')\n%d","client":{"who":"c%d","how":"cli"},"spawn":{"cwd":"/","env":[]}}`, i, n, i*1000000+n, i)
				resp, err := c.Post("http://polyrepl/v1/sessions/"+name+"/exec", "application/json", strings.NewReader(body))
				if err != nil {
					mu.Lock()
					errs++
					bad = append(bad, err.Error())
					mu.Unlock()
					continue
				}
				var r cellResult
				derr := json.NewDecoder(resp.Body).Decode(&r)
				resp.Body.Close()
				mu.Lock()
				switch {
				case resp.StatusCode == 409:
					busy++
				case derr != nil || resp.StatusCode != 200:
					errs++
					bad = append(bad, fmt.Sprintf("%s: %d %v", name, resp.StatusCode, derr))
				case r.Output != fmt.Sprintf("c%d-%d\n", i, n) || r.Value != fmt.Sprint(i*1000000+n) || r.Session != name:
					bad = append(bad, fmt.Sprintf("client %d request %d to %s got %s/%q/%q", i, n, name, r.Session, r.Output, r.Value))
				default:
					replies++
					done[name] = append(done[name], sent{i, n})
				}
				mu.Unlock()
				if resp.StatusCode == 409 {
					time.Sleep(2 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	c.Transport.(*http.Transport).CloseIdleConnections()
	if len(bad) > 0 {
		t.Errorf("%d replies were wrong or failed, e.g. %s", len(bad), bad[0])
	}
	// Every cell is in its session's record once, in order; the record
	// keeps the last 300, and its seqs account for all.
	lost, dup := 0, 0
	for s := 0; s < sessions; s++ {
		name := fmt.Sprintf("load%d", s)
		out, _ := e.must(0, "history", name, "--json")
		var rec struct {
			Entries []entry `json:"entries"`
			Dropped int     `json:"dropped"`
		}
		json.Unmarshal([]byte(out), &rec)
		seen := map[string]int{}
		lastSeq := 0
		for _, en := range rec.Entries {
			if en.Seq <= lastSeq {
				t.Errorf("%s: entry %d after %d", name, en.Seq, lastSeq)
			}
			lastSeq = en.Seq
			if en.Kind == "cell" && en.Status != "done" {
				t.Errorf("%s: entry %s is %s", name, en.ID, en.Status)
			}
			seen[en.Code]++
		}
		if got, want := rec.Dropped+len(rec.Entries), len(done[name])+2; got != want {
			t.Errorf("%s: the record accounts for %d entries, want %d (2 + the %d cells)", name, got, want, len(done[name]))
		}
		// Every kept cell is one that was answered, once; with the count
		// above, none is missing.
		answered := map[string]bool{}
		for _, d := range done[name] {
			answered[fmt.Sprintf("print('c%d-%d')\n%d", d.client, d.n, d.client*1000000+d.n)] = true
		}
		for code, n := range seen {
			switch {
			case code == "0":
			case !answered[code]:
				lost++ // in the record, but its reply was lost
			case n > 1:
				dup++
			}
		}
	}
	if lost+dup > 0 {
		t.Errorf("records: %d cells with no answer, %d duplicated", lost, dup)
	}
	report(t, "1 Load and floods", fmt.Sprintf("%d concurrent clients driving %d sessions for %s", clients, sessions, dur),
		"%d cells run (%.0f/s), %d busy refusals retried, %d wrong or lost replies, %d transport errors; each record accounts for every cell, in order: %d recorded cells without an answer, %d duplicated",
		replies, float64(replies)/dur.Seconds(), busy, len(bad)-errs, errs, lost, dup)
}
