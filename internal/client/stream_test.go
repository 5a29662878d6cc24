package client

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
)

// FuzzReadStream feeds the client's reader of streamed replies anything a
// broken or hostile daemon could send: it returns a result, an error, or
// a broken stream, and never panics or hangs.
func FuzzReadStream(f *testing.F) {
	for _, s := range []string{
		`{"progress":{"cell":1,"elapsed":3,"last_line":"x"}}` + "\n" + `{"result":{"session":"s","cell":1,"status":"done","output":"hi\n"}}`,
		`{"error":{"error":"busy","code":"busy"}}`,
		`{"progress":null}{"result":null}`, `{}`, `[`, ``, `{"result":{"cell":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var r api.CellResult
		progress := 0
		err := readStream(json.NewDecoder(bytes.NewReader(body)), &r, func(api.Progress) { progress++ })
		if err == nil && r.Session == "" && r.Status == "" && r.Cell == 0 && !bytes.Contains(body, []byte(`"result"`)) {
			t.Fatalf("%q read as a result %+v", body, r)
		}
	})
}
