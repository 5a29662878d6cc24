package cli

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// TestCancelOnSignal: once a command has run a moment, Ctrl-C cancels
// its call instead of ending the process.
func TestCancelOnSignal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	release := cancelOnSignal(ctx, cancel)
	defer release()
	time.Sleep(signalsAfter + 50*time.Millisecond)
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("SIGINT did not cancel the call")
	}
}
