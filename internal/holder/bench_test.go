package holder

import (
	"context"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/sandbox"
	"github.com/polyrepl/polyrepl/internal/testenv"
)

// bench collects a cell's result, for the benchmarks.
type benchEvents struct{ done chan driver.Result }

func (e benchEvents) Output([]byte)             {}
func (e benchEvents) CellDone(r driver.Result)  { e.done <- r }
func (e benchEvents) Exited(driver.Exit)        {}
func (e benchEvents) HolderLost(string)         {}
func (e benchEvents) LogCut(int, int64, string) {}

// BenchmarkTrivialCell runs 1+1 in a Python worker driven in-process
// (direct) and through a holder process (holder): the difference is what
// the hop through a holder costs a cell.
func BenchmarkTrivialCell(b *testing.B) {
	testenv.NeedPython(b)
	b.Run("direct", func(b *testing.B) {
		w := newWorld(b)
		drv, _ := driver.Lookup("python")
		ev := benchEvents{done: make(chan driver.Result, 1)}
		sp := w.spawn
		p, err := drv.Start(context.Background(), driver.Spec{Exe: python, Cwd: sp.Spawn.Cwd, Env: sp.Spawn.Env, Cookie: sp.Cookie,
			RuntimeDir: sp.RuntimeDir, ValueLimit: api.ValueLimit}, ev)
		if err != nil {
			b.Fatal(err)
		}
		defer p.Tree().Kill(time.Second)
		b.ResetTimer()
		for i := range b.N {
			p.Run(i+1, "1+1")
			<-ev.done
		}
	})
	for _, l := range []struct {
		name string
		l    Launcher
	}{{"holder", &Reexec{}}, {"holder-in-process", InProcess{}}} {
		b.Run(l.name, func(b *testing.B) { benchHolder(b, l.l) })
	}
}

func benchHolder(b *testing.B, l Launcher) {
	if c, ok := l.(interface{ Close() }); ok {
		defer c.Close()
	}
	{
		w := newWorld(b)
		ev := benchEvents{done: make(chan driver.Result, 1)}
		p, err := Start(context.Background(), l, w.spawn)
		if err != nil {
			b.Fatal(err)
		}
		p.Start(ev)
		defer p.End()
		b.ResetTimer()
		for i := range b.N {
			p.Run(CellMeta{Cell: i + 1, Started: time.Now()}, "1+1")
			<-ev.done
			p.MarkRead(i+1, "bench", 0, true)
		}
	}
}

// BenchmarkStart starts a Python session: its worker driven in-process
// (direct), the same sandboxed read-only (direct-read-only), and through
// a new holder process (holder): the differences are what the sandbox
// and starting a holder add to a session's creation.
func BenchmarkStart(b *testing.B) {
	testenv.NeedPython(b)
	b.Run("direct", func(b *testing.B) {
		w := newWorld(b)
		drv, _ := driver.Lookup("python")
		sp := w.spawn
		for range b.N {
			p, err := drv.Start(context.Background(), driver.Spec{Exe: python, Cwd: sp.Spawn.Cwd, Env: sp.Spawn.Env, Cookie: sp.Cookie,
				RuntimeDir: sp.RuntimeDir, ValueLimit: api.ValueLimit}, benchEvents{done: make(chan driver.Result, 1)})
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			p.Tree().Kill(time.Second)
			b.StartTimer()
		}
	})
	b.Run("direct-read-only", func(b *testing.B) {
		// The same, sandboxed read-only as a holder does it (confine):
		// the difference from direct is what the sandbox adds.
		if sandbox.KernelABI() == 0 {
			b.Skip("no Landlock")
		}
		w := newWorld(b)
		drv, _ := driver.Lookup("python")
		sp := w.spawn
		sp.Spawn.Sandbox = &api.Sandbox{Policy: api.SandboxReadOnly}
		s := newServer(sp)
		for range b.N {
			spec := driver.Spec{Exe: python, Cwd: sp.Spawn.Cwd, Env: sp.Spawn.Env, Cookie: sp.Cookie,
				RuntimeDir: sp.RuntimeDir, SpoolDir: sp.SpoolDir, ValueLimit: api.ValueLimit}
			if _, err := s.confine(&spec); err != nil {
				b.Fatal(err)
			}
			p, err := drv.Start(context.Background(), spec, benchEvents{done: make(chan driver.Result, 1)})
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			p.Tree().Kill(time.Second)
			s.unconfine()
			b.StartTimer()
		}
	})
	b.Run("holder", func(b *testing.B) {
		w := newWorld(b)
		ex := &Reexec{} // with a spare started ahead, as the daemon does
		defer ex.Close()
		for range b.N {
			p, err := Start(context.Background(), ex, w.spawn)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			p.Start(benchEvents{done: make(chan driver.Result, 1)})
			p.End()
			b.StartTimer()
		}
	})
}
