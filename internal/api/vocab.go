package api

// Session states.
const (
	StateStarting = "starting"
	StateIdle     = "idle"
	StateRunning  = "running"
	StateDead     = "dead"
	// StateUnreachable: a holder keeps the session, but this daemon
	// cannot take it up (SessionInfo.Problem says why).
	StateUnreachable = "unreachable"
	// StateAdopting: a holder keeps the session, and this daemon is
	// taking it up, but the holder has not answered yet (it is stopped,
	// or slow); the session is listed from its live note
	// (SessionInfo.Problem says what is known) until it answers.
	StateAdopting = "adopting"
)

// Error codes of an ErrorReply, for programs to act on.
const (
	CodeBadRequest = "bad-request" // the request cannot be met as sent; nothing changed
	CodeNoSession  = "no-session"  // no session has that name
	CodeNoEntry    = "no-entry"    // the record has no such entry
	CodeBusy       = "busy"        // the session is running another cell
	CodeStale      = "stale"       // the request named an earlier life of the session
	CodeDead       = "dead"        // the session died; Death says how
	CodeInternal   = "internal"    // the daemon failed; its log says why
	CodeForeign    = "foreign"     // a holder keeps the session that this daemon cannot take up
	CodeAdopting   = "adopting"    // the session is being taken up from its holder, which has not answered yet: retry shortly
	CodeSandbox    = "sandbox"     // the caller's sandbox (its own session's policy, or its ceiling) does not reach that far
	CodeInput      = "input"       // the running cell waits for input: answer it, or interrupt it
	CodeNoInput    = "no-input"    // an answer was sent, and no cell waits for one
	CodeNoLook     = "no-look"     // the runtime cannot look at its names without a cell, or not now (a cell runs): the error says why
	CodeNoFork     = "no-fork"     // the runtime cannot fork, or not now: the error says why
	// Codes a client gives, for the errors no daemon sent.
	CodeUsage       = "usage"       // the command line was wrong; nothing was sent
	CodeUnreachable = "unreachable" // no daemon could be reached or started
	CodeInFlight    = "in-flight"   // the daemon took the call and ended before it answered: it may have been done
)

// Death causes: how a session's life ended (Death.By).
const (
	ByKill       = "kill"        // a client killed it
	ByRestart    = "restart"     // a client restarted it
	ByStop       = "stop"        // the daemon stopped
	ByExit       = "exit"        // the runtime exited by itself
	BySignal     = "signal"      // a signal from outside polyrepl killed it
	ByMemory     = "memory"      // the kernel killed it for going over its memory limit
	ByMemoryCap  = "memory-cap"  // the kernel killed it for going over the cap on all sessions together
	ByDaemonLost = "daemon-lost" // the daemon that owned it ended without stopping it
	ByHolder     = "holder"      // the holder that kept its runtime ended first
)

// Action is a next step, as data: what to do, on which session. Each
// edge names it in its reader's terms: a command line for a person, a
// tool call for a model.
type Action struct {
	Do      string `json:"do"` // one of the Do constants
	Session string `json:"session,omitempty"`
}

// Actions an error can name.
const (
	DoWait       = "wait"       // collect the running or uncollected cell
	DoInterrupt  = "interrupt"  // stop the running cell
	DoInput      = "input"      // answer the question the running cell asks
	DoKill       = "kill"       // end the session
	DoRestart    = "restart"    // a fresh process for the session, of this version
	DoExec       = "exec"       // start a fresh session under the name
	DoHistory    = "history"    // list the session's record
	DoRuntimes   = "runtimes"   // see which runtimes there are
	DoSessions   = "sessions"   // list the sessions (Session: that one's state: alive, running, with a result to collect)
	DoAttach     = "attach"     // follow the session's record and send it cells, with no terminal of its own
	DoVars       = "vars"       // look at the session's names, without a cell
	DoFork       = "fork"       // a new session from a copy of this one's runtime
	DoCheckpoint = "checkpoint" // keep a frozen fork of the session's runtime
	DoRollback   = "rollback"   // resume a checkpoint in the runtime's place
	// DoKernels lists the Jupyter kernels of the gateway the call named:
	// a person's step (no tool lists a gateway's kernels).
	DoKernels = "kernels"
	// DoStop stops the daemon and every session: only a person can, and
	// only to end a version mismatch.
	DoStop = "stop"
)

// Inputs an error can be about (ErrorReply.Field), named by each edge its
// own way: a flag for the CLI (--cwd), an argument for a model (cwd).
const (
	FieldCode    = "code"
	FieldTimeout = "timeout"
	FieldRuntime = "runtime"
	FieldCwd     = "cwd"
	FieldExe     = "exe"
	FieldProject = "project"
	FieldMemory  = "memory"
	FieldGateway = "gateway"
	FieldSince   = "since"
	FieldEOF     = "eof"
	FieldPath    = "path"  // what a look is asked to look inside (vars)
	FieldNew     = "new"   // the name a fork is asked for
	FieldLabel   = "label" // a checkpoint's label
	// FieldSandbox is the session's policy (Spawn.Sandbox); FieldCeiling
	// the client's declared ceiling (HeaderCeiling).
	FieldSandbox = "sandbox"
	FieldCeiling = "ceiling"
)
