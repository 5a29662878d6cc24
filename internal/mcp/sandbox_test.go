package mcp

import (
	"reflect"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
)

// A server started with --sandbox carries it as its client's ceiling,
// meaning its own directory; full is no sandbox.
func TestConfineSetsTheCeiling(t *testing.T) {
	s := New(&client.Client{}, "/work/proj", nil)
	s.Confine(api.Sandbox{Policy: api.SandboxFull, Network: api.NetworkOn})
	if s.client.Ceiling != nil || s.sandbox != nil {
		t.Errorf("full set a ceiling: %+v", s.client.Ceiling)
	}
	ww := api.Sandbox{Policy: api.SandboxWorkspaceWrite, Network: api.NetworkOff, Writable: []string{"/data"}}
	s.Confine(ww)
	if c := s.client.Ceiling; c == nil || c.Cwd != "/work/proj" || !reflect.DeepEqual(c.Sandbox, ww) {
		t.Errorf("ceiling %+v", c)
	}
}

// The exec tool's sandbox and network arguments become the spawn's
// policy, within the server's; what is not is refused naming the
// argument.
func TestExecSandbox(t *testing.T) {
	ww := api.Sandbox{Policy: api.SandboxWorkspaceWrite, Network: api.NetworkOff, Writable: []string{"/data"}}
	for _, tc := range []struct {
		name             string
		ceiling          *api.Sandbox
		policy, net, cwd string
		want             *api.Sandbox
		err              string
	}{
		{name: "nothing asked", ceiling: &ww, want: nil},
		{name: "nothing asked, none", want: nil},
		{name: "read-only", policy: "read-only", want: &api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff}},
		{name: "network on alone", net: "on", want: &api.Sandbox{Policy: api.SandboxFull, Network: api.NetworkOn}},
		{name: "the server's own", ceiling: &ww, policy: "workspace", cwd: "/work/proj", want: &ww},
		{name: "narrower", ceiling: &ww, policy: "read-only", want: &api.Sandbox{Policy: api.SandboxReadOnly, Network: api.NetworkOff}},
		{name: "network off under the server's", ceiling: &ww, net: "off", cwd: "/work/proj/sub", want: &api.Sandbox{Policy: api.SandboxWorkspaceWrite, Network: api.NetworkOff, Writable: []string{"/data"}}},
		{name: "wider policy", ceiling: &ww, policy: "full", err: `the "sandbox" argument asks for more than this server's sandbox`},
		{name: "wider network", ceiling: &ww, net: "on", cwd: "/work/proj", err: `the "network" argument asks for more`},
		{name: "cwd outside", ceiling: &ww, policy: "workspace-write", cwd: "/elsewhere", err: `the "cwd" argument asks for more`},
		{name: "bad policy", policy: "everything", err: `the "sandbox" argument: no sandbox policy "everything"`},
		{name: "bad network", net: "wifi", err: `the "network" argument: no network setting "wifi"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(&client.Client{}, "/work/proj", nil)
			if tc.ceiling != nil {
				s.Confine(*tc.ceiling)
			}
			cwd := tc.cwd
			if cwd == "" {
				cwd = "/work/proj"
			}
			got, err := s.execSandbox(tc.policy, tc.net, cwd)
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "What to do:") {
					t.Errorf("error %v, want %q", err, tc.err)
				}
			case err != nil:
				t.Errorf("error %v", err)
			case !reflect.DeepEqual(got, tc.want):
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
