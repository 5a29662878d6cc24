package holder

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/driver"
)

// The hello's runtime facts are the holder's, held to their bounds where
// the daemon reads them; a holder of a build before facts were sent gets
// this binary's facts of its runtime, or neutral ones.
func TestDecodeHello(t *testing.T) {
	py, err := driver.Lookup("python") // linked into this test binary
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, hello string
		want        func(driver.Info) bool
	}{
		{"its own facts", `{"proto":1,"runtime":"cobol","facts":{"name":"cobol","family":"worker","ext":".cob","value_format":"> {v}"}}`,
			func(i driver.Info) bool {
				return reflect.DeepEqual(i, driver.Info{Name: "cobol", Family: "worker", Ext: ".cob", ValueFormat: "> {v}"})
			}},
		{"an older build's, of a runtime here", `{"proto":1,"runtime":"python"}`,
			func(i driver.Info) bool { return reflect.DeepEqual(i, py.Info()) }},
		{"an older build's, of a runtime not here", `{"proto":1,"runtime":"cobol"}`,
			func(i driver.Info) bool { return reflect.DeepEqual(i, driver.Neutral("cobol")) }},
		{"hostile", `{"proto":1,"runtime":"cobol","facts":{"name":"cobol","ext":"/../x","exit":"` + strings.Repeat("x", 1<<20) + `"}}`,
			func(i driver.Info) bool {
				return i.Ext == ".txt" && len(i.Exit) < driver.FactLimit+100 && strings.Contains(i.Exit, "[exit cut: 1,048,576 characters")
			}},
	} {
		h, err := decodeHello([]byte(tc.hello))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !tc.want(h.Facts) {
			t.Errorf("%s: facts %.300q", tc.name, fmt.Sprintf("%+v", h.Facts))
		}
	}
	if _, err := decodeHello([]byte(`{"proto":`)); err == nil {
		t.Error("a hello cut short was read")
	}
}

// Whatever a holder sends, the facts read from its hello are bounded and
// its transcript's extension is one.
func FuzzDecodeHello(f *testing.F) {
	f.Add(`{"name":"python","family":"worker","ext":".py","exes":["python3"],"value_format":"{v}"}`)
	f.Add(`{"ext":"/../../etc/x","exit":"\u0000\ufffd","version_args":["","",""]}`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, facts string) {
		b, _ := json.Marshal(map[string]any{"proto": 1, "runtime": "cobol", "facts": json.RawMessage(facts)})
		h, err := decodeHello(b)
		if err != nil {
			return
		}
		i := h.Facts
		if len(i.Ext) < 2 || i.Ext[0] != '.' || strings.ContainsAny(i.Ext, "/\\\x00") || len(i.Ext) > 17 {
			t.Errorf("extension %q", i.Ext)
		}
		for _, s := range []string{i.Name, i.Family, i.Lang, i.EnvVar, i.Exit, i.ConsoleLines, i.ValueFormat} {
			if utf8.RuneCountInString(s) > driver.FactLimit+100 || !utf8.ValidString(s) {
				t.Errorf("fact %.300q", s)
			}
		}
		for _, s := range []string{i.Needs, i.Limits} {
			if utf8.RuneCountInString(s) > driver.FactTextLimit+100 || !utf8.ValidString(s) {
				t.Errorf("fact %.300q", s)
			}
		}
		for _, l := range [][]string{i.Exes, i.VersionArgs} {
			if len(l) > driver.FactItems {
				t.Errorf("%d entries", len(l))
			}
			for _, s := range l {
				if utf8.RuneCountInString(s) > driver.FactLimit+100 {
					t.Errorf("entry %.300q", s)
				}
			}
		}
	})
}

// TestHelloSpareBounded: a hello's spared processes are held to MaxSpare,
// the newest kept, where they enter the daemon.
func TestHelloSpareBounded(t *testing.T) {
	spare := make([]map[string]any, MaxSpare+50)
	for i := range spare {
		spare[i] = map[string]any{"PID": i + 2, "Start": 1}
	}
	b, _ := json.Marshal(map[string]any{"proto": Proto, "runtime": "python", "spare": spare})
	h, err := decodeHello(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Spare) != MaxSpare || h.Spare[len(h.Spare)-1].PID != MaxSpare+51 {
		t.Errorf("%d spared kept, the last %+v; want the newest %d", len(h.Spare), h.Spare[len(h.Spare)-1], MaxSpare)
	}
}
