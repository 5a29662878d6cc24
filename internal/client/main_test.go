package client_test

import (
	"os"
	"testing"

	"github.com/polyrepl/polyrepl/internal/holder"
)

// TestMain lets this test binary be the holders of the sessions its
// in-process daemons start: a daemon starts each by executing the
// running binary as `polyrepl holder`.
func TestMain(m *testing.M) {
	holder.IfHolder()
	os.Exit(m.Run())
}
