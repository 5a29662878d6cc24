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
// The holder side is server (it is the driver's Handler); the daemon
// side is Process, which a session uses as its runtime, and which passes
// the holder's events to the session's Handler.
//
// The connection is a unix stream socket: the first daemon's is one end
// of a socket pair passed to the holder as fd 3; later ones connect to
// the holder's socket (SocketName, 0600 in the 0700 directory of
// holders), and each side checks the other's uid (SO_PEERCRED). A frame
// is a type byte, a 4-byte length and a payload (JSON, or raw bytes for
// output and typing). The daemon writes nothing but cells, interrupts,
// what replies took and the limit it set; the holder writes the session's
// events. A holder states its protocol (Proto) first thing, in the
// fields every protocol keeps, so that a daemon of other code adopts it
// or says what to do.
//
// What the holder keeps, and for how long:
//
//   - the cell in flight: its output from its start, and once it ends its
//     result, until a reply has taken both (Delivered, final) or the next
//     cell runs; a daemon taking the session up rebuilds the cell's record
//     entry from it whole;
//   - the output printed since the last cell ended, until the next cell;
//   - the runtime's exit, until a daemon ends the holder having written
//     the death down.
//
// Output past the first megabyte of a stretch goes to a spool file, so
// that a cell printing while no daemon listens never blocks and costs
// memory only up to that bound. A disk that refuses the spool (full,
// gone) is not turned into memory: the last megabyte is kept, what came
// between is counted and said, where it was and in the cell's result.
package holder
