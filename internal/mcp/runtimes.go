package mcp

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/jupyter"
)

// The runtimes tool is asked early in many conversations: its list is
// one short line a runtime, in the text and as data, and one runtime's
// whole account (its limits, what it needs) is asked by name. The whole
// survey of every runtime's limits cost 15,863 characters a call.

// leanRuntimes is the runtimes tool's structured content: the names a
// new session can start with; the text says each one's version and
// executable, and what cannot start or is not installed.
type leanRuntimes struct {
	Runtimes []string `json:"runtimes"`
}

// listed is one runtime's line of the list.
type listed struct {
	Name, Version, Path, Display, Language, Problem string
}

// runtimes lists the runtimes as a new session of this server would find
// them (with its environment, from its directory), or describes one.
func (s *Server) runtimes(ctx context.Context, req *mcp.CallToolRequest, in runtimesIn) (any, string, error) {
	list, err := s.survey(ctx)
	if err != nil {
		return nil, "", err
	}
	if in.Name != "" {
		for _, r := range list {
			if r.Name == in.Name {
				return r, runtimeText(r) + s.versionNote(), nil
			}
		}
		return nil, "", fmt.Errorf("no runtime is named %s here; the runtimes tool without a name lists them", quoteCut(in.Name, quoted))
	}
	lean, text := runtimesList(list)
	return lean, text + s.versionNote(), nil
}

// survey asks the daemon, which keeps its survey until the PATH or the
// kernel directories change; a daemon too old to survey is not waited
// for: the server surveys itself.
func (s *Server) survey(ctx context.Context) ([]api.RuntimeInfo, error) {
	list, err := s.client.Runtimes(ctx, s.env, s.cwd, jupyter.SpecDirs(s.env, s.cwd), true)
	var ae *client.APIError
	if errors.As(err, &ae) && ae.Code != api.CodeBadRequest {
		return driver.Survey(ctx, s.env, s.cwd), nil
	}
	return list, err
}

// runtimesList is the list as data and as text: a line a runtime (name,
// version, executable; a kernel's display name and language), then in
// one line what is not installed.
func runtimesList(list []api.RuntimeInfo) (leanRuntimes, string) {
	out := leanRuntimes{Runtimes: []string{}}
	var missing []string
	var b strings.Builder
	b.WriteString("Runtimes here (the exec tool's runtime argument; the runtimes tool with a name describes one whole, with its limits):\n")
	for _, r := range list {
		l := listed{Name: r.Name, Version: shortVersion(r.Version), Display: r.Display, Language: r.Language}
		switch {
		case r.Found:
			l.Path = r.Path
		case r.Problem != "" && r.Family == jupyter.Family:
			l.Problem = r.Problem
		default:
			missing = append(missing, r.Name)
			continue
		}
		if l.Problem == "" {
			out.Runtimes = append(out.Runtimes, l.Name)
		}
		b.WriteString("- " + r.Name)
		switch {
		case r.Display != "" || r.Language != "":
			fmt.Fprintf(&b, ": a Jupyter kernel, %q", r.Display)
			if r.Language != "" {
				b.WriteString(" in " + r.Language)
			}
		case l.Version != "":
			b.WriteString(" " + l.Version)
		}
		if l.Path != "" {
			b.WriteString(" (" + l.Path + ")")
		}
		if l.Problem != "" {
			b.WriteString(": cannot start: " + l.Problem)
		}
		b.WriteString("\n")
	}
	if len(missing) > 0 {
		fmt.Fprintf(&b, "Not installed: %s (with a name, the runtimes tool says what one needs; the exec tool's exe argument names an executable elsewhere).", strings.Join(missing, ", "))
	}
	return out, strings.TrimRight(b.String(), "\n")
}

// versionNumber is the first version number in a version command's line.
var versionNumber = regexp.MustCompile(`\d+(\.\d+)+[0-9A-Za-z]*`)

// shortVersion is a version command's line as its number ("R version
// 4.2.2 Patched (2022-11-10 r83330) -- …" is 4.2.2), or the line when it
// has none ("POSIX sh").
func shortVersion(v string) string {
	if n := versionNumber.FindString(v); n != "" {
		return n
	}
	return api.Clip(v, 40, "version")
}

// runtimeText is one runtime whole.
func runtimeText(r api.RuntimeInfo) string {
	var b strings.Builder
	switch {
	case r.Found:
		fmt.Fprintf(&b, "%s: %s", r.Name, r.Path)
		if r.Version != "" {
			b.WriteString(", " + r.Version)
		}
		if r.Display != "" {
			fmt.Fprintf(&b, ", a Jupyter kernel, %q in %s", r.Display, r.Language)
		}
		b.WriteString(".")
	case r.Problem != "" && r.Family == jupyter.Family:
		fmt.Fprintf(&b, "%s cannot start: %s.", r.Name, r.Problem)
	default:
		fmt.Fprintf(&b, "%s is not installed: %s.", r.Name, r.Problem)
	}
	if r.Needs != "" {
		b.WriteString("\nNeeds: " + r.Needs + ".")
	}
	if r.EnvVar != "" {
		fmt.Fprintf(&b, "\nThe exec tool's exe argument, or $%s, names another executable.", r.EnvVar)
	}
	if r.Limits != "" {
		b.WriteString("\nLimits: " + r.Limits + ".")
	}
	switch {
	case r.Forks:
		b.WriteString("\nThe fork tool copies its sessions between cells.")
	case r.NoFork != "":
		b.WriteString("\nIts sessions cannot be forked: " + r.NoFork + ".")
	}
	return b.String()
}
