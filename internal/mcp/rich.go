package mcp

import (
	"crypto/sha256"
	"fmt"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/render"
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

// images are the image blocks of a cell's rich outputs for this client,
// and a line saying what was not sent and why ("" if all were). An
// image this connection was sent before is not sent again.
func (s *Server) images(req *mcp.CallToolRequest, r api.CellResult) ([]mcp.Content, string) {
	var pick []int
	for i, x := range r.Rich {
		if strings.HasPrefix(x.MIME, "image/") && x.MIME != "image/svg+xml" {
			pick = append(pick, i)
		}
	}
	if len(pick) > imagesInline {
		pick = append(pick[:imagesInline-1], pick[len(pick)-1])
	}
	var out []mcp.Content
	var again, scaled, over []string
	budget := imageBudget
	for _, i := range pick {
		x := r.Rich[i]
		n := fmt.Sprint(i + 1)
		if x.Bytes > 64<<20 {
			over = append(over, n) // not worth reading to scale
			continue
		}
		b, err := os.ReadFile(x.File)
		if err != nil {
			over = append(over, n)
			continue
		}
		if !s.firstSend(req, b) {
			again = append(again, n)
			continue
		}
		mime := x.MIME
		if max(x.Width, x.Height) > imageSide || len(b) > budget {
			fit, m, size, err := fitImage(b, imageSide, budget)
			if err != nil {
				over = append(over, n)
				continue
			}
			b, mime = fit, m
			scaled = append(scaled, fmt.Sprintf("%s to %d×%d", n, size.X, size.Y))
		}
		budget -= len(b)
		out = append(out, &mcp.ImageContent{Data: b, MIMEType: mime})
	}
	var said []string
	if skipped := len(r.Rich) - len(pick); skipped > 0 {
		said = append(said, fmt.Sprintf("%s not shown inline (a reply shows the first %d and the last); their files are listed above.", render.Plural(skipped, "image"), imagesInline-1))
	}
	if len(again) > 0 {
		said = append(said, fmt.Sprintf("Image %s is the same as one you were already sent: not sent again.", strings.Join(again, ", ")))
	}
	if len(scaled) > 0 {
		said = append(said, fmt.Sprintf("Scaled down for you (the file keeps the full size): image %s.", strings.Join(scaled, ", ")))
	}
	if len(over) > 0 {
		said = append(said, fmt.Sprintf("Image %s would pass this reply's budget of %d KB of images: not sent; its file is listed above.", strings.Join(over, ", "), imageBudget/1000))
	}
	if len(said) == 0 {
		return out, ""
	}
	return out, "[" + strings.Join(said, " ") + "]"
}

// firstSend reports whether this connection has not been sent image b
// before, and remembers it sent.
func (s *Server) firstSend(req *mcp.CallToolRequest, b []byte) bool {
	sum := sha256.Sum256(b)
	key := string(sum[:])
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
	if seen[key] {
		return false
	}
	seen[key] = true
	return true
}
