package sh

import (
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

func TestSh(t *testing.T) {
	exe := drivertest.Exe(t, "POLYREPL_TEST_SH", "dash", "dash (Debian: apt-get install dash)")
	p, rec := drivertest.StartExe(t, terminal.Driver{P: Profile}, exe)
	drivertest.Cells(t, p, rec, []drivertest.Cell{
		{Code: "echo $((6*7))", Output: "42\n"},
		{Code: "[ -t 1 ] && echo on a terminal", Output: "on a terminal\n"},
		{Code: "printf no-newline", Output: "no-newline"},
		{Code: "false", Status: "error", ErrorHas: "exit status 1"},
		{Code: "ls /no/such/dir", Status: "error", OutputHas: "No such file", ErrorHas: "exit status 2"},
		{Code: "twice() {\n  echo $(($1 * 2))\n}\ntwice 21", Output: "42\n"},
		{Code: "s=" + strings.Repeat("a", 5000) + "\necho ${#s}", Output: "5000\n"},
		{Code: `echo "héllo 中文 🎉"`, Output: "héllo 中文 🎉\n"},
	})
	if r := drivertest.Interrupt(t, p, rec, 9, "while :; do :; done", 500*time.Millisecond); r.Status != "interrupted" {
		t.Errorf("interrupt: %s", r.Status)
	}
	rec.TakeOutput()
	if drivertest.Run(t, p, rec, 10, "echo ${#s}"); rec.TakeOutput() != "5000\n" {
		t.Error("the state was lost by the interrupt")
	}
}
