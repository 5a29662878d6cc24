package session

import "github.com/polyrepl/polyrepl/internal/driver"

// The runtime's facts (how a value is shown, how the runtime ends
// itself, how to answer its own console, its transcript's extension) are
// the driver's, which runs in the session's holder: the holder tells them
// in its hello, bounded where the daemon reads it (holder.Hello.Facts),
// and the session keeps what it was told. The daemon links no driver for
// them, and a holder running a runtime this binary has no driver for
// keeps its session going.

// setFacts keeps the runtime's facts its holder told, and names the
// transcript after them. It is called once, before the session is in the
// table and before its holder's events come (p.Start), so facts reads
// them without the lock.
func (s *Session) setFacts(f driver.Info) {
	s.rt = f
	s.Transcript = s.m.state.TranscriptPath(s.Name, f.Ext)
}

// facts are the session's runtime's facts, as its holder told them.
func (s *Session) facts() driver.Info { return s.rt }
