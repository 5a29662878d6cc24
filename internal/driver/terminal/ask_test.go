package terminal

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/proc"
)

// TestUnreadUntilRead: a write to a reader counts as unread until the
// reader's read returns, so a reader still blocked in the read the write
// will end (on a terminal, until the kernel hands the bytes over) is not
// taken for a cell asking; then it is taken.
func TestUnreadUntilRead(t *testing.T) {
	if _, ok := proc.Reads(os.Getpid()); !ok {
		t.Skip("this system shows no count of a process's reads (/proc/PID/io)")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// The shell reads one line, then sleeps: a reader blocked on its input.
	cmd := exec.Command("sh", "-c", "read line; sleep 30")
	cmd.Stdin = r
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	leader := proc.Proc{PID: cmd.Process.Pid}
	for end := time.Now().Add(10 * time.Second); !proc.WaitsOnStdin(leader); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Skip("the reader was not seen blocked on its input here")
		}
	}
	var u unread
	u.mark(cmd.Process.Pid)
	if u.taken() {
		t.Fatal("a write its reader has not read yet counts as taken")
	}
	if _, err := w.WriteString("x\n"); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); !u.taken(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the reader read the line, and the write still counts as unread")
		}
	}
	// A reader whose count never moves holds a write unread at most
	// unreadFor.
	u.mark(cmd.Process.Pid)
	u.since = time.Now().Add(-unreadFor - time.Millisecond)
	if !u.taken() {
		t.Error("a write unread for longer than unreadFor still counts as unread")
	}
	var none unread
	if !none.taken() {
		t.Error("with nothing written, the console counts as unread")
	}
}
