package mcp

import (
	"context"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/api"
)

// checkpointIn is the checkpoint tool's: one tool for both ends of a
// checkpoint, since a model that keeps one means to roll back to it, and
// every tool costs every conversation its description.
type checkpointIn struct {
	Session  string `json:"session" jsonschema:"session name"`
	Label    string `json:"label,omitempty" jsonschema:"the checkpoint's name"`
	Rollback bool   `json:"rollback,omitempty" jsonschema:"roll back to it instead"`
}

// checkpoint keeps a checkpoint of the session, or rolls it back to one
// (polyrepl checkpoint / rollback).
func (s *Server) checkpoint(ctx context.Context, req *mcp.CallToolRequest, in checkpointIn) (any, string, error) {
	start := time.Now()
	creq := api.CheckpointRequest{Label: in.Label, Client: s.who(req)}
	var notes []api.Note
	var res any
	if in.Rollback {
		r, err := s.client.Rollback(ctx, in.Session, creq)
		if err != nil {
			return nil, "", err
		}
		r.Notes = s.withoutOwnCalls(req, start, r.Notes)
		res, notes = r, r.Notes
	} else {
		r, err := s.client.Checkpoint(ctx, in.Session, creq)
		if err != nil {
			return nil, "", err
		}
		r.Notes = s.withoutOwnCalls(req, start, r.Notes)
		res, notes = r, r.Notes
	}
	return res, strings.TrimRight(s.notesText("", notes), "\n") + s.versionNote(), nil
}
