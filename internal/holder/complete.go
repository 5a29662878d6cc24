package holder

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
)

// CompleteArgs are a completion's: the word before the cursor.
type CompleteArgs struct {
	Word string `json:"word"`
}

// Completion is what the runtime completed the word to, whole.
type Completion struct {
	Matches []string `json:"matches"`
}

// CodeNoCompletion: the runtime completes nothing itself (it has no
// Completer), or not now (a cell runs): the daemon completes from the
// session's names.
const CodeNoCompletion Code = "no-completion"

// completeWait bounds how long the holder waits for the runtime's
// completion: a person waits on it, pressing Tab.
const completeWait = 2 * time.Second

func (v service) Complete(a CompleteArgs) (Completion, error) {
	c, ok := v.s.runtime().(driver.Completer)
	if !ok {
		return Completion{}, &Error{Code: CodeNoCompletion, Msg: fmt.Sprintf("the %s runtime completes no names itself", v.s.sp.Spawn.Runtime)}
	}
	v.s.mu.Lock()
	busy := v.s.cur != nil && !v.s.cur.Done || v.s.exit != nil
	v.s.mu.Unlock()
	if busy {
		return Completion{}, &Error{Code: CodeNoCompletion, Msg: "a cell runs: the runtime completes between cells"}
	}
	if len(a.Word) > driver.CompleteWord {
		return Completion{}, &Error{Code: CodeBadArgs, Msg: fmt.Sprintf("a word of %d bytes is over the %d a completion takes", len(a.Word), driver.CompleteWord)}
	}
	m, err := c.Complete(a.Word, completeWait)
	if err != nil {
		return Completion{}, &Error{Code: CodeNoCompletion, Msg: err.Error()}
	}
	return Completion{Matches: boundMatches(m)}, nil
}

// boundMatches keeps the first CompleteMatches matches, each of at most
// CompleteMatch bytes (a longer one is left out: it cannot be typed in
// whole anyway).
func boundMatches(m []string) []string {
	out := make([]string, 0, min(len(m), driver.CompleteMatches))
	for _, s := range m {
		if len(out) == driver.CompleteMatches {
			break
		}
		if len(s) <= driver.CompleteMatch {
			out = append(out, s)
		}
	}
	return out
}

func (r remote) Complete(a CompleteArgs) (Completion, error) {
	var c Completion
	b, err := r.p.callReply("complete", a)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, &Error{Code: CodeFailed, Msg: fmt.Sprintf("the holder's completion cannot be read: %v", err)}
	}
	c.Matches = boundMatches(c.Matches)
	return c, nil
}

// Complete asks the holder to have the runtime complete word between
// cells; an *Error of CodeNoCompletion (or CodeUnknown, from a holder of
// an earlier version) says the caller completes from the names.
func (p *Process) Complete(word string) ([]string, error) {
	c, err := p.remote().Complete(CompleteArgs{Word: word})
	return c.Matches, err
}
