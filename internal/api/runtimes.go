package api

// PathRuntimes surveys the runtimes a new session would find, with the
// caller's environment and directory; the daemon keeps the answer until
// the PATH's directories or the Jupyter kernel directories change.
const PathRuntimes = "/v1/runtimes"

// RuntimesRequest asks which runtimes a new session started with Env in
// Cwd would find. Watch names more directories whose change makes the
// survey again (the Jupyter kernel directories, which the caller's
// drivers know and the daemon does not: it links no driver); at most
// MaxWatch of them are watched.
type RuntimesRequest struct {
	Env   []string `json:"env"`
	Cwd   string   `json:"cwd"`
	Watch []string `json:"watch,omitempty"`
}

// MaxWatch bounds RuntimesRequest.Watch.
const MaxWatch = 64
