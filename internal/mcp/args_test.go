package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestNumbersAsStrings: a numeric argument sent as a string (the MCP
// Inspector's command line sends "5") is taken as its number, and a
// refusal says what to send in words, never a Go type's name (issue 35
// item 13).
func TestNumbersAsStrings(t *testing.T) {
	execSchema, err := jsonschema.For[execIn](nil)
	if err != nil {
		t.Fatal(err)
	}
	histSchema, err := jsonschema.For[historyIn](nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args    string
		timeout float64 // want, when no error
		err     string  // a part of the refusal; "" for none
	}{
		{`{"session":"s","code":"1","timeout":"5"}`, 5, ""},
		{`{"session":"s","code":"1","timeout":" 2.5 "}`, 2.5, ""},
		{`{"session":"s","code":"1","timeout":7}`, 7, ""},
		{`{"session":"s","code":"1","timeout":"soon"}`, 0, `the argument "timeout" must be a number of seconds, not "soon"`},
		{`{"session":"s","code":"1","timeout":"NaN"}`, 0, `must be a number of seconds`},
		{`{"session":"s","code":"1","timeout":true}`, 0, `the argument "timeout" must be a number of seconds, not bool`},
		{`{"session":"s","code":5}`, 0, `the argument "code" must be a string, not number`},
	} {
		var in execIn
		err := decodeArgs(json.RawMessage(c.args), &in, execSchema)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.args, err)
		case c.err == "" && (in.Timeout == nil || *in.Timeout != c.timeout):
			t.Errorf("%s: timeout %v, want %v", c.args, in.Timeout, c.timeout)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one saying %q", c.args, err, c.err)
		}
		if err != nil && strings.Contains(err.Error(), "float64") {
			t.Errorf("%s: %v names a Go type", c.args, err)
		}
	}
	var h historyIn
	if err := decodeArgs(json.RawMessage(`{"session":"s","since":"12"}`), &h, histSchema); err != nil || h.Since != 12 {
		t.Errorf(`since "12": %+v, %v; want 12`, h, err)
	}
	if err := decodeArgs(json.RawMessage(`{"session":"s","since":"1.5"}`), &h, histSchema); err == nil || !strings.Contains(err.Error(), "a whole number") {
		t.Errorf(`since "1.5": %v, want "a whole number"`, err)
	}
}
