//go:build !linux && !darwin

package sandbox

import (
	"errors"

	"github.com/polyrepl/polyrepl/internal/api"
)

// Check refuses every policy but full here, unless the caller accepts
// less: this system has no sandbox polyrepl knows.
func Check(p api.Sandbox) (api.Enforced, error) {
	return api.Enforced{}, Judge(p, []string{"a sandbox polyrepl knows (Landlock, Seatbelt)"})
}

// Trampoline: there is nothing to confine with here.
const Trampoline = false

// StartConfined refuses: Check refused every policy here already,
// unless the caller accepted less.
func StartConfined(s Spec, start func() error) error {
	if s.Policy.BestEffort {
		return start()
	}
	return errors.New("this system has no sandbox polyrepl knows")
}

func confineExec(s Spec, argv []string) error {
	return errors.New("this system has no sandbox polyrepl knows")
}

// KernelABI is Landlock's ABI version: none here.
func KernelABI() int { return 0 }
