package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Glance describes session name cheaply (api.PathGlance): state, running
// cell and its question, names.
func (c *Client) Glance(ctx context.Context, name string) (api.SessionInfo, error) {
	reply, err := call[api.SessionsReply](ctx, c, request{method: http.MethodGet, path: api.PathGlance, session: name, noStart: true})
	if err != nil {
		return api.SessionInfo{}, err
	}
	if len(reply.Sessions) != 1 {
		return api.SessionInfo{}, &APIError{Status: http.StatusInternalServerError, ErrorReply: api.ErrorReply{Code: api.CodeInternal, Error: "the daemon's glance named no session"}}
	}
	return reply.Sessions[0], nil
}

// Complete completes word in session name (api.PathComplete), for a
// console's Tab.
func (c *Client) Complete(ctx context.Context, name, word string) (api.CompleteReply, error) {
	return call[api.CompleteReply](ctx, c, request{method: http.MethodPost, path: api.PathComplete, session: name,
		body: api.CompleteRequest{Word: word}, noStart: true})
}

// Vars looks at what session name holds without running a cell
// (api.PathVars): its own names (path ""; all: its imports and the
// runtime's built-ins too), or the members of what path names.
func (c *Client) Vars(ctx context.Context, name, path string, all bool) (api.VarsReply, error) {
	q := url.Values{}
	if path != "" {
		q.Set("path", path)
	}
	if all {
		q.Set("all", "1")
	}
	return call[api.VarsReply](ctx, c, request{method: http.MethodGet, path: api.PathVars, session: name, query: q.Encode()})
}
