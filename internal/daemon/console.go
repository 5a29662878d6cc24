package daemon

import (
	"net/http"

	"github.com/polyrepl/polyrepl/internal/api"
)

// glance answers GET /v1/sessions/{name}/glance (api.PathGlance).
func (d *Daemon) glance(w http.ResponseWriter, r *http.Request) {
	info, err := d.sessions.Glance(r.PathValue("name"), asker(r))
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, api.SessionsReply{Sessions: []api.SessionInfo{info}})
}

// complete answers POST /v1/sessions/{name}/complete (api.PathComplete).
func (d *Daemon) complete(w http.ResponseWriter, r *http.Request) {
	var req api.CompleteRequest
	if !decode(w, r, &req) {
		return
	}
	res, err := d.sessions.Complete(r.PathValue("name"), req, asker(r))
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, res)
}
