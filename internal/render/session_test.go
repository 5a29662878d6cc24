package render

import (
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
)

// A session being taken up is listed with what its live note says and
// the step that ends it, in the reader's voice.
func TestSessionBeingTakenUp(t *testing.T) {
	now := time.Now()
	s := api.SessionInfo{Name: "etl", Generation: "0123456789ab", Runtime: "python", Version: "3.11.2", PID: 4242, Holder: 4241,
		State: api.StateAdopting, Created: now.Add(-time.Hour), Cells: 3, Cwd: "/work",
		Problem: "being taken up from its holder (pid 4241), which has not answered yet; waiting for it since 06:10:00"}
	var b strings.Builder
	Session(&b, s, now, People)
	got := b.String()
	for _, want := range []string{"etl  being taken up from its holder (pid 4241), which has not answered yet", "python 3.11.2", "runtime pid 4242",
		"3 cells", "cwd /work", "calls on it are served once its holder answers", "`polyrepl kill etl` ends it"} {
		if !strings.Contains(got, want) {
			t.Errorf("the listing lacks %q:\n%s", want, got)
		}
	}
}
