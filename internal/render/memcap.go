package render

import (
	"strings"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/limit"
)

// MemoryCap says the cap on all sessions together as it stands: the cap,
// whether the kernel enforces it (and by what, or why not), what the
// sessions use together now, and the sessions it does not hold.
func MemoryCap(c *api.MemoryCap) string {
	s := limit.CapState{Bytes: c.Bytes, Enforced: c.Enforced, By: c.By, Group: c.Group, Why: c.Why}.Describe()
	if c.Counted == "rss" {
		s += "; " + Megabytes(uint64(max(c.InUse, 0))) + " in use now (the resident memory of the sessions' processes)"
	} else {
		s += "; " + Megabytes(uint64(max(c.InUse, 0))) + " in use now"
	}
	if len(c.Outside) > 0 {
		s += "; not held by it (started before it, by an earlier daemon, or on a gateway): " + strings.Join(c.Outside, ", ")
	}
	return s
}
