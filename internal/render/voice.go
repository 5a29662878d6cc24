package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Voice names the parts of a reply that depend on who reads it: the
// inputs a request took and the steps to take next. A person at the CLI
// is told flags and command lines; the MCP server gives a model's voice
// (arguments and tool calls).
type Voice interface {
	// Input names a request input (one of the api.Field constants).
	Input(field string) string
	// Step names an action as something to run: "`polyrepl wait etl`".
	Step(a api.Action) string
	// Give names an input given a value, as this reader gives it for a
	// new session ("--sandbox workspace-write"); "" if the reader cannot
	// give it, or not that value.
	Give(field, value string) string
	// Confined says what a reader whose sandbox allows no more can do:
	// who can widen it (a clause, lower case, no stop).
	Confined() string
}

// People is the CLI's voice.
var People Voice = people{}

type people struct{}

func (people) Input(field string) string {
	switch field {
	case api.FieldCode:
		return "the code argument (or `-` to read it from standard input)"
	case api.FieldPath:
		return "a PATH after the session's name"
	case api.FieldNew:
		return "the NEW session's name"
	case "":
		return ""
	}
	return "--" + field
}

func (people) Give(field, value string) string {
	if value == "" {
		return "--" + field
	}
	return "--" + field + " " + value
}

func (people) Confined() string {
	return "a wider sandbox needs polyrepl run outside this one: not from a cell of a sandboxed session, nor through an MCP server started with --sandbox"
}

func (people) Step(a api.Action) string {
	switch a.Do {
	case api.DoExec:
		return fmt.Sprintf("`polyrepl exec %s CODE`", a.Session)
	case api.DoInput:
		return fmt.Sprintf("`polyrepl input %s TEXT`", a.Session)
	case api.DoRuntimes:
		return "`polyrepl runtimes`"
	case api.DoKernels:
		return "`polyrepl runtimes --gateway URL`"
	case api.DoSessions:
		if a.Session == "" {
			return "`polyrepl sessions`"
		}
	case api.DoStop:
		return "`polyrepl stop`"
	}
	return fmt.Sprintf("`polyrepl %s %s`", a.Do, a.Session)
}

// stepPurpose says what taking an action does, after its name.
func stepPurpose(a api.Action) string {
	switch a.Do {
	case api.DoWait:
		return "collects it"
	case api.DoInterrupt:
		return "stops it"
	case api.DoInput:
		return "answers it"
	case api.DoKill:
		return "ends it"
	case api.DoExec:
		return "starts a fresh session under that name"
	case api.DoHistory:
		return "lists the entries"
	case api.DoRuntimes:
		return "lists them"
	case api.DoKernels:
		return "lists the kernels the gateway offers"
	case api.DoAttach:
		return "shows its record and sends it cells, with no terminal"
	case api.DoVars:
		return "lists its names"
	case api.DoSessions:
		if a.Session == "" {
			return "lists them"
		}
		return "shows its state"
	case api.DoStop:
		return "ends the daemon and every session, so the next call starts this client's version"
	}
	return "helps"
}

// Hint is what to do about a refusal, in v's terms: the steps it names,
// then its advice, then the input to change.
func Hint(e api.ErrorReply, v Voice) string {
	var parts []string
	for _, a := range e.Next {
		parts = append(parts, v.Step(a)+" "+stepPurpose(a))
	}
	h := e.Hint
	if e.Code == api.CodeSandbox {
		h = sandboxHint(e, v)
	} else if e.Field != "" {
		if h == "" {
			h = "give " + v.Input(e.Field)
		} else {
			h += " (" + v.Input(e.Field) + ")"
		}
	}
	if h != "" {
		parts = append(parts, h)
	}
	return strings.Join(parts, "; ")
}

// InFlight words a call that the daemon took and did not answer (its
// connection ended: err), op one of the api.Do constants: whether it did
// its work is not known, so the words say what is known and the steps
// that find out, in v's terms, and guess nothing.
func InFlight(op, session string, err error, v Voice) (msg, hint string) {
	sessions := v.Step(api.Action{Do: api.DoSessions, Session: session})
	wait := v.Step(api.Action{Do: api.DoWait, Session: session})
	msg = fmt.Sprintf("the connection to the daemon ended while the %s was in flight (%v); the daemon most likely ended", op, err)
	switch op {
	case api.DoExec:
		return msg + ": the cell may have run, or may still run in its session",
			fmt.Sprintf("%s shows whether it did and %s collects its output; sending it again may run it twice", sessions, wait)
	case api.DoInput, api.DoInterrupt:
		return msg + ": it may have reached the cell",
			fmt.Sprintf("%s shows the cell's state and %s collects it", sessions, wait)
	default: // kill, restart
		return msg + ": it may have been done, in part or whole",
			fmt.Sprintf("%s shows the session's state", sessions)
	}
}

// Refusal is what a refusal says: what its death lost, if the client
// is hearing of it for the first time, else its message.
func Refusal(e api.ErrorReply) string {
	if e.Lost != nil {
		return Loss(*e.Lost, time.Now())
	}
	return e.Error
}
