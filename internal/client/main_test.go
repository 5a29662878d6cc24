package client_test

import (
	"os"
	"testing"

	"github.com/polyrepl/polyrepl/internal/holder"

	// Every runtime, as cmd/polyrepl links them: the daemon links none.
	_ "github.com/polyrepl/polyrepl/internal/driver/all"
)

// TestMain lets this test binary be the holders of the sessions its
// in-process daemons start: a daemon starts each by executing the
// running binary as `polyrepl holder`, which runs the drivers linked
// here.
func TestMain(m *testing.M) {
	holder.IfHolder()
	os.Exit(m.Run())
}
