package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

func init() {
	register(&command{
		name:    "sessions",
		usage:   "sessions [NAME] [--json]",
		summary: "list sessions: pid, runtime, uptime, idle time, cells, memory, cwd, names",
		help: `Lists every session (or just NAME): its pid, runtime and version, uptime,
idle time or running cell, cells run, memory of its whole process tree,
working directory, and the names defined in its namespace.`,
		run: runSessions,
	})
}

func runSessions(e *env, args []string) int {
	c := lookup("sessions")
	fs := flags("sessions")
	asJSON := fs.Bool("json", false, "print the list as JSON")
	pos, code, ok := e.parseOrHelp(c, fs, args)
	if !ok {
		return code
	}
	if len(pos) > 1 {
		return e.usageError(c, "sessions takes at most one session name")
	}
	name := ""
	if len(pos) == 1 {
		name = pos[0]
	}
	list, err := e.client.Sessions(e.ctx, name)
	if err != nil {
		return e.fail(err)
	}
	if *asJSON {
		printJSON(e.stdout, api.SessionsReply{Sessions: list})
	} else {
		if len(list) == 0 {
			fmt.Fprintln(e.stdout, "No sessions. `polyrepl exec NAME CODE` creates one.")
		}
		for _, s := range list {
			printSession(e.stdout, s, time.Now())
		}
	}
	e.versionWarning()
	return ExitOK
}

// maxListedNames keeps a namespace with thousands of names to one line.
const maxListedNames = 40

func printSession(w io.Writer, s api.SessionInfo, now time.Time) {
	cells := plural(s.Cells, "cell")
	if s.State == "dead" {
		cause := ""
		if s.Death != nil {
			cause = s.Death.Cause + " " + ago(now.Sub(s.Death.At)) + " ago"
		}
		fmt.Fprintf(w, "%s  dead: %s  %s  cwd %s\n", s.Name, cause, cells, s.Cwd)
	} else {
		activity := "idle " + ago(now.Sub(s.LastActive))
		if r := s.Running; r != nil {
			activity = fmt.Sprintf("running cell %d for %s (%s via %s)", r.Cell, ago(now.Sub(r.Started)), r.Client.Who, r.Client.How)
		}
		fmt.Fprintf(w, "%s  pid %d  %s %s  up %s  %s  %s  %s  cwd %s\n",
			s.Name, s.PID, s.Runtime, s.Version, ago(now.Sub(s.Created)), activity, cells, megabytes(s.Memory), s.Cwd)
	}
	if s.Unread {
		fmt.Fprintf(w, "    unread output: `polyrepl wait %s` collects it\n", s.Name)
	}
	if len(s.Names) > 0 {
		names := s.Names
		more := ""
		if len(names) > maxListedNames {
			more = fmt.Sprintf(" … and %d more", len(names)-maxListedNames)
			names = names[:maxListedNames]
		}
		fmt.Fprintf(w, "    names: %s%s\n", strings.Join(names, ", "), more)
	}
}
