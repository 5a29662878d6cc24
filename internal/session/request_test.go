package session

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
)

// A request that cannot be meant is refused as bad-request before any
// session is created.
func TestBadExecRequests(t *testing.T) {
	for _, tc := range []struct {
		name    string
		session string
		change  func(*api.ExecRequest)
	}{
		{"empty code", "s", func(r *api.ExecRequest) { r.Code = "" }},
		{"blank code", "s", func(r *api.ExecRequest) { r.Code = " \n\t " }},
		{"NUL byte", "s", func(r *api.ExecRequest) { r.Code = "value 1\x00" }},
		{"code over the limit", "s", func(r *api.ExecRequest) { r.Code = "print " + strings.Repeat("x", api.MaxCodeBytes) }},
		{"negative timeout", "s", func(r *api.ExecRequest) { r.Timeout = api.Seconds(-1) }},
		{"NaN timeout", "s", func(r *api.ExecRequest) { r.Timeout = api.Seconds(math.NaN()) }},
		{"timeout over the limit", "s", func(r *api.ExecRequest) { r.Timeout = api.Seconds(api.MaxTimeout.Seconds() + 1) }},
		{"unknown runtime", "s", func(r *api.ExecRequest) { r.Spawn.Runtime = "cobol-no-such" }},
		{"relative cwd", "s", func(r *api.ExecRequest) { r.Spawn.Cwd = "relative/dir" }},
		{"missing cwd", "s", func(r *api.ExecRequest) { r.Spawn.Cwd = "/no/such/directory/anywhere" }},
		{"empty name", "", nil},
		{"name with a space", "a b", nil},
		{"name with a slash", "../up", nil},
		{"name too long", strings.Repeat("n", 65), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestManager(t)
			x := req("value 1")
			if tc.change != nil {
				tc.change(&x)
			}
			_, err := m.Exec(context.Background(), tc.session, x, nil)
			wantCode(t, err, "bad-request")
			if l := m.List(false); len(l) != 0 {
				t.Errorf("a session was created: %+v", l)
			}
			if n := startedIn(m); n != 0 {
				t.Errorf("%d runtime processes started", n)
			}
		})
	}
}

// The edges of what is allowed are accepted.
func TestExecRequestLimitsAccepted(t *testing.T) {
	m := newTestManager(t)
	code := "value 1\n" + strings.Repeat("#", api.MaxCodeBytes-len("value 1\n"))
	x := req(code)
	x.Timeout = api.Seconds(api.MaxTimeout.Seconds())
	if r := execOK(t, m, strings.Repeat("n", 64), x); r.Value != "1" {
		t.Errorf("value %q", r.Value)
	}
}

// Wait and the control calls refuse bad names and timeouts the same way.
func TestBadRequestsToOtherCalls(t *testing.T) {
	m := newTestManager(t)
	execOK(t, m, "s", req("value 1"))
	for call, err := range map[string]error{
		"wait with a negative timeout": second(m.Wait(context.Background(), "s", api.WaitRequest{Client: alice, Timeout: api.Seconds(-1)}, nil)),
		"wait over the limit":          second(m.Wait(context.Background(), "s", api.WaitRequest{Client: alice, Timeout: api.Seconds(601)}, nil)),
		"wait on a bad name":           second(m.Wait(context.Background(), "a/b", api.WaitRequest{Client: alice}, nil)),
		"interrupt a bad name":         second(m.Interrupt(context.Background(), "a b", api.ControlRequest{Client: alice})),
		"kill a bad name":              second(m.Kill("", api.ControlRequest{Client: alice})),
		"restart a bad name":           second(m.Restart(context.Background(), "x\x00", api.ControlRequest{Client: alice})),
		"describe a bad name":          second(m.Describe("a b", api.Client{})),
	} {
		if got := codeOf(err); got != "bad-request" {
			t.Errorf("%s: error %v (code %q), want bad-request", call, err, got)
		}
	}
	if i := describe(t, m, "s"); i.State != Idle || i.Cells != 1 {
		t.Errorf("the session changed: state %q, cells %d", i.State, i.Cells)
	}
}

// An exec naming another runtime than the live session's is refused, and
// the session is left as it was.
func TestExecWithAnotherRuntimeIsRefused(t *testing.T) {
	m := newTestManager(t)
	r := execOK(t, m, "s", req("value 1"))
	x := req("value 2")
	x.Spawn.Runtime = "python"
	_, err := m.Exec(context.Background(), "s", x, nil)
	wantCode(t, err, "bad-request")
	if i := describe(t, m, "s"); i.Generation != r.Generation || i.Cells != 1 {
		t.Errorf("the session changed: generation %s (was %s), cells %d", i.Generation, r.Generation, i.Cells)
	}
}
