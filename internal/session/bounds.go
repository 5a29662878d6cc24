package session

import (
	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
)

// What a runtime tells a session besides output, value and error — a
// question's prompt, the names it defines — is held to the api bounds
// here, where it enters from the driver (or from a holder a daemon takes
// up), so every reply, listing and record entry made of it is small.

// boundQuestion holds a question's prompt to api.PromptLimit: a worker
// cuts its own and says how long it was (q.Total); a kernel's or a
// terminal's prompt of any length is cut here.
func boundQuestion(q driver.Prompt) driver.Prompt {
	q.Text, q.Total = api.BoundPrompt(q.Text, q.Total, api.PromptLimit)
	return q
}

// boundNames holds a namespace's names to api.MaxNames names of at most
// api.NameLimit characters each (a name cut says so in itself). nil stays
// nil: the runtime did not say its names.
func boundNames(names []string) []string {
	if names == nil {
		return nil
	}
	long := len(names) > api.MaxNames
	for _, n := range names[:min(len(names), api.MaxNames)] {
		if len(n) > api.NameLimit {
			long = true
			break
		}
	}
	if !long {
		return names
	}
	out := make([]string, 0, min(len(names), api.MaxNames))
	for _, n := range names[:min(len(names), api.MaxNames)] {
		out = append(out, api.Clip(n, api.NameLimit, "name"))
	}
	return out
}
