package cli

import (
	"reflect"
	"testing"
)

// Flags may come before, between or after the positional arguments, as
// people type them; "--" ends the flags so code may start with '-'.
func TestParseInterspersed(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		pos     []string
		timeout float64
		given   bool // -t was given (none: nil, the default)
		json    bool
		wantErr bool
	}{
		{args: []string{"s", "1+1"}, pos: []string{"s", "1+1"}},
		{args: []string{"s", "1+1", "-t", "5"}, pos: []string{"s", "1+1"}, timeout: 5, given: true},
		{args: []string{"-t", "2.5", "s", "1+1", "--json"}, pos: []string{"s", "1+1"}, timeout: 2.5, given: true, json: true},
		{args: []string{"s", "--timeout=7", "-"}, pos: []string{"s", "-"}, timeout: 7, given: true},
		{args: []string{"s", "--", "-1"}, pos: []string{"s", "-1"}},
		{args: []string{"s", "-x"}, wantErr: true},
		{args: []string{"s", "code", "-t"}, wantErr: true},
		{args: []string{"s", "code", "-t", "0"}, pos: []string{"s", "code"}, timeout: 0, given: true},
		{args: []string{"s", "code", "-t", "-1"}, wantErr: true},
		{args: []string{"s", "code", "-t", "601"}, wantErr: true},
		{args: []string{"s", "code", "-t", "NaN"}, wantErr: true},
		{args: []string{"s", "code", "-t5"}, pos: []string{"s", "code"}, timeout: 5, given: true},
		{args: []string{"-t0.5", "s", "code"}, pos: []string{"s", "code"}, timeout: 0.5, given: true},
		{args: []string{"s", "code", "-t601"}, wantErr: true},
		{args: []string{"s", "code", "-tx"}, wantErr: true},
		{args: []string{"s", "-x5"}, wantErr: true},
		{args: []string{"s", "-j"}, wantErr: true},
	} {
		fs := flags("exec")
		var timeout secondsFlag
		fs.Var(&timeout, "t", "")
		fs.Var(&timeout, "timeout", "")
		asJSON := fs.Bool("json", false, "")
		pos, err := parse(fs, tc.args)
		if (err != nil) != tc.wantErr {
			t.Errorf("parse(%q) error = %v, want error %v", tc.args, err, tc.wantErr)
			continue
		}
		if tc.wantErr {
			continue
		}
		if !reflect.DeepEqual(pos, tc.pos) || (timeout.v != nil) != tc.given || (tc.given && *timeout.v != tc.timeout) || *asJSON != tc.json {
			t.Errorf("parse(%q) = %q, t=%s, json=%v; want %q, t=%v (given %v), json=%v", tc.args, pos, timeout.String(), *asJSON, tc.pos, tc.timeout, tc.given, tc.json)
		}
	}
}

// `polyrepl -v` and `-V` are the version, as --version is.
func TestVersionFlags(t *testing.T) {
	want, _, _ := run("--version")
	for _, v := range []string{"-v", "-V", "version"} {
		if got, _, status := run(v); status != ExitOK || got != want {
			t.Errorf("polyrepl %s: exit %d, %q; want %q", v, status, got, want)
		}
	}
}
