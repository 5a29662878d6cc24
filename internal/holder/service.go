package holder

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/polyrepl/polyrepl/internal/limit"
)

// Service is what a holder does for its daemon: one method a request.
// The daemon's side is Process, whose methods send each as a call frame
// (callMsg: the operation's name and its arguments as JSON) and, for
// those answered, wait for its reply (replyMsg: a Code and the holder's
// words); the holder's side is server, which the operations table (ops)
// dispatches to. A new operation is one method here, its entry in ops,
// and Process's method that calls it. The protocol's version (Proto)
// changes with what a method takes or answers.
//
// A cell's code and a person's typing go as frames of raw bytes of their
// own (frameRun, frameRawIn), not as calls: they are the bulk.
type Service interface {
	// Interrupt asks the running cell to stop, as the runtime's driver
	// does it (attempt 0, 1, 2… escalate).
	Interrupt(InterruptArgs) error
	// Answer gives the cell's question its answer.
	Answer(AnswerArgs) error
	// EndRemote ends a runtime that runs elsewhere (a kernel on a
	// gateway); its exit comes as any runtime's.
	EndRemote(struct{}) error
	// Sync is answered once every event the holder sent before it.
	Sync(struct{}) error
	// AttachRaw attaches the daemon's person to the runtime's terminal;
	// DetachRaw lets go of it.
	AttachRaw(struct{}) error
	DetachRaw(struct{}) error
	// SetLimit keeps the memory limit the daemon set on the runtime, for
	// the daemons after this one.
	SetLimit(limit.Held) error
	// MarkRead keeps how far readers have read the cell in flight.
	MarkRead([]readMark) error
	// SetIdleEntry keeps which record entry holds the output printed
	// between cells.
	SetIdleEntry(idleEntry) error
	// End ends the runtime if it lives, then the holder: the daemon has
	// written the death down, or will not keep the session.
	End(struct{}) error
	// Complete asks the runtime to complete a name between cells
	// (complete.go).
	Complete(CompleteArgs) (Completion, error)
	// Vars looks at what the session holds, without a cell (vars.go).
	Vars(VarsArgs) (VarsAnswer, error)
	// Fork copies the runtime between cells, into another holder's
	// channels (fork.go).
	Fork(ForkArgs) (ForkAnswer, error)
	// Checkpoint keeps a frozen fork of the runtime; Rollback resumes
	// one in the runtime's place (checkpoint.go).
	Checkpoint(CheckpointArgs) (CheckpointAnswer, error)
	Rollback(RollbackArgs) (RollbackAnswer, error)
}

// InterruptArgs are an interrupt's.
type InterruptArgs struct {
	Attempt int `json:"attempt"`
}

// AnswerArgs are an answer's to a cell's question: Echo is what the
// cell's output shows of it, as a terminal would (the question, if the
// runtime did not print it, and the answer, or its mask), written to the
// cell's log before the runtime is given the answer.
type AnswerArgs struct {
	Text string `json:"text,omitempty"`
	EOF  bool   `json:"eof,omitempty"`
	Echo string `json:"echo,omitempty"`
}

// Code says, as data, why a holder refused a call.
type Code string

const (
	// CodeNoTerminal: the runtime runs over pipes: no terminal to attach.
	CodeNoTerminal Code = "no-terminal"
	// CodeAttached: someone is attached to the terminal already.
	CodeAttached Code = "attached"
	// CodeNotRemote: the runtime runs here; its tree is ended by signal.
	CodeNotRemote Code = "not-remote"
	// CodeNoInput: the runtime cannot be given input.
	CodeNoInput Code = "no-input"
	// CodeUnknown: the holder does not know the operation (a daemon of
	// newer code).
	CodeUnknown Code = "unknown-op"
	// CodeBadArgs: the holder could not read the call's arguments.
	CodeBadArgs Code = "bad-args"
	// CodeFailed: the operation failed; the words say how.
	CodeFailed Code = "failed"
	// CodeGone: the holder went away before it answered (said by the
	// daemon's side).
	CodeGone Code = "gone"
	// CodeSilent: the holder did not answer in time (the daemon's side).
	CodeSilent Code = "silent"
)

// Error is a call's refusal: its Code, and the holder's words.
type Error struct {
	Code Code
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrNoTerminal) hold for a refusal of that code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// ErrNoTerminal is the refusal of a raw attach to a runtime that runs
// over pipes.
var ErrNoTerminal = &Error{Code: CodeNoTerminal, Msg: "the runtime runs over pipes, not on a terminal: there is no terminal to attach to"}

// errAttached refuses a second person at the runtime's terminal.
var errAttached = &Error{Code: CodeAttached, Msg: "someone is already attached to this session's terminal"}

// codeOf is the Code of err, for a reply.
func codeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeFailed
}

// callMsg is one call: its operation, its arguments, and its id (0: not
// answered).
type callMsg struct {
	ID   uint64          `json:"id,omitempty"`
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

// replyMsg answers call ID: Code is "" on success.
type replyMsg struct {
	ID   uint64 `json:"id"`
	Code Code   `json:"code,omitempty"`
	Msg  string `json:"msg,omitempty"`
	// Data is what an operation that answers with data answered
	// (handleData), as JSON.
	Data json.RawMessage `json:"data,omitempty"`
}

// op is one operation of the Service: how the holder runs it, and
// whether the daemon waits for its answer.
type op struct {
	run      func(Service, json.RawMessage) (any, error)
	answered bool
	// alone: it may take long (a gateway's answer), so it runs beside
	// the calls after it.
	alone bool
}

// handle makes an op of a Service method taking A.
func handle[A any](m func(Service, A) error, answered bool) op {
	return handleData(func(s Service, a A) (any, error) { return nil, m(s, a) }, answered)
}

// handleData makes an op of a Service method taking A and answering R,
// sent back as the reply's Data.
func handleData[A, R any](m func(Service, A) (R, error), answered bool) op {
	return op{answered: answered, run: func(s Service, b json.RawMessage) (any, error) {
		var a A
		if len(b) > 0 {
			if err := json.Unmarshal(b, &a); err != nil {
				return nil, &Error{Code: CodeBadArgs, Msg: fmt.Sprintf("cannot read the call's arguments: %v", err)}
			}
		}
		return m(s, a)
	}}
}

func alone(o op) op { o.alone = true; return o }

// ops are the Service's operations by name, as they go on the wire.
var ops = map[string]op{
	"interrupt":  handle(Service.Interrupt, true),
	"answer":     handle(Service.Answer, true),
	"end-remote": alone(handle(Service.EndRemote, true)),
	"sync":       handle(Service.Sync, true),
	"attach-raw": handle(Service.AttachRaw, true),
	"detach-raw": handle(Service.DetachRaw, false),
	"set-limit":  handle(Service.SetLimit, false),
	"mark-read":  handle(Service.MarkRead, false),
	"idle-entry": handle(Service.SetIdleEntry, false),
	"end":        handle(Service.End, false),
	"complete":   alone(handleData(Service.Complete, true)),
	"vars":       alone(handleData(Service.Vars, true)),
	"fork":       alone(handleData(Service.Fork, true)),
	"checkpoint": alone(handleData(Service.Checkpoint, true)),
	"rollback":   alone(handleData(Service.Rollback, true)),
}

// noInput is the refusal of an answer by a runtime that takes none.
func noInput(runtime string) error {
	return &Error{Code: CodeNoInput, Msg: fmt.Sprintf("the %s runtime cannot be given input", runtime)}
}
