package record

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/polyrepl/polyrepl/internal/paths"
)

// Positions are saved beside the record (NAME.positions.json, 0600) at
// the next flush after a client asks, so that after a daemon restart each
// client is told what it missed rather than a count of earlier entries.
// Clients are forgotten after positionsAge without a call, and only the
// positionsKeep that asked last are kept (every MCP connection is a
// client of its own).
const (
	positionsAge  = 30 * 24 * time.Hour
	positionsKeep = 100
)

type savedPosition struct {
	Seen time.Time   `json:"seen"`
	Told map[int]int `json:"told"`
}

// loadPositions reads the saved positions; unreadable ones are ignored:
// their clients then start afresh, as at first contact.
func (r *Record) loadPositions() {
	f, err := paths.OpenFile(r.posPath, os.O_RDONLY)
	if err != nil {
		return
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return
	}
	var saved map[string]savedPosition
	if json.Unmarshal(b, &saved) != nil {
		return
	}
	for key, sp := range saved {
		if sp.Told != nil && time.Since(sp.Seen) < positionsAge {
			r.pos[key] = &position{told: sp.Told, seen: sp.Seen}
		}
	}
}

// savePositionsLocked writes the positions whole (a new file renamed over
// the old, so a crash leaves one or the other).
func (r *Record) savePositionsLocked() {
	r.posSave = false
	keys := make([]string, 0, len(r.pos))
	for key, p := range r.pos {
		if time.Since(p.seen) >= positionsAge {
			delete(r.pos, key)
			continue
		}
		keys = append(keys, key)
	}
	sort.Slice(keys, func(i, j int) bool { return r.pos[keys[i]].seen.After(r.pos[keys[j]].seen) })
	for _, key := range keys[min(len(keys), positionsKeep):] {
		delete(r.pos, key)
	}
	saved := map[string]savedPosition{}
	for key, p := range r.pos {
		saved[key] = savedPosition{Seen: p.seen, Told: p.told}
	}
	b, _ := json.Marshal(saved)
	if err := paths.WriteFile(r.posPath, b); err != nil {
		r.saveErr = fmt.Errorf("cannot save the clients' positions in the record of %q: %w", r.name, err)
	}
}
