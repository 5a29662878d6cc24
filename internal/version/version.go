// Package version holds the one version string that the binary, the daemon
// and the wire protocol compare, so that a client talking to a daemon built
// from other code can say so instead of failing strangely.
package version

// Version is the polyrepl release. Builds may override it with
// -ldflags "-X github.com/polyrepl/polyrepl/internal/version.Version=…".
var Version = "0.1.0"
