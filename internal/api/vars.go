package api

import "time"

// PathVars looks at what a session holds without running a cell (GET,
// ?path=PATH&all=1 → VarsReply): its names, or one object's members.
const PathVars = "/v1/sessions/{name}/vars"

// Bounds of a look. A look lists at most VarsLimit lines (Total counts
// them all); each line's fields are cut to these (the cut said with "…").
const (
	VarsLimit     = 100
	VarPathLimit  = 500 // bytes of a path asked for
	VarNameLimit  = 200
	VarTypeLimit  = 120
	VarSizeLimit  = 80
	VarPreview    = 80 // characters of a preview
	VarNoteLimit  = 200
	VarsWorkerMax = 10000 // lines a runtime may send for one look
)

// How a look was taken (VarsReply.Look).
const (
	// LookLive: asked of the runtime now, between cells.
	LookLive = "live"
	// LookLast: a cell runs, and the runtime cannot look while it does:
	// the look taken when cell Cell ended (or at the last look between
	// cells after it), the same source as the names sessions lists.
	LookLast = "last"
	// LookDuring: a cell runs, and the runtime looked anyway, safely
	// (from another thread, reading only).
	LookDuring = "during"
)

// Var is one line of a look: a name of the session, or one member, item,
// column or field of the object a path names. Type is the runtime's word
// for its type; Size its shape (arrays, frames), length (collections),
// or bytes (strings, buffers), as the runtime's users write it;
// Memory its bytes where the runtime knows them cheaply (0: not said);
// Preview a short view of it (at most VarPreview characters), made from
// its structure for known types and never by its own repr otherwise,
// except through a bounded, time-limited call whose failure Note says;
// Members says a path can look inside it.
type Var struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Size    string `json:"size,omitempty"`
	Memory  int64  `json:"memory,omitempty"`
	Preview string `json:"preview,omitempty"`
	Note    string `json:"note,omitempty"`
	Members bool   `json:"members,omitempty"`
}

// Bounded is v with every field held to its bound, where it enters.
func (v Var) Bounded() Var {
	v.Name = Clip(v.Name, VarNameLimit, "name")
	v.Type = Clip(v.Type, VarTypeLimit, "type")
	v.Size = Clip(v.Size, VarSizeLimit, "size")
	v.Preview = Clip(v.Preview, VarPreview, "preview")
	v.Note = Clip(v.Note, VarNoteLimit, "note")
	if v.Memory < 0 {
		v.Memory = 0
	}
	return v
}

// VarsReply is a look at a session: the names it holds (Path ""), or the
// members of what Path names.
type VarsReply struct {
	Session    string `json:"session"`
	Generation string `json:"generation,omitempty"`
	Runtime    string `json:"runtime,omitempty"`
	Path       string `json:"path,omitempty"`
	// Vars are the lines, at most VarsLimit, sorted as the runtime
	// keeps them (names by name; a list's items in order); Total counts
	// all there are.
	Vars  []Var `json:"vars"`
	Total int   `json:"total"`
	// All: the look includes imports and the runtime's own names.
	All bool `json:"all,omitempty"`
	// Look says how it was taken (LookLive, LookLast, LookDuring); Cell
	// is the cell it was taken after (LookLast), or the cell running
	// (LookDuring); At is when.
	Look string    `json:"look"`
	Cell int       `json:"cell,omitempty"`
	At   time.Time `json:"at"`
}
