package main

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// peers_driver.mjs, written out at run time: the TypeScript SDK's client
// that the peers section drives one request a line.
//
//go:embed peers_driver.mjs
var peersDriver []byte

// peerDriver is one Node process holding the SDK's client.
type peerDriver struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// driverReply is what peers_driver.mjs answers.
type driverReply struct {
	OK           bool    `json:"ok"`
	Secs         float64 `json:"secs"`
	Error        string  `json:"error"`
	Tools        []any   `json:"tools"`
	Instructions string  `json:"instructions"`
	Server       struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"server"`
	ProtocolErrors    int    `json:"protocol_errors"`
	LastProtocolError string `json:"last_protocol_error"`
	Result            *struct {
		Content           []map[string]any `json:"content"`
		StructuredContent any              `json:"structuredContent"`
		IsError           bool             `json:"isError"`
	} `json:"result"`
}

func startPeerDriver(w *world, sdk string) (*peerDriver, error) {
	script := filepath.Join(w.root, "peers_driver.mjs")
	if err := os.WriteFile(script, peersDriver, 0o600); err != nil {
		return nil, err
	}
	d := &peerDriver{cmd: w.command("node", script, sdk)}
	d.cmd.Stderr = os.Stderr
	var err error
	if d.in, err = d.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := d.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	d.out = bufio.NewReaderSize(stdout, 1<<20)
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("node %s: %w", script, err)
	}
	return d, nil
}

// do sends one request and reads its answer.
func (d *peerDriver) do(req map[string]any) (*driverReply, error) {
	var r driverReply
	if err := exchange(d.in, d.out, "the TypeScript client", req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

func (d *peerDriver) close() {
	if d == nil {
		return
	}
	d.do(map[string]any{"op": "close"})
	d.in.Close()
	done := make(chan struct{})
	go func() { d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		d.cmd.Process.Kill()
		<-done
	}
}
