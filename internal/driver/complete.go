package driver

import "time"

// Completer is a Process whose runtime completes a name from its live
// state between cells (Python's rlcompleter on the session's namespace):
// not a cell, nothing in the record, nothing printed into the session's
// output. Complete is given the word before the cursor ("df.co") and
// returns what it may become, whole ("df.count(", "df.cov("). A runtime
// running a cell, or one that does not answer within wait, gives an
// error, and the caller completes from the names it has.
type Completer interface {
	Complete(word string, wait time.Duration) ([]string, error)
}

// CompleteLimit bounds a completion: its word, in bytes, and how many
// matches come back (the first, sorted), each at most CompleteMatch bytes.
const (
	CompleteWord    = 1000
	CompleteMatches = 200
	CompleteMatch   = 300
)
