package daemon

import (
	"net/http"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/holder"
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

// vars answers GET /v1/sessions/{name}/vars?path=PATH&all=1
// (api.PathVars): a look at what the session holds, without a cell.
func (d *Daemon) vars(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	res, err := d.sessions.Vars(r.PathValue("name"), holder.VarsArgs{Path: q.Get("path"), All: q.Get("all") == "1"}, asker(r))
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, res)
}
