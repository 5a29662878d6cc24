package proc

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// killPoll is how often Kill re-scans the tree while waiting.
const killPoll = 10 * time.Millisecond

// killLimit bounds how long Kill keeps sending SIGKILL after the grace
// period, so a process stuck in the kernel cannot hang the daemon.
const killLimit = 5 * time.Second

// Kill ends the whole tree so that nothing a session started outlives it:
// SIGTERM (then SIGCONT, so stopped processes can act on it) to every member
// found with the cookie, a wait of up to grace for them to exit (polling
// Members every ~10ms and sending SIGTERM to members that appear meanwhile;
// cut short once every member left ignores SIGTERM, as a shell does),
// then SIGKILL to whatever remains, re-scanning so that children forked
// meanwhile are caught, until none remain or a hard limit of 5 seconds after
// grace. It returns the processes still alive at the end (normally none) and
// an error naming them if any survived. Zombies count as ended: children of
// the caller stay zombies until the caller reaps them.
func (t Tree) Kill(grace time.Duration) (survivors []Proc, err error) {
	// A bad cookie is reported, but the rest of the tree is still ended.
	cookieErr := validCookie(t.Cookie)
	if cookieErr != nil {
		cookieErr = fmt.Errorf("kill session tree: cookie %q ignored, processes that left the group may survive: %w", t.Cookie, cookieErr)
		t.Cookie = ""
	}
	if t.Leader.PID <= 1 && t.Cookie == "" {
		return nil, errors.Join(cookieErr, errors.New("kill session tree: no leader pid and no cookie to find it by"))
	}
	deadline := time.Now().Add(grace)
	termed := make(map[Proc]bool)
	for {
		ms, err := t.members(true)
		if err != nil {
			return nil, fmt.Errorf("kill session tree: %w", err)
		}
		if len(ms) == 0 {
			return nil, cookieErr
		}
		for _, m := range ms {
			if !termed[m] {
				termed[m] = true
				_ = Signal(m, unix.SIGTERM)
				_ = Signal(m, unix.SIGCONT)
			}
		}
		left := time.Until(deadline)
		if left <= 0 || allIgnore(ms, unix.SIGTERM) {
			// Waiting out the grace is for processes that act on SIGTERM;
			// an interactive shell ignores it.
			break
		}
		time.Sleep(min(killPoll, left))
	}

	hard := deadline.Add(killLimit)
	var lastErr error
	for {
		ms, err := t.members(true)
		if err != nil {
			return nil, fmt.Errorf("kill session tree: %w", err)
		}
		if len(ms) == 0 {
			return nil, cookieErr
		}
		if !time.Now().Before(hard) {
			return ms, errors.Join(survived(ms, lastErr), cookieErr)
		}
		// The group signal is atomic, catching group members forked after
		// the scan; the individual signals reach those that left the group.
		if t.Leader.PID > 1 {
			if err := t.SignalGroup(unix.SIGKILL); err != nil {
				lastErr = err
			}
		}
		for _, m := range ms {
			if err := Signal(m, unix.SIGKILL); err != nil {
				lastErr = err
			}
		}
		time.Sleep(killPoll)
	}
}

// survived builds the error Kill returns when processes outlived SIGKILL.
func survived(ms []Proc, lastErr error) error {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.String()
	}
	msg := fmt.Sprintf("kill session tree: %d process(es) survived SIGKILL for %v: %s (%s)",
		len(ms), killLimit, strings.Join(names, ", "), stuckHint)
	if lastErr != nil {
		return fmt.Errorf("%s: %w", msg, lastErr)
	}
	return fmt.Errorf("%s", msg)
}

// allIgnore reports whether every process of ms ignores sig.
func allIgnore(ms []Proc, sig unix.Signal) bool {
	for _, m := range ms {
		if !Ignores(m, sig) {
			return false
		}
	}
	return len(ms) > 0
}
