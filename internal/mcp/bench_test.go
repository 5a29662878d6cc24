package mcp

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkExecTrivial is an agent's `exec 1+1` through the MCP server,
// its client in this process over in-memory transports, the daemon in
// this process too: what the MCP layer adds to a cell (decoding the call,
// the reply's text and structured content) on top of the client's round
// trip (BenchmarkExecTrivial in internal/client).
func BenchmarkExecTrivial(b *testing.B) {
	f := newFixture(b, true)
	a := f.connect(&mcp.Implementation{Name: "bench", Version: "1"})
	args := map[string]any{"session": "bench", "code": "1+1"}
	a.ok("exec", args)
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "exec", Arguments: args}
	b.ReportAllocs()
	for b.Loop() {
		res, err := a.cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("exec: %v %v", err, res)
		}
	}
}
