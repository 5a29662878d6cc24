package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// tmuxPane is a Python REPL in a tmux pane on a private server, driven the
// pi-repl way: the cell goes into a file, a loader line is typed with
// send-keys, and capture-pane is polled until a marker the loader prints
// appears. Each poll is a tmux client process; it polls as fast as those
// can be spawned, the best case for this approach.
type tmuxPane struct {
	w      *world
	sock   string
	dir    string
	nonce  string
	n      int
	target string
}

func (t *tmuxPane) tmux(args ...string) ([]byte, error) {
	cmd := t.w.command(append([]string{"tmux", "-L", t.sock}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return out, fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, clip(string(ee.Stderr)))
		}
		return out, fmt.Errorf("tmux %s: %v", strings.Join(args, " "), err)
	}
	return out, nil
}

// startTmux starts the private server with python3 in its one pane and
// waits for the prompt, or says why it cannot.
func startTmux(w *world) (*tmuxPane, string) {
	if _, err := exec.LookPath("tmux"); err != nil {
		return nil, "tmux is not installed"
	}
	t := &tmuxPane{w: w, sock: "prb-" + w.tag[:8], dir: filepath.Join(w.root, "tmux"), nonce: w.tag[:6], target: "bench"}
	if err := os.Mkdir(t.dir, 0o700); err != nil {
		return nil, err.Error()
	}
	conf := filepath.Join(t.dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g history-limit 2000\nset -g status off\n"), 0o600); err != nil {
		return nil, err.Error()
	}
	w.tmuxSock = t.sock
	if _, err := t.tmux("-f", conf, "new-session", "-d", "-s", t.target, "-x", "200", "-y", "50", w.cfg.python, "-q"); err != nil {
		return nil, err.Error()
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		out, err := t.tmux("capture-pane", "-p", "-t", t.target)
		if err != nil {
			return nil, err.Error()
		}
		if strings.HasSuffix(strings.TrimRight(string(out), "\n "), ">>>") {
			return t, ""
		}
		if time.Now().After(deadline) {
			return nil, fmt.Sprintf("no Python prompt in the tmux pane within 20s; it shows %q", clip(string(out)))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// run times one cell: write it to a file, type the loader line, poll the
// pane until the marker shows, and check the output before the marker.
func (t *tmuxPane) run(code string, ok func(before string) bool) (float64, error) {
	t.n++
	id := fmt.Sprintf("%s-%d", t.nonce, t.n)
	path := filepath.Join(t.dir, id+".py")
	marker := "@@" + id
	// The echoed loader line holds the marker split in two, so only the
	// printed one matches. 'single' mode shows an expression's value as
	// the REPL would.
	loader := fmt.Sprintf("exec(compile(open(%q).read(), %q, 'single')); print('@@' + %q)", path, path, id)
	t0 := time.Now()
	if err := os.WriteFile(path, []byte(code+"\n"), 0o600); err != nil {
		return 0, err
	}
	if _, err := t.tmux("send-keys", "-t", t.target, "-l", loader, ";", "send-keys", "-t", t.target, "Enter"); err != nil {
		return 0, err
	}
	var screen string
	for {
		out, err := t.tmux("capture-pane", "-p", "-J", "-t", t.target, "-S", "-1000")
		if err != nil {
			return 0, err
		}
		screen = string(out)
		if strings.Contains(screen, "\n"+marker+"\n") {
			break
		}
		if time.Since(t0) > 60*time.Second {
			return 0, fmt.Errorf("no marker in the pane after 60s; it shows %q", clip(screen))
		}
	}
	d := time.Since(t0)
	os.Remove(path)
	before := screen[:strings.Index(screen, "\n"+marker+"\n")]
	if !ok(before) {
		return 0, fmt.Errorf("unexpected pane text before the marker: %q", clip(before[max(0, len(before)-300):]))
	}
	// Keep later captures small, as a long-lived pane would be trimmed.
	if _, err := t.tmux("clear-history", "-t", t.target); err != nil {
		return 0, err
	}
	return secs(d), nil
}

// stopTmux kills the private tmux server, and with it the pane's python.
func (w *world) stopTmux() {
	if w.tmuxSock == "" {
		return
	}
	cmd := w.command("tmux", "-L", w.tmuxSock, "kill-server")
	cmd.Run()
	w.tmuxSock = ""
}
