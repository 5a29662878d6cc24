package daemon

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/session"
)

// Every refusal a session gives is typed with its own status; only the
// daemon's own failure is a 500 (a cell waiting for input once answered
// an exec with a 500).
func TestRefusalStatus(t *testing.T) {
	for _, code := range []string{api.CodeBadRequest, api.CodeNoSession, api.CodeNoEntry, api.CodeBusy, api.CodeStale,
		api.CodeDead, api.CodeForeign, api.CodeAdopting, api.CodeInput, api.CodeNoInput} {
		err := fmt.Errorf("wrapped: %w", &session.Error{ErrorReply: api.ErrorReply{Code: code, Error: "refused"}})
		body, status := errorReply(err)
		if status >= 500 || body.Code != code {
			t.Errorf("a %s refusal: status %d, code %s; want a 4xx with its code", code, status, body.Code)
		}
	}
	body, status := errorReply(errors.New("write unix @->/run/x.sock: writev: broken pipe"))
	if status != http.StatusInternalServerError || body.Code != api.CodeInternal || !strings.Contains(body.Error, "broken pipe") {
		t.Errorf("an untyped error: %d %+v; want a 500 of code internal", status, body)
	}
}

// A refusal that quotes a client's megabytes (a path, a name) says at
// most RefusalLimit characters of it, and the cut.
func TestRefusalBounded(t *testing.T) {
	long := strings.Repeat("p", 9<<20)
	body, status := errorReply(&session.Error{ErrorReply: api.ErrorReply{Code: api.CodeBadRequest, Error: fmt.Sprintf("the working directory %q is not an absolute path", long), Hint: long}})
	if status != http.StatusBadRequest || len(body.Error) > api.RefusalLimit+200 || len(body.Hint) > api.RefusalLimit+200 ||
		!strings.Contains(body.Error, "[error cut: 9,437,232 characters in all; showing the first 4,000]") || !strings.HasPrefix(body.Error, "the working directory \"ppp") {
		t.Errorf("a refusal quoting 9 MB: %d, %d-character error %.100q…%q, %d-character hint", status, len(body.Error), body.Error, body.Error[len(body.Error)-80:], len(body.Hint))
	}
	if short, _ := errorReply(&session.Error{ErrorReply: api.ErrorReply{Code: api.CodeBusy, Error: "busy", Hint: "wait"}}); short.Error != "busy" || short.Hint != "wait" {
		t.Errorf("a short refusal changed: %+v", short)
	}
}

// A refusal leaves whole: every field of the session's api.ErrorReply is
// the reply's (they were copied one by one, so a new field was dropped
// until someone copied it too), its words with what wrapped them.
func TestRefusalWhole(t *testing.T) {
	lost := api.Note{Kind: api.NoteLost, Session: "s", Names: []string{"df"}}
	want := api.ErrorReply{Code: api.CodeDead, Error: "session \"s\" died", Hint: "start it again", Field: api.FieldRuntime,
		Next: []api.Action{{Do: api.DoExec, Session: "s"}}, Death: &api.Death{By: api.ByExit, Cause: "exit 1"}, Lost: &lost}
	body, status := errorReply(&session.Error{ErrorReply: want})
	if status != http.StatusGone || !reflect.DeepEqual(body, want) {
		t.Errorf("refusal %+v became %d %+v", want, status, body)
	}
	body, _ = errorReply(fmt.Errorf("exec: %w", &session.Error{ErrorReply: want}))
	if body.Error != "exec: "+want.Error || body.Lost != want.Lost {
		t.Errorf("a wrapped refusal became %+v", body)
	}
}
