package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
)

// setExtra keeps a second measure of a sample (not while warming up).
func setExtra(a *alt, rep int, v float64) {
	if rep >= 0 {
		a.extra[rep] = v
	}
}

func (w *world) kill(ctx context.Context, cl *client.Client, name string) error {
	_, err := cl.Kill(ctx, name, api.ControlRequest{Client: api.Client{Who: "bench", How: "go"}})
	return err
}

// sessionMemory is the RSS of a session's process tree as the daemon
// reports it (the memory field of `sessions --json`).
func sessionMemory(ctx context.Context, cl *client.Client, name string) float64 {
	infos, err := cl.Sessions(ctx, name)
	if err != nil || len(infos) != 1 {
		return math.NaN()
	}
	return float64(infos[0].Memory)
}

// creation times a new session until its first cell returns, against a
// python3 -c pass and a Jupyter kernel until ready, and keeps the memory
// of each new session (extra, bytes).
func creation(ctx context.Context, w *world, c config) []*alt {
	cl := w.newClient()
	n := 0
	var alts []*alt
	cli := &alt{key: "cli", label: "`polyrepl exec NEW '1+1'` (a process), until the first cell returns"}
	cli.run = func(rep int) (float64, error) {
		n++
		name := fmt.Sprintf("new-cli-%d", n)
		t, err := w.timeProcess([]string{w.bin, "exec", name, cellTrivial}, func(out string) error {
			if !strings.Contains(out, "2") {
				return fmt.Errorf("printed %q", clip(out))
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
		setExtra(cli, rep, sessionMemory(ctx, cl, name))
		return t, w.kill(ctx, cl, name)
	}
	gocl := &alt{key: "client", label: "polyrepl, Go client in-process: new session until the first cell returns"}
	gocl.run = func(rep int) (float64, error) {
		n++
		name := fmt.Sprintf("new-go-%d", n)
		t, err := clientExec(ctx, cl, name, w.execReq(cellTrivial), valueIs("2"))
		if err != nil {
			return 0, err
		}
		setExtra(gocl, rep, sessionMemory(ctx, cl, name))
		return t, w.kill(ctx, cl, name)
	}
	// The same route with a sandbox: what the trampoline and the kernel's
	// rules add to a new session (issue 36's aim: at most 10 ms more).
	sandboxed := func(key, policy string) *alt {
		a := &alt{key: key, label: fmt.Sprintf("polyrepl, Go client in-process, sandbox %s (network off)", policy)}
		a.run = func(rep int) (float64, error) {
			n++
			name := fmt.Sprintf("new-%s-%d", key, n)
			req := w.execReq(cellTrivial)
			req.Spawn.Sandbox = &api.Sandbox{Policy: policy}
			t, err := clientExec(ctx, cl, name, req, valueIs("2"))
			if err != nil {
				return 0, err
			}
			setExtra(a, rep, sessionMemory(ctx, cl, name))
			return t, w.kill(ctx, cl, name)
		}
		return a
	}
	alts = append(alts, cli, gocl, sandboxed("sandbox-ro", api.SandboxReadOnly), sandboxed("sandbox-ws", api.SandboxWorkspaceWrite),
		&alt{key: "pass", label: fmt.Sprintf("`%s -c pass`", c.python), ref: true,
			run: func(int) (float64, error) { return w.timeProcess([]string{c.python, "-c", "pass"}, nil) }})
	if w.jup != nil {
		jk := &alt{key: "jupyter", label: "Jupyter kernel start (KernelManager + wait_for_ready)"}
		jk.run = func(rep int) (float64, error) {
			t, id, pid, err := w.jup.startKernel()
			if err != nil {
				return 0, err
			}
			if pid > 0 {
				setExtra(jk, rep, float64(treeRSS(pid)))
			}
			return t, w.jup.stopKernel(id)
		}
		alts = append(alts, jk)
	}
	interleave("session creation", alts, 1, c.createReps)
	return alts
}

// interrupts times, for a cell in time.sleep and one in a pure-Python
// loop, the interrupt call from its sending to its reply saying the cell
// was interrupted.
func interrupts(ctx context.Context, w *world, c config) []*alt {
	cl, ctl := w.newClient(), w.newClient()
	const name = "intr"
	if _, err := cl.Exec(ctx, name, w.execReq("import time")); err != nil {
		w.skip("interrupt rows", err.Error())
		return nil
	}
	mk := func(key, label, code string) *alt {
		return &alt{key: key, label: label, run: func(int) (float64, error) {
			done := make(chan error, 1)
			go func() {
				r, err := cl.Exec(ctx, name, w.execReq(code))
				if err == nil && r.Status != api.StatusInterrupted {
					err = fmt.Errorf("the cell's own reply says %s", r.Status)
				}
				done <- err
			}()
			for deadline := time.Now().Add(10 * time.Second); ; {
				infos, err := ctl.Sessions(ctx, name)
				if err != nil {
					return 0, err
				}
				if len(infos) == 1 && infos[0].Running != nil {
					break
				}
				if time.Now().After(deadline) {
					return 0, fmt.Errorf("the cell did not start within 10s")
				}
				time.Sleep(time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond) // well inside the sleep or the loop
			t0 := time.Now()
			r, err := ctl.Interrupt(ctx, name, api.ControlRequest{Client: api.Client{Who: "bench", How: "go"}})
			d := time.Since(t0)
			if err != nil {
				return 0, err
			}
			if r.Status != api.StatusInterrupted {
				return 0, fmt.Errorf("interrupt replied %s", r.Status)
			}
			if err := <-done; err != nil {
				return 0, err
			}
			return secs(d), nil
		}}
	}
	alts := []*alt{
		mk("sleep", "cell in `time.sleep(100)`", "time.sleep(100)"),
		mk("loop", "cell in `while True: pass`", "while True: pass"),
	}
	interleave("interrupt", alts, 1, c.interruptReps)
	return alts
}

// concResult is the round trip of 1+1 with several clients at once.
type concResult struct {
	clients []int
	pooled  []series // every sample per client count
	rounds  []series // per count, the p50 of each round
	rate    []float64
	// cpu is the CPU time per cell, in seconds, of the daemon, the clients
	// (this process), the python workers and their holders, per client
	// count.
	cpu [][4]float64
	err error
}

// concurrency runs rounds of 1, 10 and 50 clients at once, each on its own
// session with its own client, rotating the order per round; a client
// count's ratio to one client is taken per round, then the median.
func concurrency(ctx context.Context, w *world, c config) *concResult {
	res := &concResult{clients: []int{1, 10, 50}}
	most := res.clients[len(res.clients)-1]
	names := make([]string, most)
	for i := range names {
		names[i] = fmt.Sprintf("c%d", i)
	}
	if err := w.createSessions(ctx, names, 4); err != nil {
		res.err = err
		w.skip("concurrency rows", err.Error())
		return res
	}
	res.pooled = make([]series, len(res.clients))
	res.rounds = make([]series, len(res.clients))
	res.rate = make([]float64, len(res.clients))
	for i := range res.rounds {
		res.rounds[i] = nanSeries(c.concRounds)
	}
	pids, holders := map[string]int{}, map[string]int{}
	infos, err := w.newClient().Sessions(ctx, "")
	if err != nil {
		res.err = err
		w.skip("concurrency rows", err.Error())
		return res
	}
	for _, in := range infos {
		pids[in.Name], holders[in.Name] = in.PID, in.Holder
	}
	cpuOf := func(names []string) [4]time.Duration {
		var t [4]time.Duration
		t[0], t[1] = cpuTime(w.daemonPID), cpuTime(os.Getpid())
		for _, n := range names {
			t[2] += cpuTime(pids[n])
			t[3] += cpuTime(holders[n])
		}
		return t
	}
	res.cpu = make([][4]float64, len(res.clients))
	var elapsed = make([]time.Duration, len(res.clients))
	var cells = make([]int, len(res.clients))
	logf("concurrency: %v clients × %d rounds", res.clients, c.concRounds)
	for round := range c.concRounds {
		for k := range res.clients {
			i := (round + k) % len(res.clients)
			n := res.clients[i]
			per := max(20, 200/n)
			before := cpuOf(names[:n])
			lat, took, err := burst(ctx, w, names[:n], per)
			after := cpuOf(names[:n])
			for k := range after {
				res.cpu[i][k] += (after[k] - before[k]).Seconds()
			}
			if err != nil {
				res.err = err
				w.skip("concurrency rows", err.Error())
				return res
			}
			res.pooled[i] = append(res.pooled[i], lat...)
			res.rounds[i][round] = lat.median()
			elapsed[i] += took
			cells[i] += len(lat)
		}
	}
	for i := range res.clients {
		res.rate[i] = float64(cells[i]) / elapsed[i].Seconds()
		for k := range res.cpu[i] {
			res.cpu[i][k] /= float64(cells[i])
		}
	}
	return res
}

// burst has one client per session run per cells of 1+1, all starting
// together, and returns every round trip.
func burst(ctx context.Context, w *world, names []string, per int) (series, time.Duration, error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		all   series
		first error
	)
	start := make(chan struct{})
	ready := sync.WaitGroup{}
	for _, name := range names {
		wg.Add(1)
		ready.Add(1)
		go func() {
			defer wg.Done()
			cl := w.newClient()
			req := w.execReq(cellTrivial)
			// A first call opens the connection, untimed.
			_, err := cl.Exec(ctx, name, req)
			ready.Done()
			<-start
			lat := make(series, 0, per)
			for i := 0; i < per && err == nil; i++ {
				var t float64
				t, err = clientExec(ctx, cl, name, req, valueIs("2"))
				lat = append(lat, t)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = err
			}
			all = append(all, lat...)
		}()
	}
	ready.Wait()
	t0 := time.Now()
	close(start)
	wg.Wait()
	return all, time.Since(t0), first
}

// createSessions makes python sessions under names, a few at a time.
func (w *world) createSessions(ctx context.Context, names []string, parallel int) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	sem := make(chan struct{}, parallel)
	for _, name := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if _, err := clientExec(ctx, w.newClient(), name, w.execReq(cellTrivial), valueIs("2")); err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("creating session %s: %w", name, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

const (
	throughputBytes = 100 << 20
	throughputCell  = "import sys\nfor i in range(100): sys.stdout.write(\"x\"*(1<<20))"
	// throughputBytesCell writes one preallocated megabyte a hundred times:
	// the same bytes through the daemon without the cost of making them.
	throughputBytesCell = "for i in range(100): sys.stdout.buffer.write(_mb)"
)

// throughput prints 100 MB through the daemon to an in-process client,
// sampling the daemon's RSS every 10 ms (extra: peak growth in bytes). For
// scale, the same cell in a fresh python3 writing to /dev/null (the cell's
// own cost) and to a pipe that Go drains, and a cell writing preallocated
// bytes through the daemon (the daemon's share).
func throughput(ctx context.Context, w *world, c config) []*alt {
	cl := w.newClient()
	const name = "tp"
	if _, err := cl.Exec(ctx, name, w.execReq("import sys; _mb = b'x'*(1<<20)")); err != nil {
		w.skip("throughput rows", err.Error())
		return nil
	}
	through := func(a *alt, code string) func(int) (float64, error) {
		return func(rep int) (float64, error) {
			base := vmRSS(w.daemonPID)
			stop := make(chan struct{})
			peak := make(chan uint64)
			go func() {
				top := base
				t := time.NewTicker(10 * time.Millisecond)
				defer t.Stop()
				for {
					if r := vmRSS(w.daemonPID); r > top {
						top = r
					}
					select {
					case <-stop:
						peak <- top
						return
					case <-t.C:
					}
				}
			}()
			t, err := clientExec(ctx, cl, name, w.execReq(code), func(r api.CellResult) error {
				if r.OutputCut == nil || r.OutputCut.Total != throughputBytes {
					return fmt.Errorf("want a cut output of %d characters, got %+v", throughputBytes, r.OutputCut)
				}
				return nil
			})
			close(stop)
			top := <-peak
			setExtra(a, rep, float64(top-base))
			return t, err
		}
	}
	pd := &alt{key: "client", label: "polyrepl, Go client in-process (output bounded, the whole saved to a file)"}
	pd.run = through(pd, throughputCell)
	pb := &alt{key: "bytes", ref: true, label: "polyrepl, the same 100 MB from a preallocated `bytes` (`sys.stdout.buffer.write`)"}
	pb.run = through(pb, throughputBytesCell)
	fresh := func(stdout io.Writer) func(int) (float64, error) {
		return func(int) (float64, error) {
			cmd := w.command(c.python, "-c", throughputCell)
			cmd.Stdout = stdout
			t0 := time.Now()
			err := cmd.Run()
			return secs(time.Since(t0)), err
		}
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		w.skip("throughput rows", err.Error())
		return nil
	}
	alts := []*alt{pd, pb,
		{key: "null", ref: true, label: fmt.Sprintf("the cell in a fresh `%s -c`, stdout to /dev/null (includes its start)", c.python), run: fresh(devnull)},
		{key: "pipe", ref: true, label: fmt.Sprintf("the cell in a fresh `%s -c`, stdout a pipe Go drains (includes its start)", c.python), run: fresh(io.Discard)},
	}
	interleave("100 MB throughput", alts, 0, c.throughputReps)
	devnull.Close()
	return alts
}

// idleResult is the daemon's own RSS with a number of idle sessions.
type idleResult struct {
	counts []int
	rss    []float64
	err    error
}

// idleMemory measures a fresh daemon's RSS with 0, 10 and 100 idle python
// sessions (the daemon process only, not the runtimes).
func idleMemory(ctx context.Context, w *world, c config) *idleResult {
	res := &idleResult{counts: c.idleCounts}
	logf("daemon memory with %v idle sessions", c.idleCounts)
	have := 0
	for _, n := range c.idleCounts {
		var names []string
		for i := have; i < n; i++ {
			names = append(names, fmt.Sprintf("idle%d", i))
		}
		if err := w.createSessions(ctx, names, 4); err != nil {
			res.err = err
			w.skip("idle-session memory", err.Error())
			return res
		}
		have = n
		res.rss = append(res.rss, settledRSS(w.daemonPID))
	}
	return res
}

// settledRSS waits for the daemon to go quiet, then takes the median of a
// few samples.
func settledRSS(pid int) float64 {
	time.Sleep(500 * time.Millisecond)
	var s series
	for range 5 {
		s = append(s, float64(vmRSS(pid)))
		time.Sleep(50 * time.Millisecond)
	}
	return s.median()
}

// cpuTime is the CPU time so far of all live threads of pid, from
// /proc/PID/task/*/schedstat (its first field is nanoseconds on a CPU).
func cpuTime(pid int) time.Duration {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue
		}
		var ns int64
		fmt.Sscan(string(b), &ns)
		total += time.Duration(ns)
	}
	return total
}
