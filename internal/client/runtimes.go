package client

import (
	"context"
	"net/http"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Runtimes asks the daemon which runtimes a new session started with env
// in cwd would find; the daemon keeps its survey until a directory it
// depends on changes (the PATH's directories and those watch names).
// With start, it starts a daemon if none runs (as
// any call does); without, it asks only one that runs.
func (c *Client) Runtimes(ctx context.Context, env []string, cwd string, watch []string, start bool) ([]api.RuntimeInfo, error) {
	reply, err := call[api.RuntimesReply](ctx, c, request{method: http.MethodPost, path: api.PathRuntimes,
		body: api.RuntimesRequest{Env: env, Cwd: cwd, Watch: watch}, noStart: !start})
	return reply.Runtimes, err
}
