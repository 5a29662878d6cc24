package daemon

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
)

// FuzzDecode feeds request bodies to the daemon's decoder: it never
// panics, and what it accepts is one JSON object of the request's type.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"code":"1+1","spawn":{"cwd":"/tmp","env":[]},"client":{"who":"a","how":"cli"}}`,
		`{"code":"x","timeout":1e309}`, `{"code":1}`, `{"code":"x"} {"code":"y"}`, `{"unknown":true}`,
		`[]`, `null`, ``, `{"code":"\u0000"}`, `{"code":"` + strings.Repeat("a", 1000) + `"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/v1/sessions/x/exec", strings.NewReader(string(body)))
		var req api.ExecRequest
		ok := decode(w, r, &req)
		if ok && w.Code != http.StatusOK {
			t.Fatalf("accepted %q but answered %d", body, w.Code)
		}
		if !ok && (w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"code":"bad-request"`)) {
			t.Fatalf("refused %q with %d %s, want 400 bad-request", body, w.Code, w.Body.String())
		}
	})
}
