package api

import "time"

// PathCheckpoint keeps a frozen fork of the session's runtime, taken
// between cells (POST CheckpointRequest → CheckpointReply); PathRollback
// resumes one in the runtime's place (POST CheckpointRequest →
// RollbackReply).
const (
	PathCheckpoint = "/v1/sessions/{name}/checkpoint"
	PathRollback   = "/v1/sessions/{name}/rollback"
)

// MaxCheckpoints bounds a session's checkpoints: a checkpoint past it
// ends the oldest, and the reply says so.
const MaxCheckpoints = 8

// CheckpointRequest names a checkpoint: Label "" is "cN" (N the cell
// it is taken after) for a checkpoint, the latest for a rollback. A
// checkpoint of a label in use replaces it.
type CheckpointRequest struct {
	Label      string `json:"label,omitempty"`
	Client     Client `json:"client"`
	Generation string `json:"generation,omitempty"`
}

// Checkpoint is a frozen fork of a session's runtime: its label, the
// cell it was taken after, when, its process, and the memory it costs
// (its proportional set size: the pages it shares with the session are
// counted half, so only those that changed since count whole).
type Checkpoint struct {
	Label  string    `json:"label"`
	Cell   int       `json:"cell"`
	At     time.Time `json:"at"`
	PID    int       `json:"pid"`
	Memory uint64    `json:"memory,omitempty"` // bytes
}

// CheckpointReply is a checkpoint taken, and the notes of its taking.
type CheckpointReply struct {
	Session    string     `json:"session"`
	Checkpoint Checkpoint `json:"checkpoint"`
	Notes      []Note     `json:"notes,omitempty"`
}

// RollbackReply is a rollback done: the checkpoint resumed, the new
// runtime's pid, the cells rolled back (Checkpoint.Cell+1 to Cells),
// and the notes.
type RollbackReply struct {
	Session    string     `json:"session"`
	Checkpoint Checkpoint `json:"checkpoint"`
	PID        int        `json:"pid"`
	Cells      int        `json:"cells"`
	Notes      []Note     `json:"notes,omitempty"`
}
