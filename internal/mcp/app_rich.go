package mcp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type viewRichIn struct {
	Session string `json:"session" jsonschema:"session name"`
	Seq     int    `json:"seq" jsonschema:"the entry's seq"`
	Index   int    `json:"index" jsonschema:"which of its rich outputs, from 0"`
}

// viewRich is view_rich's reply: one rich output's bytes for the app
// (a data: URL's parts), or why they are not sent.
type viewRich struct {
	Session string `json:"session"`
	Seq     int    `json:"seq"`
	Index   int    `json:"index"`
	MIME    string `json:"mime"`
	Width   int    `json:"width,omitempty"`
	Height  int    `json:"height,omitempty"`
	Data    string `json:"data,omitempty"` // base64
	// Scaled says the image was scaled down to fit the reply's budget
	// (Width and Height are then the sent one's).
	Scaled bool   `json:"scaled,omitempty"`
	File   string `json:"file"` // the whole, on the machine of the session
	// Unsent says why Data is empty: too large for a reply, unreadable,
	// corrupt.
	Unsent string `json:"unsent,omitempty"`
}

// richTextLimit bounds a text rich output (SVG, HTML) sent to the app:
// cut, it would not show, so past it none is sent and the reply says so.
const richTextLimit = imageBudget

func (s *Server) viewRich(ctx context.Context, req *mcp.CallToolRequest, in viewRichIn) (viewRich, string, error) {
	e, err := s.client.Entry(ctx, in.Session, in.Seq)
	if err != nil {
		return viewRich{}, "", err
	}
	if in.Index < 0 || in.Index >= len(e.Rich) {
		return viewRich{}, "", fmt.Errorf("entry %d of session %s has %d rich outputs; index counts them from 0", in.Seq, in.Session, len(e.Rich))
	}
	x := e.Rich[in.Index]
	r := viewRich{Session: in.Session, Seq: in.Seq, Index: in.Index, MIME: x.MIME, Width: x.Width, Height: x.Height, File: x.File}
	if strings.HasPrefix(x.MIME, "image/") && x.MIME != "image/svg+xml" {
		s.richImage(&r)
	} else {
		richText(&r)
	}
	text := fmt.Sprintf("Rich output %d of entry %d of session %s (%s), for the view.", in.Index, in.Seq, in.Session, r.MIME)
	if r.Unsent != "" {
		text += " Not sent: " + r.Unsent
	}
	return r, text, nil
}

// richImage reads, checks and if need be scales down the image, within
// the budget of a reply's images.
func (s *Server) richImage(r *viewRich) {
	s.decoding.Lock()
	defer s.decoding.Unlock()
	b, facts, size, err := readImage(r.File)
	switch {
	case err != nil:
		r.Unsent = "its file cannot be read: " + quoteCut(err.Error(), quoted)
		return
	case b == nil && facts.Corrupt != "":
		r.Unsent = "it is corrupt: " + facts.Corrupt
		return
	case b == nil:
		r.Unsent = fmt.Sprintf("it is too large to decode (%d bytes, %d×%d)", size, facts.Width, facts.Height)
		return
	}
	fit, mime, scaled, err := s.prepare(b, facts, imageBudget)
	switch {
	case errors.Is(err, errOverBudget):
		r.Unsent = fmt.Sprintf("it does not fit a reply's %d bytes even scaled down", imageBudget)
		return
	case err != nil:
		r.Unsent = "it is corrupt: " + quoteCut(err.Error(), quoted)
		return
	}
	r.MIME, r.Width, r.Height = mime, facts.Width, facts.Height
	if scaled != (image.Point{}) {
		r.Scaled, r.Width, r.Height = true, scaled.X, scaled.Y
	}
	r.Data = base64.StdEncoding.EncodeToString(fit)
}

// richText reads a text rich output whole, or says why not.
func richText(r *viewRich) {
	f, err := os.Open(r.File)
	if err != nil {
		r.Unsent = "its file cannot be read: " + quoteCut(err.Error(), quoted)
		return
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, richTextLimit+1))
	switch {
	case err != nil:
		r.Unsent = "its file cannot be read: " + quoteCut(err.Error(), quoted)
	case len(b) > richTextLimit:
		r.Unsent = fmt.Sprintf("it is larger than a reply's %d bytes; the whole is in its file", richTextLimit)
	default:
		r.Data = base64.StdEncoding.EncodeToString(b)
	}
}
