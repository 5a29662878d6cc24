package api

// PathGlance describes one session as cheaply as the daemon can: its
// state, the running cell and the question it asks, its names; not its
// memory, process or version (api.SessionInfo with those left empty). A
// console asks it while a cell runs, to show the question's prompt and to
// complete names, so it costs no /proc scan and tells the asker nothing
// (no death is marked as told).
const PathGlance = "/v1/sessions/{name}/glance"

// PathComplete completes a word for a console's Tab (POST,
// CompleteRequest → CompleteReply): the runtime's own completion on the
// session's live state between cells (Python's rlcompleter), not a cell,
// in no record, printing nothing; else the session's names.
const PathComplete = "/v1/sessions/{name}/complete"

// CompleteRequest is the word before the cursor, at most CompleteWord
// bytes.
type CompleteRequest struct {
	Word string `json:"word"`
}

// CompleteWord bounds a completion's word, in bytes.
const CompleteWord = 1000

// What completed a word (CompleteReply.By).
const (
	CompletedByRuntime = "runtime" // the runtime, on its live state
	CompletedByNames   = "names"   // the session's names (a cell runs, or the runtime completes nothing)
)

// CompleteReply is what the word may become, whole, sorted (at most 200),
// and what completed it.
type CompleteReply struct {
	Matches []string `json:"matches"`
	By      string   `json:"by"`
}
