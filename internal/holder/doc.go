// Package holder keeps a session's runtime alive whatever becomes of the
// daemon: a small process per session (the binary re-executed as the
// hidden `polyrepl holder`) runs the runtime through its driver, owns its
// pipes or terminal and its process group, and keeps every event — the
// output of the cell in flight, its result, what was printed between
// cells, the runtime's exit — until a daemon has them for good. A daemon
// that is killed, crashes or is upgraded loses nothing: the next one
// connects to each holder's socket, is told the session as the holder
// keeps it (Hello), is sent every event again in order, and carries on.
//
// The holder owns the session's live state; the daemon asks it. The
// holder side is server: it runs the driver (it is the driver's Handler)
// and serves the Service, one method a request (Interrupt, Answer,
// MarkRead, End…). The daemon side is Process, which a session uses as
// its runtime: it calls the Service, and passes the holder's events
// (output, a cell's result, a question, the runtime's exit) to the
// session's Handler.
//
// The connection is a unix stream socket: the first daemon's is one end
// of a socket pair passed to the holder as fd 3; later ones connect to
// the holder's socket (SocketName, 0600 in the 0700 directory of
// holders), and each side checks the other's uid (SO_PEERCRED). A frame
// is a type byte, a 4-byte length and a payload: JSON for calls, replies
// and events, raw bytes for output, a cell's code and a person's typing.
// A holder states its protocol (Proto) first thing, in the fields every
// protocol keeps, so that a daemon of other code adopts it or says what
// to do.
//
// What the holder keeps, and for how long:
//
//   - the cell in flight, or the last one: its output log (its first
//     CellInMemory bytes in memory, then the whole of it in the cell's
//     whole-output file, which the daemon reads by byte position and
//     which stays the record's), its result, its question, and how far
//     each reader has read it (MarkRead), until the next cell; a daemon
//     taking the session up rebuilds the cell's record entry from it and
//     each reader goes on from where it was;
//   - the output printed since the last cell ended, until the next cell;
//   - the runtime's exit, until a daemon ends the holder having written
//     the death down.
//
// Output printed between cells past its first megabyte goes to a spool
// file of its own, so that a runtime printing while no daemon listens
// never blocks and costs memory only up to that bound. A disk that
// refuses a file (full, gone) is not turned into memory: the last
// megabyte is kept, what came between is counted and said, where it was
// and in the cell's result.
package holder
