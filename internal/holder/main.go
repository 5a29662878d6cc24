package holder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/polyrepl/polyrepl/internal/paths"
	"github.com/polyrepl/polyrepl/internal/proc"
	"github.com/polyrepl/polyrepl/internal/sandbox"
)

// Main runs a holder process: the hidden `polyrepl holder` command. The
// daemon that starts it passes its end of a socket pair as fd 3 and
// sends the spawn over it; the holder then keeps the session until a
// daemon ends it, whatever becomes of the daemons between.
func Main() int {
	unix.CloseOnExec(3)
	f := os.NewFile(3, "daemon")
	c, err := net.FileConn(f)
	f.Close()
	uc, ok := c.(*net.UnixConn)
	if err != nil || !ok {
		fmt.Fprintf(os.Stderr, "polyrepl: error: a holder is started by the daemon, with its socket as fd 3, not by hand (%v)\n", err)
		return 2
	}
	// Nothing this process was given reaches the runtime: its sockets
	// are its own.
	proc.CloseOnExecInherited()
	// A hangup, an interrupt or a reader gone from a pipe is not the
	// session's end. Caught, not ignored: a caught signal is the
	// default again in the runtime, an ignored one would stay ignored
	// (and Python, started with SIGINT ignored, could not be interrupted).
	signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE)

	// A holder passes events on, one at a time: one processor is all it
	// uses, and fewer threads handing work to each other make its hop
	// shorter.
	runtime.GOMAXPROCS(1)
	w := newHolderWire(uc)
	sp, err := readSpawn(w)
	if errors.Is(err, io.EOF) {
		return 0 // a spare the daemon let go
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "polyrepl: error: %v\n", err)
		return 2
	}
	setTitle(os.Args, sp.Name)
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix(fmt.Sprintf("polyrepl holder[%d] ", os.Getpid()))
	if lf, err := paths.OpenFile(sp.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE); err == nil {
		log.SetOutput(lf)
		debug.SetCrashOutput(lf, debug.CrashOptions{})
	}
	s := newServer(sp)
	if err := s.start(context.Background(), w); err != nil {
		log.Printf("session %s: did not start: %v", sp.Name, err)
		return 1
	}
	go s.trimWhenQuiet()
	<-s.end
	return 0
}

// IfHolder runs this process as a holder, and exits, when it was started
// as one (or as the trampoline of a sandboxed runtime, sandbox.IfConfine): for binaries other than polyrepl's own that start holders by
// re-executing themselves (test binaries, the benchmark harness).
func IfHolder() {
	sandbox.IfConfine()
	if len(os.Args) > 1 && os.Args[1] == Command {
		os.Exit(Main())
	}
}

// readSpawn reads what to start, the first frame of a new holder.
// A spare holder waits for it as long as its daemon lives.
func readSpawn(w *wire) (Brief, error) {
	var sp Brief
	typ, b, err := w.read()
	if err != nil {
		return sp, fmt.Errorf("the daemon sent no spawn: %w", err)
	}
	if typ != frameBrief {
		return sp, fmt.Errorf("the daemon sent a frame of type %q, not a spawn", typ)
	}
	if err := json.Unmarshal(b, &sp); err != nil {
		return sp, fmt.Errorf("the daemon's spawn cannot be read: %w", err)
	}
	return sp, nil
}

// serveSpawn starts the holder the daemon asked for over w, in this
// process.
func serveSpawn(w *wire) (*server, error) {
	sp, err := readSpawn(w)
	if err != nil {
		return nil, err
	}
	s := newServer(sp)
	if err := s.start(context.Background(), w); err != nil {
		return nil, err
	}
	return s, nil
}
