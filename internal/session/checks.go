package session

import (
	"fmt"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/limit"
)

// Request checks: what a request may ask for, refused with a clear error
// before anything changes.

// ValidateName checks a session name as a refusal the daemon can send.
func ValidateName(name string) error {
	if err := api.ValidateName(name); err != nil {
		return badRequest("session names use "+api.NameChars+", at most 64 of them", "%v", err)
	}
	return nil
}

// Timeout turns a requested timeout in seconds into a duration, refusing
// what cannot be meant. None given is the default; 0 is a real timeout:
// the call starts the cell (or looks at it) and answers at once.
func Timeout(secs *float64, asker api.Client) (time.Duration, error) {
	switch {
	case secs == nil:
		return api.DefaultTimeout, nil
	case *secs < 0 || *secs != *secs:
		return 0, badInput(api.FieldTimeout, "give seconds from 0 (answer at once, the cell going on) to 600", "invalid timeout %v", *secs)
	case *secs > api.MaxTimeout.Seconds():
		return 0, badInput(api.FieldTimeout, "give at most 600 seconds: the cell keeps running after the timeout, to be collected later", "the timeout %vs is over the limit of 600s", *secs)
	}
	return time.Duration(*secs * float64(time.Second)), nil
}

// progressEvery turns a requested progress interval into a duration,
// kept between a quarter second and five seconds.
func progressEvery(secs float64) time.Duration {
	if secs <= 0 || secs != secs {
		return 0
	}
	d := time.Duration(secs * float64(time.Second))
	return min(max(d, 250*time.Millisecond), 5*time.Second)
}

// checkGeneration refuses a request aimed at an earlier life of a name.
func (m *Manager) checkGeneration(name string, s *Session, gen string) error {
	if gen == "" || (s != nil && s.Generation == gen) {
		return nil
	}
	now := "no session has that name now"
	if s != nil {
		now = fmt.Sprintf("the session under that name now is generation %s, created %s", s.Generation, s.Created.Format(time.RFC3339))
	}
	return &Error{api.ErrorReply{Code: api.CodeStale, Error: fmt.Sprintf("the request was for generation %s of session %q, which has ended; %s", gen, name, now),
		Hint: "send the request without a generation to reach the current session"}}
}

// unchangedSpawn says which of the things asked for only take effect when
// a session is created (its executable, working directory, project,
// memory limit) differ
// from how the live session s was made: it runs on as it was, and the
// caller should know.
func unchangedSpawn(s *Session, sp api.Spawn) []api.Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	var asked []api.Asked
	runs := s.Spawn.Exe
	if s.p != nil {
		runs = s.p.Exe()
	}
	if sp.Exe != "" && sp.Exe != s.Spawn.Exe && sp.Exe != runs {
		asked = append(asked, api.Asked{Field: api.FieldExe, Want: sp.Exe, Have: runs})
	}
	if sp.CwdAsked && sp.Cwd != s.Spawn.Cwd {
		asked = append(asked, api.Asked{Field: api.FieldCwd, Want: sp.Cwd, Have: s.Spawn.Cwd})
	}
	if sp.Project != "" && sp.Project != s.Spawn.Project {
		asked = append(asked, api.Asked{Field: api.FieldProject, Want: sp.Project, Have: s.Spawn.Project})
	}
	if have := s.limit; sp.Memory != 0 && (have == nil || have.Bytes != sp.Memory) {
		a := api.Asked{Field: api.FieldMemory, Want: limit.Size(sp.Memory)}
		if have != nil && have.Bytes > 0 { // not the cap on all sessions alone
			a.Have = have.Describe()
		}
		asked = append(asked, a)
	}
	if len(asked) == 0 {
		return nil
	}
	return []api.Note{{Kind: api.NoteUnchanged, Session: s.Name, Asked: asked, Next: []api.Action{{Do: api.DoKill, Session: s.Name}}}}
}

// busyError is the refusal of a cell while another runs.
func (s *Session) busyErrorLocked(asker api.Client) error {
	c := s.cur
	return &Error{api.ErrorReply{
		Code: api.CodeBusy,
		Error: fmt.Sprintf("session %q is busy: cell %d has been running for %s, sent by %s",
			s.Name, c.n, api.Readable(time.Since(c.started)), c.client.Label()),
		Hint: "for parallel work use another session name",
		Next: []api.Action{{Do: api.DoWait, Session: s.Name}, {Do: api.DoInterrupt, Session: s.Name}},
	}}
}
