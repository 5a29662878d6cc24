package client

import (
	"context"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/version"
)

// goneWait bounds how long a client waits for a daemon it stopped to let
// go of its lock.
const goneWait = 5 * time.Second

// Upgrade brings the daemon to this client's version, once it has heard
// from it: a daemon of an older release that can leave its sessions to
// their holders is replaced — it stops, keeping them, and a daemon of
// this binary starts and takes them up — and the note says so. Where
// that cannot be (the daemon is newer, or would end its sessions), the
// note says the versions differ, as VersionMismatch does. Nil when the
// versions agree.
func (c *Client) Upgrade(ctx context.Context) *api.Note {
	c.mu.Lock()
	dv, keeps, done, warned := c.daemonVersion, c.daemonKeeps, c.upgraded, c.warned
	c.mu.Unlock()
	if dv == "" || dv == version.Version || warned == dv {
		return nil
	}
	if done || !keeps || !version.Newer(version.Version, dv) {
		// Said once to this client (an MCP server lives long: its model
		// need not read it in every reply).
		c.mu.Lock()
		c.warned = dv
		c.mu.Unlock()
		return c.VersionMismatch()
	}
	c.mu.Lock()
	c.upgraded = true
	c.mu.Unlock()
	failed := func(err error) *api.Note {
		n := c.VersionMismatch()
		if n == nil {
			n = &api.Note{Kind: api.NoteVersion, Version: dv, ClientVersion: version.Version}
		}
		n.Err = err.Error()
		return n
	}
	r, err := c.Stop(ctx, true)
	if err != nil {
		return failed(err)
	}
	c.closeIdle()
	for deadline := time.Now().Add(goneWait); !c.Gone() && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	st, _, err := c.Start(ctx)
	if err != nil {
		return failed(err)
	}
	n := &api.Note{Kind: api.NoteUpgraded, Version: dv, ClientVersion: st.Version, PID: st.PID}
	for _, s := range r.Kept {
		n.Names = append(n.Names, s.Name)
	}
	return n
}

// closeIdle closes the connections kept to a daemon that has gone.
func (c *Client) closeIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cn := range c.idle {
		cn.Close()
	}
	c.idle = nil
}
