package mcp

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"image"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Bounds of the images one reply shows a model inline: an image block
// is what lets a model see a plot, and what it costs is paid from its
// context. Past them an image is listed with its path (in the text, as
// every one is) and not sent.
const (
	imagesInline = 4       // per reply: the first ones and the last
	imageBudget  = 300_000 // bytes of images per reply
	imageSide    = 1568    // pixels on the long side: larger is scaled down
)

// imageReport is what a reply says of its images besides sending them,
// as facts (imagesText puts them into words).
type imageReport struct {
	Unshown int          // images past the ones a reply shows
	Again   []int        // sent before on this connection
	Scaled  []scaledNote // scaled down
	Over    []int        // past the reply's budget of images
	Unsent  []imageNote  // too large to decode or read, corrupt, or unreadable
}

type scaledNote struct{ N, Width, Height int }

// imageNote is an image not sent, and why.
type imageNote struct {
	N     int
	File  string
	Bytes int64
	Said  string     // the MIME type the runtime gave it
	Facts imageFacts // what its header says
	Err   string     // its file could not be read, or decoded (corrupt)
}

// images are the image blocks of a cell's rich outputs for this client,
// and what the reply says of them. An image this connection was sent
// before is not sent again; an image is sent as what its bytes are
// (a JPEG a runtime called PNG is a JPEG).
func (s *Server) images(req *mcp.CallToolRequest, r api.CellResult) ([]mcp.Content, imageReport) {
	r.Rich = shownRich(r.Rich, r) // numbered as the text lists them
	var pick []int
	for i, x := range r.Rich {
		if strings.HasPrefix(x.MIME, "image/") && x.MIME != "image/svg+xml" {
			pick = append(pick, i)
		}
	}
	var rep imageReport
	if len(pick) > imagesInline {
		rep.Unshown = len(pick) - imagesInline
		pick = append(pick[:imagesInline-1], pick[len(pick)-1])
	}
	var out []mcp.Content
	budget := imageBudget
	// One reply's images at a time: each can take decodeLimit, and its
	// file readLimit.
	s.decoding.Lock()
	defer s.decoding.Unlock()
	for _, i := range pick {
		x := r.Rich[i]
		note := imageNote{N: i + 1, File: x.File, Bytes: x.Bytes, Said: x.MIME}
		b, facts, size, err := readImage(x.File)
		note.Facts, note.Bytes = facts, size
		if err != nil {
			note.Err = quoteCut(err.Error(), quoted)
		}
		if b == nil {
			rep.Unsent = append(rep.Unsent, note)
			continue
		}
		key := sha256.Sum256(b)
		if s.sentBefore(req, key) {
			rep.Again = append(rep.Again, note.N)
			continue
		}
		fit, mime, scaled, err := s.prepare(b, facts, budget)
		switch {
		case errors.Is(err, errOverBudget):
			rep.Over = append(rep.Over, note.N)
			continue
		case err != nil:
			note.Facts.Corrupt = quoteCut(err.Error(), quoted)
			rep.Unsent = append(rep.Unsent, note)
			continue
		}
		if scaled != (image.Point{}) {
			rep.Scaled = append(rep.Scaled, scaledNote{note.N, scaled.X, scaled.Y})
		}
		s.markSent(req, key)
		budget -= len(fit)
		out = append(out, &mcp.ImageContent{Data: fit, MIMEType: mime})
	}
	return out, rep
}

// readImage reads an image file whose header says it can be decoded
// within decodeLimit and whose size is within readLimit; b is nil when
// it is not, and facts and size say why.
func readImage(path string) (b []byte, facts imageFacts, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, imageFacts{}, 0, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	if facts = inspectImage(f); facts.Corrupt != "" || facts.Decoded > decodeLimit || size > readLimit {
		return nil, facts, size, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, facts, size, err
	}
	b, err = io.ReadAll(io.LimitReader(f, readLimit+1))
	size = max(size, int64(len(b)))
	if err != nil || len(b) > readLimit {
		return nil, facts, size, err
	}
	// What is decoded is what was read: its own header, again.
	if facts = inspectImage(bytes.NewReader(b)); facts.Corrupt != "" || facts.Decoded > decodeLimit {
		return nil, facts, size, nil
	}
	return b, facts, size, nil
}

// prepare decodes an image and returns what to send: its own bytes if they fit, or it scaled
// down (size is then the new size). An error from decoding says the
// image is corrupt.
func (s *Server) prepare(b []byte, facts imageFacts, budget int) ([]byte, string, image.Point, error) {
	if facts.Decoded > 32<<20 {
		// Give back what a large image took once it is sent, rather
		// than hold it until the heap grows again.
		defer debug.FreeOSMemory()
	}
	img, err := decodeImage(b)
	if err != nil {
		return nil, "", image.Point{}, err
	}
	if max(facts.Width, facts.Height) <= imageSide && len(b) <= budget {
		return b, facts.mime(), image.Point{}, nil
	}
	return fitImage(img, imageSide, budget)
}

// trueRich is rich with each image as its header says it is: its MIME
// type by its bytes and its size checked, none when it is corrupt. A
// runtime's word for it is not taken: a _repr_png_ can return a JPEG,
// or bytes whose header claims 2550338678×680730779 pixels.
func trueRich(rich []api.Rich) []api.Rich {
	var out []api.Rich
	for i, x := range rich {
		if !strings.HasPrefix(x.MIME, "image/") || x.MIME == "image/svg+xml" {
			continue
		}
		f, err := inspectFile(x.File)
		if err != nil {
			continue
		}
		if out == nil {
			out = slices.Clone(rich)
		}
		y := &out[i]
		y.Width, y.Height = 0, 0
		if f.Format != "" {
			y.MIME = f.mime()
		}
		if f.Corrupt == "" {
			y.Width, y.Height = f.Width, f.Height
		}
	}
	if out == nil {
		return rich
	}
	return out
}

// sentBefore reports whether this connection was sent the image whose
// hash is key.
func (s *Server) sentBefore(req *mcp.CallToolRequest, key [32]byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent[req.Session][string(key[:])]
}

// markSent remembers that this connection was sent the image key.
func (s *Server) markSent(req *mcp.CallToolRequest, key [32]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sent == nil {
		s.sent = map[*mcp.ServerSession]map[string]bool{}
	}
	seen := s.sent[req.Session]
	if seen == nil {
		seen = map[string]bool{}
		s.sent[req.Session] = seen
	}
	seen[string(key[:])] = true
}
