package session

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
)

// brokenRuntime is a Jupyter kernel, as the session sees it, that cannot
// start: what a missing kernel program or an unreachable gateway looks
// like to the daemon.
const brokenRuntime = api.JupyterPrefix + "broken"

type brokenDriver struct{ fakeDriver }

func (brokenDriver) Info() driver.Info {
	return driver.Info{Name: brokenRuntime, Family: "jupyter", Ext: ".broken", Exes: []string{"sleep"}}
}

func (brokenDriver) Start(context.Context, driver.Spec, driver.Handler) (driver.Process, error) {
	return nil, errors.New("the kernel program is not installed")
}

func init() { driver.Register(brokenDriver{}) }

// TestHintsNameNoCommand: a refusal's words name no command, flag or
// tool — a model reads them unchanged, and could not type `--kernel` —
// and the steps it names are data (Next), for each edge to word; the
// input to change is Field.
func TestHintsNameNoCommand(t *testing.T) {
	m := newTestManager(t)
	execOK(t, m, "pipes", req("1"))
	spawn := func(runtime, gateway string) api.ExecRequest {
		r := req("1")
		r.Spawn.Runtime, r.Spawn.Gateway = runtime, gateway
		return r
	}
	for _, tc := range []struct {
		what  string
		call  func() error
		field string
		next  []api.Action
	}{
		{"a gateway for a runtime that is no kernel", func() error {
			_, err := m.Exec(context.Background(), "gw", spawn(fakeRuntime, "http://127.0.0.1:9"), nil)
			return err
		}, api.FieldRuntime, nil},
		{"a kernel that cannot start", func() error {
			_, err := m.Exec(context.Background(), "k", spawn(brokenRuntime, ""), nil)
			return err
		}, api.FieldRuntime, []api.Action{{Do: api.DoRuntimes}}},
		{"a kernel on a gateway that cannot start", func() error {
			_, err := m.Exec(context.Background(), "kg", spawn(brokenRuntime, "http://127.0.0.1:9"), nil)
			return err
		}, api.FieldGateway, []api.Action{{Do: api.DoKernels}}},
		{"a terminal asked of a session over pipes", func() error {
			_, _, _, err := m.Raw("pipes", alice)
			return err
		}, "", []api.Action{{Do: api.DoAttach, Session: "pipes"}}},
	} {
		e := wantCode(t, tc.call(), api.CodeBadRequest)
		for _, words := range []string{e.ErrorReply.Error, e.Hint} {
			if strings.Contains(words, "--") || strings.Contains(words, "polyrepl ") || strings.Contains(words, "`") {
				t.Errorf("%s: the refusal names a command or flag: %q", tc.what, words)
			}
		}
		if e.Field != tc.field || !slices.Equal(e.Next, tc.next) {
			t.Errorf("%s: field %q, next %v; want %q, %v", tc.what, e.Field, e.Next, tc.field, tc.next)
		}
	}
}
