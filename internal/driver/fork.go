package driver

import (
	"context"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Forker is a Process whose runtime can copy itself between cells: a fork
// of its process, sharing its memory copy-on-write, whose protocol
// channels are the named pipes in into.Dir that the adopting side made
// and opened first (worker.Channels). The copy runs on as its own process,
// the child of this one's runtime, until adopted.
type Forker interface {
	Fork(into ForkInto, wait time.Duration) (Forked, error)
}

// ForkInto is where a fork's copy goes: Dir holds its channels, Marker is
// the end marker its output is to carry from then on (its own, which the
// parent's session never learns).
type ForkInto struct {
	Dir    string
	Marker string
	// Cookie is the adopting session's (KEY=VALUE): the copy's
	// environment carries it from then on, so the processes the copy
	// starts are that session's.
	Cookie string
}

// Forked is a fork as its parent saw it: the copy's pid, and what the copy
// did not get or shares, each a few names and a count: Threads, the
// parent's other threads (not copied: a BLAS pool, a data loader, a
// server thread); Shared, its open sockets, pipes and files (both hold
// them now); Children, its child processes (still the parent's).
type Forked struct {
	PID           int      `json:"pid"`
	Threads       []string `json:"threads,omitempty"`
	ThreadsTotal  int      `json:"threads_total,omitempty"`
	Shared        []string `json:"shared,omitempty"`
	SharedTotal   int      `json:"shared_total,omitempty"`
	Children      []string `json:"children,omitempty"`
	ChildrenTotal int      `json:"children_total,omitempty"`
}

// Bounds of what a fork's event may say.
const (
	ForkList  = 8  // names of each kind
	ForkWords = 80 // characters of each name
)

// Bounded is f held to its bounds where it enters: at most ForkList names
// of each kind, each cut to ForkWords, the totals never below the names.
func (f Forked) Bounded() Forked {
	f.Threads, f.ThreadsTotal = boundNames(f.Threads, f.ThreadsTotal)
	f.Shared, f.SharedTotal = boundNames(f.Shared, f.SharedTotal)
	f.Children, f.ChildrenTotal = boundNames(f.Children, f.ChildrenTotal)
	return f
}

func boundNames(names []string, total int) ([]string, int) {
	total = max(total, len(names))
	if len(names) > ForkList {
		names = names[:ForkList]
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = api.Clip(n, ForkWords, "name")
	}
	if len(out) == 0 {
		out = nil
	}
	return out, total
}

// Adopter is a Driver whose runtime's forks another holder can take on:
// it makes the channels a copy will speak on (in dir, where the forked
// runtime may open them), and adopts the copy once it forked into them.
type Adopter interface {
	ForkChannels(dir string) (ForkChannels, error)
}

// ForkChannels are a fork's channels, made before the fork and held by
// the side that adopts the copy.
type ForkChannels interface {
	// Into is where the copy goes (ForkInto.Cookie is the caller's to
	// set).
	Into() ForkInto
	// Adopt takes the copy, process pid, on as this side's Process once
	// it speaks on the channels, handing its events to h.
	Adopt(ctx context.Context, spec Spec, pid int, h Handler) (Process, error)
	// Close removes the channels' directory and whatever of them was
	// not adopted.
	Close()
}
