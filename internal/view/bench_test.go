package view

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
	"github.com/polyrepl/polyrepl/internal/daemon"
	"github.com/polyrepl/polyrepl/internal/testenv"
)

// BenchmarkLineReachesPage is how long a line a cell prints takes to
// reach a page watching the session: printed by the runtime, through the
// holder, the daemon's record and its follower, the view's stream, to the
// page's end of the connection (a browser adds its parsing and drawing).
// Each iteration is one line of a cell printing a line every 20 ms, or
// every 100 ms, with the time it printed it; ms/line is printed to
// received, the median of the run (p90 beside it). A line after a quiet
// spell goes out at once; lines coming faster are gathered for up to
// 20 ms (the daemon's followGather), so that a flood costs one event per
// 20 ms. The daemon runs in this process.
func BenchmarkLineReachesPage(b *testing.B) {
	for _, every := range []float64{0.02, 0.1} {
		b.Run(fmt.Sprintf("every=%gms", every*1000), func(b *testing.B) { lineReachesPage(b, every) })
	}
}

func lineReachesPage(b *testing.B, every float64) {
	py := testenv.NeedPython(b)
	b.Setenv("XDG_RUNTIME_DIR", testenv.ShortDir(b))
	b.Setenv("XDG_STATE_HOME", testenv.ShortDir(b))
	b.Setenv("POLYREPL_PYTHON", py)
	logs := &testenv.Buffer{}
	prev := log.Writer()
	log.SetOutput(logs)
	defer log.SetOutput(prev)
	d, err := daemon.Listen()
	if err != nil {
		b.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve() }()
	defer func() {
		d.Stop("the benchmark ended", false)
		<-served
	}()
	c := client.New()
	c.AutoStart = false
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	who := api.Client{Who: "bench", How: How}
	spawn := api.Spawn{Exe: py, Cwd: testenv.ShortDir(b), Env: os.Environ()}
	if _, err := c.Exec(ctx, "page", api.ExecRequest{Code: "import time", Client: who, Spawn: spawn}); err != nil {
		b.Fatal(err)
	}
	ln, err := Listen(0)
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(c, who, ln)
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve(ctx)
	base := strings.TrimSuffix(s.URL(""), "/?token="+s.g.token)

	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/sessions/page/events?since=1", nil)
	req.Header.Set("Authorization", "Bearer "+s.g.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan float64, 1024) // received − printed, ms
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			now := float64(time.Now().UnixNano()) / 1e6
			var ev api.RecordEvent
			if json.Unmarshal([]byte(data), &ev) != nil || ev.Output == nil {
				continue
			}
			for _, l := range strings.Split(ev.Output.Text, "\n") {
				if t, ok := strings.CutPrefix(l, "at "); ok {
					if at, err := strconv.ParseFloat(t, 64); err == nil {
						lines <- now - at*1000
					}
				}
			}
		}
	}()
	cell := fmt.Sprintf("for i in range(%d):\n    print('at %%.3f' %% time.time(), flush=True)\n    time.sleep(%g)", b.N, every)
	b.ResetTimer()
	if _, err := c.Exec(ctx, "page", api.ExecRequest{Code: cell, Client: who, Timeout: ptr(0.0)}); err != nil {
		b.Fatal(err)
	}
	var got []float64
	for len(got) < b.N {
		select {
		case l := <-lines:
			got = append(got, l)
		case <-time.After(30 * time.Second):
			b.Fatalf("%d of %d lines reached the page", len(got), b.N)
		}
	}
	b.StopTimer()
	slices.Sort(got)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(got[len(got)/2], "ms/line")
	b.ReportMetric(got[len(got)*9/10], "p90-ms/line")
}

func ptr[T any](v T) *T { return &v }
