package mcp

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/view"
)

// What the person beside the agent does in the app, and what the app
// looks at, travel as the app's own tools, not the agent's: a host
// passes the app's calls on the agent's connection, and through the
// agent's tools an interrupt or an answer would be recorded as the
// agent's, and its reply would take the activity the agent has not been
// told yet. The app's calls are the person's (their label, how "view"),
// on a connection of the app's own, told nothing.

type viewActIn struct {
	Session string `json:"session" jsonschema:"session name"`
	Action  string `json:"action" jsonschema:"interrupt, or answer (the running cell's question)"`
	Text    string `json:"text,omitempty" jsonschema:"the answer's line"`
	EOF     bool   `json:"eof,omitempty" jsonschema:"answer with end of file instead of a line"`
	Secret  bool   `json:"secret,omitempty" jsonschema:"the answer is a secret: kept out of the record"`
}

type viewGlanceIn struct {
	Session string `json:"session" jsonschema:"session name"`
}

// viewGlance is view_glance's reply: the session as sessions lists it,
// read cheaply (state, the running cell and its question).
type viewGlance struct {
	Session api.SessionInfo `json:"session"`
}

// person is who acts through the app: the person running the agent's
// client, by the label the CLI gives them.
func (s *Server) person(req *mcp.CallToolRequest) api.Client {
	c := s.who(req)
	return api.Client{Who: s.label, How: view.How, Conn: c.Conn + "-view", Quiet: true}.Bounded()
}

func (s *Server) viewAct(ctx context.Context, req *mcp.CallToolRequest, in viewActIn) (api.CellResult, string, error) {
	who := s.person(req)
	var (
		r   api.CellResult
		err error
	)
	switch in.Action {
	case "interrupt":
		r, err = s.client.Interrupt(ctx, in.Session, api.ControlRequest{Client: who})
	case "answer":
		r, err = s.client.Input(ctx, in.Session, api.InputRequest{Text: in.Text, EOF: in.EOF, Secret: in.Secret, Timeout: new(float64), Client: who})
	default:
		return r, "", fmt.Errorf("action %s: give interrupt or answer", quoteCut(in.Action, quoted))
	}
	if err != nil {
		return r, "", err
	}
	return r, fmt.Sprintf("%s sent to session %s for the view; cell %d is %s.", in.Action, in.Session, r.Cell, r.Status), nil
}

func (s *Server) viewGlance(ctx context.Context, req *mcp.CallToolRequest, in viewGlanceIn) (viewGlance, string, error) {
	info, err := s.client.Glance(ctx, in.Session)
	if err != nil {
		return viewGlance{}, "", err
	}
	return viewGlance{Session: info}, fmt.Sprintf("Session %s is %s, for the view.", in.Session, info.State), nil
}
