package jupyter

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
)

// TestKernelTextsBounded: what a kernel or a gateway says is bounded
// where it enters, the cut said: a 3 MB error (its whole saved to a
// file), a gateway's 3 MB error JSON, a 2 MB display_name.
func TestKernelTextsBounded(t *testing.T) {
	k, err := newKernel(nil, driver.Spec{RuntimeDir: t.TempDir(), ValueLimit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("line of a traceback\n", 150_000) // 3 MB
	e := errorContent{Ename: strings.Repeat("E", 5000), Evalue: strings.Repeat("v", 3<<20), Traceback: []string{big}}
	r := driver.Result{Status: api.StatusError, Error: e.cellError()}
	k.boundError(&r)
	if utf8.RuneCountInString(r.Error.Message) > api.ErrorLimit+100 || utf8.RuneCountInString(r.Error.Traceback) > api.ErrorLimit+100 ||
		utf8.RuneCountInString(r.Error.Type) > maxLabelChars+80 {
		t.Errorf("error of %d/%d/%d characters", len(r.Error.Type), len(r.Error.Message), len(r.Error.Traceback))
	}
	if r.MessageTotal != 3<<20 || r.TracebackTotal < len(big)-1 || r.ErrorFile == "" {
		t.Errorf("totals %d, %d, file %q (%s): want the whole counted and saved", r.MessageTotal, r.TracebackTotal, r.ErrorFile, r.ErrorSaveErr)
	}
	if fi, err := os.Stat(r.ErrorFile); err != nil || fi.Size() < 6_000_000 {
		t.Errorf("the whole error's file: %v %v", fi, err)
	}
	if !strings.Contains(r.Error.Message, "characters cut") {
		t.Errorf("the message does not say its cut: %.200q", r.Error.Message)
	}

	msg, _ := json.Marshal(map[string]string{"message": strings.Repeat("m", 3<<20), "reason": strings.Repeat("r", 1<<20)})
	if s := said(msg); len(s) > maxSaid+maxLabelChars+200 || !strings.Contains(s, "cut: 3,145,728 characters in all") {
		t.Errorf("a gateway's 3 MB error JSON said in %d bytes: %.200q", len(s), s)
	}
	if s := said([]byte(strings.Repeat("<html>", 1<<20))); len(s) > 1000 {
		t.Errorf("a gateway's 6 MB error page said in %d bytes", len(s))
	}
	if l := label(strings.Repeat("é", 2<<20), maxLabelChars); utf8.RuneCountInString(l) > maxLabelChars+80 || !strings.Contains(l, "cut: 2,097,152 characters in all") {
		t.Errorf("a 2 MB display_name labelled %.300q", l)
	}
	if l := label("a\xffb", 10); !utf8.ValidString(l) {
		t.Errorf("label %q is not UTF-8", l)
	}
}
