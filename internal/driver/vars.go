package driver

import (
	"errors"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Inspector is a Process whose runtime looks at its live state without a
// cell: its names, or the members of what a path names (df, df.columns,
// cfg["db"], fit$coefficients), one line each (api.Var). A look runs no
// user code that can hurt — known types are summarised from their
// structure, anything else gets a preview only through a bounded,
// time-limited call — never changes the namespace, never prints into the
// session's output, and is not a cell. A runtime running a cell gives
// ErrCellRuns unless it can look safely meanwhile (Look.During).
type Inspector interface {
	Vars(q VarsQuery, wait time.Duration) (Look, error)
}

// ErrCellRuns: the runtime looks between cells only, and one runs.
var ErrCellRuns = errors.New("a cell runs: the runtime looks at its names between cells")

// PathError is the runtime's word that a look's path names nothing
// ("name 'dfx' is not defined"), or nothing it can look inside.
type PathError struct{ Msg string }

func (e *PathError) Error() string { return e.Msg }

// VarsQuery is what a look is asked for: Path "" for the session's own
// names (All: with its imports and the runtime's built-ins too), else the
// members of what Path names, in the runtime's own syntax.
type VarsQuery struct {
	Path string `json:"path,omitempty"`
	All  bool   `json:"all,omitempty"`
}

// Look is what a runtime saw: at most api.VarsLimit lines, Total counting
// them all; During says it looked while a cell ran.
type Look struct {
	Vars   []api.Var `json:"vars"`
	Total  int       `json:"total"`
	During bool      `json:"during,omitempty"`
}

// Bounded is l held to what a reply carries: api.VarsLimit lines, each
// bounded; Total never below the lines kept.
func (l Look) Bounded() Look {
	if len(l.Vars) > api.VarsLimit {
		l.Vars = l.Vars[:api.VarsLimit]
	}
	out := make([]api.Var, len(l.Vars))
	for i, v := range l.Vars {
		out[i] = v.Bounded()
	}
	l.Vars = out
	l.Total = max(l.Total, len(l.Vars))
	return l
}
