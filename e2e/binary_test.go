package e2e

// The tests run the binary TestMain builds from ./cmd/polyrepl, which the
// test binary would not otherwise depend on: go test would then reuse a
// cached pass after the code under test changed. Importing what the
// command is made of puts every package of it (and its embedded worker
// programs) in this package's build, so a change to any of them runs the
// tests again.
import _ "github.com/polyrepl/polyrepl/internal/cli"
