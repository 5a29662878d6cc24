package client

import (
	"context"
	"net/http"

	"github.com/polyrepl/polyrepl/internal/api"
)

// The methods below each describe one request; call sends it.

// Exec runs a cell, creating the session on first use.
func (c *Client) Exec(ctx context.Context, name string, req api.ExecRequest) (api.CellResult, error) {
	return c.ExecProgress(ctx, name, req, nil)
}

// ExecProgress is Exec with progress events every req.Progress seconds
// while the cell runs.
func (c *Client) ExecProgress(ctx context.Context, name string, req api.ExecRequest, prog func(api.Progress)) (api.CellResult, error) {
	return call[api.CellResult](ctx, c, request{method: http.MethodPost, path: api.PathExec, session: name, body: req, prog: prog})
}

// Wait collects a running or uncollected cell.
func (c *Client) Wait(ctx context.Context, name string, req api.WaitRequest) (api.CellResult, error) {
	return c.WaitProgress(ctx, name, req, nil)
}

// WaitProgress is Wait with progress events, as ExecProgress.
func (c *Client) WaitProgress(ctx context.Context, name string, req api.WaitRequest, prog func(api.Progress)) (api.CellResult, error) {
	return call[api.CellResult](ctx, c, request{method: http.MethodPost, path: api.PathWait, session: name, body: req, prog: prog})
}

// Input answers the question the running cell asks, then waits for the
// cell as Wait does.
func (c *Client) Input(ctx context.Context, name string, req api.InputRequest) (api.CellResult, error) {
	return c.InputProgress(ctx, name, req, nil)
}

// InputProgress is Input with progress events, as ExecProgress.
func (c *Client) InputProgress(ctx context.Context, name string, req api.InputRequest, prog func(api.Progress)) (api.CellResult, error) {
	return call[api.CellResult](ctx, c, request{method: http.MethodPost, path: api.PathInput, session: name, body: req, prog: prog})
}

// Interrupt stops the running cell and returns its result.
func (c *Client) Interrupt(ctx context.Context, name string, req api.ControlRequest) (api.CellResult, error) {
	return call[api.CellResult](ctx, c, request{method: http.MethodPost, path: api.PathInterrupt, session: name, body: req})
}

// Restart replaces the session's process with a fresh one.
func (c *Client) Restart(ctx context.Context, name string, req api.ControlRequest) (api.KillReply, error) {
	return call[api.KillReply](ctx, c, request{method: http.MethodPost, path: api.PathRestart, session: name, body: req})
}

// Fork makes req.New a new session whose runtime is a fork of the
// session's, taken between cells.
func (c *Client) Fork(ctx context.Context, name string, req api.ForkRequest) (api.ForkReply, error) {
	return call[api.ForkReply](ctx, c, request{method: http.MethodPost, path: api.PathFork, session: name, body: req})
}

// Kill ends the session and its whole process tree.
func (c *Client) Kill(ctx context.Context, name string, req api.ControlRequest) (api.KillReply, error) {
	return call[api.KillReply](ctx, c, request{method: http.MethodPost, path: api.PathKill, session: name, body: req})
}

// Sessions lists every session, or the named one.
func (c *Client) Sessions(ctx context.Context, name string) ([]api.SessionInfo, error) {
	r := request{method: http.MethodGet, path: api.PathSessions}
	if name != "" {
		r.path, r.session = api.PathSession, name
	}
	reply, err := call[api.SessionsReply](ctx, c, r)
	return reply.Sessions, err
}

// Status describes the running daemon. It never starts one.
func (c *Client) Status(ctx context.Context) (api.StatusReply, error) {
	return call[api.StatusReply](ctx, c, request{method: http.MethodGet, path: api.PathStatus, noStart: true})
}

// Stop ends the daemon and every session. It never starts one.
func (c *Client) Stop(ctx context.Context, keepSessions bool) (api.StopReply, error) {
	r := request{method: http.MethodPost, path: api.PathStop, noStart: true}
	if keepSessions {
		r.body = api.StopRequest{KeepSessions: true}
	}
	return call[api.StopReply](ctx, c, r)
}

// Start makes sure a daemon is running, starting one if needed.
func (c *Client) Start(ctx context.Context) (api.StatusReply, bool, error) {
	if st, err := c.Status(ctx); err == nil {
		return st, false, nil
	} else if !IsNotRunning(err) {
		return st, false, err
	}
	if err := c.startDaemon(ctx); err != nil {
		return api.StatusReply{}, false, &ConnError{err}
	}
	st, err := c.Status(ctx)
	return st, true, err
}

// Checkpoint keeps a frozen fork of the session's runtime, taken between
// cells.
func (c *Client) Checkpoint(ctx context.Context, name string, req api.CheckpointRequest) (api.CheckpointReply, error) {
	return call[api.CheckpointReply](ctx, c, request{method: http.MethodPost, path: api.PathCheckpoint, session: name, body: req})
}

// Rollback ends the session's runtime and resumes a checkpoint in its
// place.
func (c *Client) Rollback(ctx context.Context, name string, req api.CheckpointRequest) (api.RollbackReply, error) {
	return call[api.RollbackReply](ctx, c, request{method: http.MethodPost, path: api.PathRollback, session: name, body: req})
}
