package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	pmcp "github.com/polyrepl/polyrepl/internal/mcp"
)

// run runs the command line on args without a daemon, for commands that
// need none (help, a command's --help, usage errors).
func run(args ...string) (stdout, stderr string, status int) {
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, ctx: context.Background()}
	status = e.main(args)
	return out.String(), errb.String(), status
}

// `polyrepl help` lists every command there is, by its generated synopsis.
func TestHelpListsEveryCommand(t *testing.T) {
	out, _, status := run("help")
	if status != ExitOK {
		t.Fatalf("help exited %d", status)
	}
	for _, c := range commands {
		if !strings.Contains(out, "\n  "+c.usage()+"\n      "+c.summary+"\n") {
			t.Errorf("help does not list %s as %q:\n%s", c.name, c.usage(), out)
		}
	}
	for _, name := range []string{"history", "log", "export", "attach"} {
		if lookup(name) == nil || !strings.Contains(out, "\n  "+name+" ") {
			t.Errorf("help does not list %s", name)
		}
	}
}

// `help CMD`, `CMD --help` and `CMD -h` print the same help: the synopsis
// and every flag, generated from the flags the command declares.
func TestCommandHelp(t *testing.T) {
	for _, c := range commands {
		want, _, status := run("help", c.name)
		if status != ExitOK || !strings.HasPrefix(want, "Usage: polyrepl "+c.usage()+"\n") {
			t.Errorf("help %s exited %d and printed:\n%s", c.name, status, want)
		}
		_, fs := c.declared()
		for _, d := range fs.defs {
			if d.usage == "" || !strings.Contains(want, dash(d.names[0])) {
				t.Errorf("help %s: flag %s has no line in\n%s", c.name, d.names[0], want)
			}
		}
		if c.name == "help" {
			continue // `help --help` is help's own listing
		}
		for _, h := range []string{"--help", "-h"} {
			if got, _, status := run(c.name, h); status != ExitOK || got != want {
				t.Errorf("%s %s exited %d, printed:\n%s\nwant the help:\n%s", c.name, h, status, got, want)
			}
		}
	}
}

// The synopses people and scripts know stay as they were.
func TestSynopses(t *testing.T) {
	for name, want := range map[string]string{
		"exec":    "exec NAME CODE|- [-t SECS] [--runtime R] [--exe PATH] [--python PATH] [--cwd DIR] [--project DIR] [--memory SIZE] [--kernel NAME] [--gateway URL] [--gateway-http] [--sandbox POLICY] [--network on|off] [--readable DIR] [--writable DIR] [--sandbox-best-effort] [--json]",
		"wait":    "wait NAME [-t SECS] [--json]",
		"history": "history NAME [ID] [--since SEQ] [--json]",
		"log":     "log NAME [--follow] [--since SEQ] [--json]",
		"export":  "export NAME [--format md|ipynb] [-o FILE] [--force]",
		"attach":  "attach NAME [--raw]",
		"kill":    "kill NAME [--json]",
		"status":  "status [--json]",
		"stop":    "stop [--keep-sessions]",
	} {
		if got := lookup(name).usage(); got != want {
			t.Errorf("%s synopsis %q, want %q", name, got, want)
		}
	}
}

// `help mcp` names every tool the MCP server offers, from the server.
func TestHelpMCPNamesEveryTool(t *testing.T) {
	out, _, _ := run("help", "mcp")
	tools := pmcp.Tools()
	if len(tools) != 12 {
		t.Errorf("the MCP server offers %d tools, want 12", len(tools))
	}
	for _, tl := range tools {
		if !strings.Contains(out, "\n  "+tl.Name+"\n") {
			t.Errorf("help mcp does not name the tool %s:\n%s", tl.Name, out)
		}
	}
}

// Aliases share one value; a usage error names the flag and gives the
// synopsis.
func TestDeclaredFlags(t *testing.T) {
	l := &logCmd{since: -1}
	fs := newFlagSet("log")
	l.flags(fs)
	if pos, err := parse(fs.FlagSet, []string{"s", "-f", "--since=3"}); err != nil || len(pos) != 1 || !l.follow || l.since != 3 {
		t.Errorf("log s -f --since=3: %v %v %+v", pos, err, l)
	}
	x := &exportCmd{}
	fs = newFlagSet("export")
	x.flags(fs)
	if _, err := parse(fs.FlagSet, []string{"s", "--output", "f.md"}); err != nil || x.out != "f.md" || x.format != "md" {
		t.Errorf("export s --output f.md: %v %+v", err, x)
	}
	_, errs, status := run("wait", "s", "-t", "-1")
	if status != ExitUsage || !strings.Contains(errs, "-t") || !strings.Contains(errs, "usage: polyrepl wait NAME [-t SECS] [--json]") {
		t.Errorf("wait -t -1 exited %d:\n%s", status, errs)
	}
}

// A refused spawn input is told by its flag, before any daemon is asked.
func TestSpawnErrorsNameFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--cwd", "/nonexistent"}, []string{"/nonexistent", "does not exist", "--cwd"}},
		{[]string{"--project", "/nonexistent"}, []string{"/nonexistent", "--project"}},
		{[]string{"--python", "a", "--exe", "b"}, []string{"--python and --exe name different executables"}},
		{[]string{"--python", "a", "--runtime", "r"}, []string{"--python is for Python sessions", "--exe"}},
		{[]string{"--memory", "lots"}, []string{`"lots"`, "512M"}},
	} {
		_, errs, status := run(append([]string{"exec", "s", "1"}, tc.args...)...)
		if status != ExitUsage {
			t.Errorf("exec %q exited %d, want %d", tc.args, status, ExitUsage)
		}
		for _, w := range tc.want {
			if !strings.Contains(errs, w) {
				t.Errorf("exec %q: %q not in\n%s", tc.args, w, errs)
			}
		}
	}
}
