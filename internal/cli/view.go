package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
	"github.com/polyrepl/polyrepl/internal/view"
)

func init() {
	register(&command{
		name:    "view",
		args:    "[NAME]",
		summary: "watch and drive sessions in a browser: a page served on 127.0.0.1 while it runs",
		help: `Serves a page on 127.0.0.1 (a free port, or --port N) and prints its
address, with a token made fresh for this run; --open opens it in the
browser. The page lists every session and shows one session's shared
record live — every cell from every client, its output as it prints, its
figures — and runs cells, answers questions, interrupts, restarts, kills
and exports as you (--label, $POLYREPL_LABEL, else $USER; recorded with
how "view"). NAME opens the page on that session.

Only the address printed opens the page: every request needs its token
(kept in a cookie after the first load), and requests addressed to
another host name or sent from another page are refused. Nothing of
polyrepl listens on the network but this page, and only while it runs.
A daemon that is not running is not started by the page being open; a
cell run from it starts one, as any command does. Ctrl-C ends it.`,
		new: func() runner { return &viewCmd{} },
	})
}

type viewCmd struct {
	port int
	open bool
}

func (v *viewCmd) flags(fs *flagSet) {
	fs.Int(&v.port, "port", "N", "serve on this port of 127.0.0.1 (default: a free one)")
	fs.Bool(&v.open, "open", "open the page in the browser")
}

func (v *viewCmd) run(e *env, pos []string) int {
	c := e.cmd
	if len(pos) > 1 {
		return e.usageError(c, "view takes at most one session name")
	}
	name := ""
	if len(pos) == 1 {
		name = pos[0]
		if err := api.ValidateName(name); err != nil {
			return e.usageError(c, "%v", err)
		}
	}
	if v.port < 0 || v.port > 65535 {
		return e.usageError(c, "bad value for --port: %d is not a port (1 to 65535, or 0 for a free one)", v.port)
	}
	base, _ := os.Getwd() // "" if it is gone: only relative paths need it
	sp, err := client.BuildSpawn(client.SpawnInput{Base: base, Env: os.Environ()})
	if err != nil {
		return e.spawnFail(c, err)
	}
	var sb sandboxFlags
	if sp.Sandbox, err = sb.build(os.Getenv, base); err != nil {
		return e.usageError(c, "%v", err)
	}
	sp.SandboxDefault = sb.fromEnv != ""

	ln, err := view.Listen(v.port)
	if err != nil {
		e.errorf("%v", err)
		if errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) {
			// Not the port: this process may not listen at all, as in a
			// sandboxed session with its network off.
			e.hintf("this process may not listen on the network (inside a sandboxed session with --network off?): run polyrepl view outside it")
		} else {
			e.hintf("give another port with --port, or leave --port out for a free one")
		}
		return ExitUsage
	}
	who := e.as(view.How)
	who.Conn = newViewConn()
	who.Quiet = true // the page shows the whole record anyway
	srv, err := view.New(e.client, who, ln)
	if err != nil {
		ln.Close()
		e.errorf("%v", err)
		return ExitUsage
	}
	srv.Spawn = sp
	url := srv.URL(name)
	fmt.Fprintln(e.stdout, url)
	fmt.Fprintf(e.stderr, "polyrepl: serving the view on %s as %s; Ctrl-C ends it\n", ln.Addr(), api.Clip(who.Who, api.LabelLimit, "label"))
	if v.open {
		e.openBrowser(url)
	}
	if err := srv.Serve(e.ctx); err != nil {
		e.errorf("the view stopped serving: %v", err)
		return ExitFailed
	}
	return ExitOK
}

// openBrowser opens url with the desktop's opener, in a process session
// of its own (Ctrl-C here must not reach the browser it starts); an
// opener missing or failing is said, and the page is served all the same.
func (e *env) openBrowser(url string) {
	opener := "xdg-open"
	if runtime.GOOS == "darwin" {
		opener = "open"
	}
	path, err := exec.LookPath(opener)
	if err != nil {
		fmt.Fprintf(e.stderr, "polyrepl: cannot open a browser: %s is not installed; open the address above yourself\n", opener)
		return
	}
	cmd := exec.Command(path, url)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(e.stderr, "polyrepl: cannot open a browser: %v; open the address above yourself\n", err)
		return
	}
	go cmd.Wait()
}

// newViewConn tells this view's requests from other clients with the
// same label.
func newViewConn() string {
	var b [6]byte
	rand.Read(b[:])
	return "view-" + hex.EncodeToString(b[:])
}
