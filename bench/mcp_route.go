package main

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

//go:embed mcp_driver.mjs
var mcpDriver []byte

// mcpRoute is an agent's round trip as an agent makes it: the official
// TypeScript MCP SDK (from $POLYREPL_BENCH_MCP_SDK or
// $POLYREPL_TEST_MCP_SDK, a node_modules directory) driving `polyrepl
// mcp` over stdio, in a Node process (mcp_driver.mjs) that times each call
// itself, and a unix-socket echo round trip from that same process, the
// reference the target divides by.
type mcpRoute struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	echo net.Listener
}

// startMCPRoute starts the Node client and the echo server, or says why
// it cannot.
func startMCPRoute(w *world) (*mcpRoute, string) {
	sdk := os.Getenv("POLYREPL_BENCH_MCP_SDK")
	if sdk == "" {
		sdk = os.Getenv("POLYREPL_TEST_MCP_SDK")
	}
	if _, err := exec.LookPath("node"); err != nil || sdk == "" {
		return nil, "needs node and the TypeScript MCP SDK: set POLYREPL_BENCH_MCP_SDK to a node_modules holding @modelcontextprotocol/sdk (npm install @modelcontextprotocol/sdk)"
	}
	script := filepath.Join(w.root, "mcp_driver.mjs")
	if err := os.WriteFile(script, mcpDriver, 0o600); err != nil {
		return nil, err.Error()
	}
	echoPath := filepath.Join(w.root, "echo.sock")
	l, err := net.Listen("unix", echoPath)
	if err != nil {
		return nil, err.Error()
	}
	go serveEcho(l)
	// What the SDK's stripped environment lacks and this world needs.
	args := []string{script, sdk, w.bin, echoPath}
	for _, kv := range w.env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "HOME", "POLYREPL_PYTHON", tagVar:
			args = append(args, kv)
		}
	}
	m := &mcpRoute{echo: l}
	m.cmd = w.command(append([]string{"node"}, args...)...)
	m.cmd.Stderr = os.Stderr
	if m.in, err = m.cmd.StdinPipe(); err != nil {
		l.Close()
		return nil, err.Error()
	}
	stdout, err := m.cmd.StdoutPipe()
	if err != nil {
		l.Close()
		return nil, err.Error()
	}
	m.out = bufio.NewReader(stdout)
	if err := m.cmd.Start(); err != nil {
		l.Close()
		return nil, err.Error()
	}
	if _, err := m.call("mcp"); err != nil {
		m.close()
		return nil, fmt.Sprintf("the TypeScript client's first exec: %v", err)
	}
	return m, ""
}

// serveEcho answers every byte with itself, on each connection.
func serveEcho(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			io.Copy(c, c)
		}()
	}
}

// call asks the Node process for one timed request: "mcp" or "echo".
func (m *mcpRoute) call(what string) (float64, error) {
	if _, err := io.WriteString(m.in, what+"\n"); err != nil {
		return 0, fmt.Errorf("the TypeScript client is gone: %w", err)
	}
	line, err := m.out.ReadBytes('\n')
	if err != nil {
		return 0, fmt.Errorf("the TypeScript client is gone: %w", err)
	}
	var r struct {
		OK    bool    `json:"ok"`
		Secs  float64 `json:"secs"`
		Error string  `json:"error"`
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return 0, fmt.Errorf("the TypeScript client answered %q: %w", clip(string(line)), err)
	}
	if !r.OK {
		return 0, fmt.Errorf("the TypeScript client says: %s", r.Error)
	}
	return r.Secs, nil
}

// rows are the route and its reference, for the trivial cell's table.
func (m *mcpRoute) rows() []*alt {
	return []*alt{
		{key: "mcp-ts", label: "`polyrepl mcp` driven by the TypeScript MCP SDK (stdio): `exec` of `1+1`, timed in the client",
			run: func(int) (float64, error) { return m.call("mcp") }},
		{key: "echo-ts", label: "a unix-socket echo round trip from that same Node process", ref: true,
			run: func(int) (float64, error) { return m.call("echo") }},
	}
}

func (m *mcpRoute) close() {
	m.in.Close()
	m.cmd.Wait()
	m.echo.Close()
}
