package render

import (
	"fmt"
	"io"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// checkpointNote says a checkpoint taken, what it replaced and what it
// dropped.
func checkpointNote(n api.Note) string {
	c := n.Checkpoint
	if c == nil {
		return fmt.Sprintf("A checkpoint of session '%s' was taken.", n.Session)
	}
	text := fmt.Sprintf("Checkpoint '%s' of session '%s' taken after cell %d (a stopped copy, pid %d).", c.Label, n.Session, c.Cell, c.PID)
	if n.Again {
		text += fmt.Sprintf(" It replaces the earlier checkpoint '%s'.", c.Label)
	}
	if d := n.Dropped; d != nil {
		text += fmt.Sprintf(" Checkpoint '%s' (after cell %d), the oldest, was ended: a session keeps at most %d.", d.Label, d.Cell, api.MaxCheckpoints)
	}
	if n.Fork != nil {
		text += ForkApart(*n.Fork)
	}
	return text
}

// rolledBackNote says a rollback and the cells it rolled back.
func rolledBackNote(n api.Note) string {
	c := n.Checkpoint
	if c == nil {
		return fmt.Sprintf("Session '%s' was rolled back to a checkpoint.", n.Session)
	}
	text := fmt.Sprintf("Session '%s' rolled back to checkpoint '%s' (after cell %d): a copy of it runs now (pid %d).", n.Session, c.Label, c.Cell, n.PID)
	switch {
	case n.Cells == c.Cell+1:
		text += fmt.Sprintf(" Cell %d is rolled back.", n.Cells)
	case n.Cells > c.Cell+1:
		text += fmt.Sprintf(" Cells %d to %d are rolled back.", c.Cell+1, n.Cells)
	}
	if rng := max(n.Cells-c.Cell, 0); n.Count > 0 && n.Count != rng {
		// Cells run since the checkpoint on another line of rollbacks.
		text += fmt.Sprintf(" The record marks the %s run since the checkpoint was taken as rolled back.", Plural(n.Count, "cell"))
	}
	text += fmt.Sprintf(" The checkpoint stays for another rollback; the next cell is %d.", c.Cell+1)
	if n.Fork != nil {
		text += ForkApart(*n.Fork)
	}
	return text
}

// checkpointLines lists a session's checkpoints in its listing: label,
// cell, age, pid, memory (PSS).
func checkpointLines(w io.Writer, cs []api.Checkpoint, now time.Time) {
	for _, c := range cs {
		mem := ""
		if c.Memory > 0 {
			mem = fmt.Sprintf(", %s (PSS)", bytesOf(c.Memory))
		}
		fmt.Fprintf(w, "    checkpoint %s: after cell %d, taken %s ago, pid %d%s\n", c.Label, c.Cell, now.Sub(c.At).Round(time.Second), c.PID, mem)
	}
}

func bytesOf(n uint64) string { return fmt.Sprintf("%d MB", (n+1<<19)>>20) }
