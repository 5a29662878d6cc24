package api

// PathFork makes a new session whose runtime is a fork of the session's,
// taken between cells (POST ForkRequest → ForkReply).
const PathFork = "/v1/sessions/{name}/fork"

// ForkRequest asks for a fork of a session under the name New.
type ForkRequest struct {
	New        string `json:"new"`
	Client     Client `json:"client"`
	Generation string `json:"generation,omitempty"`
}

// ForkReply is the new session, and the notes of its making.
type ForkReply struct {
	Session string      `json:"session"`
	Info    SessionInfo `json:"info"`
	Notes   []Note      `json:"notes,omitempty"`
}

// Fork says how a session was forked: From the session whose runtime was
// copied (Into the one that got the copy, in From's record), after its
// cell Cell; what the copy did not get or shares, each a few names and a
// count — Threads, From's other threads (not copied); Shared, its open
// sockets, pipes and files (both hold them); Children, its child
// processes (not carried over).
type Fork struct {
	From          string   `json:"from"`
	Into          string   `json:"into,omitempty"`
	Cell          int      `json:"cell"`
	Threads       []string `json:"threads,omitempty"`
	ThreadsTotal  int      `json:"threads_total,omitempty"`
	Shared        []string `json:"shared,omitempty"`
	SharedTotal   int      `json:"shared_total,omitempty"`
	Children      []string `json:"children,omitempty"`
	ChildrenTotal int      `json:"children_total,omitempty"`
}
