package cli

import (
	"strings"

	"github.com/polyrepl/polyrepl/internal/api"
)

func init() {
	register(&command{
		name:    "input",
		args:    "NAME TEXT|-",
		summary: "answer the question a running cell asks",
		help: `When a cell asks for input (Python's input(), a debugger's prompt, a
kernel's input request), exec and wait return at once with status input,
the prompt, and exit status 3. input sends TEXT as the line it reads (with
"-", the first line of standard input: one over 2 MiB is refused with its
size, exit status 2, and nothing is sent), or end of file with --eof, then
waits up to -t seconds like exec: it prints the rest of the cell, or its
next question. A session whose cell waits for input runs no other code:
exec is refused until the question is answered or interrupt ends it.

An answer to a password prompt (getpass, a kernel's password request) is
never shown or kept: the output, the record and exports have [hidden] in
its place. --secret does the same for a secret the runtime cannot know
it asked for (bash's read -s, sudo or ssh run by the cell); what the
program itself prints afterwards is kept as printed.`,
		new: func() runner { return &inputCmd{} },
	})
}

type inputCmd struct {
	timeout secondsFlag
	eof     bool
	secret  bool
	json    bool
}

func (x *inputCmd) flags(fs *flagSet) {
	fs.Var(&x.timeout, "t timeout", "SECS", "seconds to wait for the cell after answering (default 30, at most 600)")
	fs.Bool(&x.eof, "eof", "send end of file instead of a line")
	fs.Bool(&x.secret, "secret", "the answer is a secret: shown and kept as [hidden]")
	fs.Bool(&x.json, "json", "print the result as JSON")
}

func (x *inputCmd) run(e *env, pos []string) int {
	c := e.cmd
	switch {
	case x.eof && len(pos) != 1:
		return e.usageError(c, "input --eof takes a session name only")
	case x.eof && x.secret:
		return e.usageError(c, "end of file is no secret: --eof and --secret do not go together")
	case !x.eof && len(pos) != 2:
		return e.usageError(c, "input takes a session name and the line to send (or - for standard input, or --eof)")
	}
	text := ""
	if !x.eof {
		text = pos[1]
		if text == "-" {
			var status int
			if text, status = e.readStdin(true, "the answer"); status != 0 {
				return status
			}
		}
		if strings.ContainsAny(text, "\r\n") {
			return e.usageError(c, "an answer is one line; send each line with its own input")
		}
	}
	r, err := e.client.Input(e.ctx, pos[0], api.InputRequest{Text: text, EOF: x.eof, Secret: x.secret, Timeout: x.timeout.v, Client: e.me()})
	if err != nil {
		return e.fail(err)
	}
	return e.result(r, x.json)
}
