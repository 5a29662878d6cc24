package setup

import (
	"errors"
	"strings"
	"testing"
)

// FuzzEdit feeds arbitrary files to every client's edit and removal: they
// never panic, refuse with a *ParseError or succeed, and a success is
// idempotent (a second edit changes nothing); what an edit registered a
// removal finds and takes out, and a second removal finds nothing. The verification inside the edit already
// holds every success to "only polyrepl's entry changed"; an internal
// error is a splice that went wrong and fails the fuzz.
func FuzzEdit(f *testing.F) {
	for _, seed := range []string{
		"", "{}", `{"mcpServers": {"polyrepl": {"command": "x", "args": []}}}`,
		"{\n\t\"a\": [1, {\"b\": \"\\\"}\"}]\n}", `{"mcpServers": null}`, `[]`,
		codexConfig, "[mcp_servers.polyrepl]\ncommand = \"x\"\n", "a = '''\n[x]\n'''\n",
		"[mcp_servers.polyrepl]\nargs = [\n  \"a\", # c\n]\n[mcp_servers.polyrepl.env]\n",
		"x = \"\"\"\n[mcp_servers.polyrepl]\n\"\"\"\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, c := range Clients() {
			if _, _, _, err := c.Unregister([]byte(in)); err != nil && strings.Contains(err.Error(), "internal error") {
				t.Fatalf("%s removal from %q: %v", c.Name, in, err)
			}
			out, _, err := c.Edit([]byte(in), srv)
			var pe *ParseError
			if errors.As(err, &pe) {
				continue
			}
			if err != nil {
				if strings.Contains(err.Error(), "internal error") {
					t.Fatalf("%s edit of %q: %v", c.Name, in, err)
				}
				continue
			}
			again, changed, err := c.Edit(out, srv)
			if err != nil || changed || string(again) != string(out) {
				t.Fatalf("%s: a second edit of %q (from %q) changed it to %q (%v)", c.Name, out, in, again, err)
			}
			rest, removed, _, err := c.Unregister(out)
			if err != nil || removed == "" {
				t.Fatalf("%s: removal from %q (from %q) removed %q (%v)", c.Name, out, in, removed, err)
			}
			if _, removed, _, err := c.Unregister(rest); err != nil || removed != "" {
				t.Fatalf("%s: a second removal from %q removed %q (%v)", c.Name, rest, removed, err)
			}
		}
	})
}
