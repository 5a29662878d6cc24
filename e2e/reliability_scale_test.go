// The reliability suite's scale and wrong-word scenarios (issue 33 items
// 10 and 11): many sessions at once, a daemon killed in the middle of a
// kill or a creation, and routine refusals under a storm of kills,
// restarts and cells (reliability_test.go holds the report they write to).

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestReliabilityManySessions creates N sh sessions (100; 500 with
// POLYREPL_LONG), lists them and stops the daemon with them all. What it
// asserts is what a user checks: every session listed, every one ended
// by stop and none of their processes left, and the daemon holding at
// most 2 descriptors per idle session. The times are reported, not
// asserted: the machine is shared.
func TestReliabilityManySessions(t *testing.T) {
	if testing.Short() {
		t.Skip("creating 100 sessions is skipped with -short")
	}
	e := newEnv(t)
	n := 100
	if long() {
		n = 500
	}
	// A first life starts the daemon and its spare holder, which every
	// count below is measured from.
	e.must(0, "exec", "--runtime", "sh", "warm", "true")
	e.must(0, "kill", "warm")
	before := e.status()

	c := e.api()
	t0 := time.Now()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		bad  []string
		work = make(chan int)
	)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				name := fmt.Sprintf("many%d", i)
				body := fmt.Sprintf(`{"code":"echo %d","client":{"who":"scale","how":"cli"},"spawn":{"runtime":"sh","cwd":"/","env":["PATH=/usr/bin:/bin"]}}`, i)
				resp, err := c.Post("http://polyrepl/v1/sessions/"+name+"/exec", "application/json", strings.NewReader(body))
				if err != nil {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("%s: %v", name, err))
					mu.Unlock()
					continue
				}
				var r cellResult
				derr := json.NewDecoder(resp.Body).Decode(&r)
				resp.Body.Close()
				if derr != nil || resp.StatusCode != 200 || r.Output != fmt.Sprintf("%d\n", i) {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("%s: %d %v %q", name, resp.StatusCode, derr, r.Output))
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	created := time.Since(t0)
	if len(bad) > 0 {
		t.Fatalf("%d of %d sessions failed, e.g. %s", len(bad), n, bad[0])
	}

	// `sessions`, as a user runs it, with the memory of each.
	t0 = time.Now()
	ss := e.sessions()
	listed := time.Since(t0)
	t.Logf("%d sessions created in %s, listed in %s", n, created, listed)
	if len(ss) != n {
		t.Errorf("sessions lists %d, want %d", len(ss), n)
	}
	for _, s := range ss {
		if s.State != "idle" || s.Memory == 0 {
			t.Errorf("session %s: state %s, memory %d", s.Name, s.State, s.Memory)
			break
		}
	}

	c.Transport.(*http.Transport).CloseIdleConnections() // not the sessions'
	// An idle session costs the daemon its holder's connection and the
	// holder process's handle; the files it writes are closed once it is
	// quiet.
	var st statusReply
	perSession := func() float64 { return float64(st.FDs-before.FDs) / float64(n) }
	if !waitFor(30*time.Second, func() bool { st = e.status(); return perSession() <= 2 }) {
		t.Errorf("the daemon holds %d descriptors with %d idle sessions (%d before them): %.1f each, want at most 2", st.FDs, n, before.FDs, perSession())
	}

	t.Logf("the daemon holds %d descriptors, %d before the sessions", st.FDs, before.FDs)
	t0 = time.Now()
	long := *c
	long.Timeout = 10 * time.Minute // the time is reported, not bounded
	resp, err := long.Post("http://polyrepl/v1/stop", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("stop: %v", err)
	}
	var stop struct {
		Ended []sessionInfo `json:"ended"`
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	stopped := time.Since(t0)
	if err := json.Unmarshal(b, &stop); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("stop: %d %v %.300s", resp.StatusCode, err, b)
	}
	if len(stop.Ended) != n {
		t.Errorf("stop ended %d sessions, want %d", len(stop.Ended), n)
	}
	left := 0
	waitFor(10*time.Second, func() bool { left = len(e.tagged()); return left == 0 })
	if left > 0 {
		t.Errorf("%d processes left after stop", left)
	}
	result := fmt.Sprintf("created in %s (8 clients at a time); `sessions` listed them with their memory in %s; the daemon held %d descriptors more than with none (%.1f per idle session); `stop` ended all %d in %s and left %d processes",
		created.Round(100*time.Millisecond), listed.Round(10*time.Millisecond), st.FDs-before.FDs, perSession(), len(stop.Ended), stopped.Round(100*time.Millisecond), left)
	t.Log(result)
	report(t, "1 Load and floods", fmt.Sprintf("%d sh sessions at once", n), "%s", result)
}
