package mcp

import (
	"context"

	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/render"
)

// VarsChars bounds the text of a vars reply: a model pays for each
// character; the lines past it are counted, not sent.
const VarsChars = 4000

// vars answers the vars tool: a look at what a session holds, in the
// model's words, its lines cut at VarsChars with the rest counted, and
// the same lines as data.
func (s *Server) vars(ctx context.Context, req *mcp.CallToolRequest, in varsIn) (api.VarsReply, string, error) {
	r, err := s.client.Vars(ctx, in.Session, in.Path, in.All)
	if err != nil {
		return r, "", err
	}
	r = fitVars(r, func(r api.VarsReply) string { return render.Vars(r, s.voice) })
	return r, strings.TrimRight(render.Vars(r, s.voice), "\n") + s.versionNote(), nil
}

// fitVars keeps the first lines of r whose words fit VarsChars; Total
// still counts them all, so the words say how many were left out.
func fitVars(r api.VarsReply, words func(api.VarsReply) string) api.VarsReply {
	for len([]rune(words(r))) > VarsChars && len(r.Vars) > 0 {
		keep := len(r.Vars) * 3 / 4
		if keep == len(r.Vars) {
			keep--
		}
		r.Vars = r.Vars[:keep]
	}
	return r
}
