package daemon

import (
	"errors"
	"fmt"
	"net/http"
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
		api.CodeDead, api.CodeForeign, api.CodeInput, api.CodeNoInput} {
		err := fmt.Errorf("wrapped: %w", &session.Error{Code: code, Msg: "refused"})
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
