package java

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
)

func TestJava(t *testing.T) {
	exe := drivertest.Exe(t, "POLYREPL_TEST_JAVA", "java", "a JDK (Debian: apt-get install openjdk-17-jdk-headless)")
	p, rec := drivertest.StartExe(t, worker.Driver{R: Runtime}, exe)
	if v := p.Version(); !strings.Contains(v, ".") {
		t.Errorf("version %q", v)
	}
	drivertest.Cells(t, p, rec, []drivertest.Cell{
		{Code: "6*7", Value: "42"},
		{Code: `System.out.print("no-newline")`, Output: "no-newline"},
		{Code: "int twice(int x) {\n  int y = x * 2;\n  return y;\n}"},
		{Code: "int r = twice(21);", Value: "42"},
		{Code: `throw new IllegalStateException("boom")`, Status: "error", ErrorHas: "boom"},
		{Code: `int z = "a";`, Status: "error", ErrorHas: "incompatible types"},
		{Code: `System.out.println("héllo 中文 🎉");`, Output: "héllo 中文 🎉\n"},
		{Code: `String s = "` + strings.Repeat("a", 5000) + `";` + "\ns.length()", Value: "5000"},
		{Code: `List.of(1, 2)`, Value: "[1, 2]"},
		{Code: `"x"`, Value: `"x"`},
	})
	r := drivertest.Run(t, p, rec, 11, "int[] a = new int[1];\na[2] = 1;")
	if r.Error == nil || r.Error.Type != "java.lang.ArrayIndexOutOfBoundsException" ||
		!strings.HasPrefix(r.Error.Traceback, "|  Exception java.lang.ArrayIndexOutOfBoundsException: Index 2 out of bounds for length 1\n|        at (#") {
		t.Errorf("the exception is not told as jshell tells it: %+v", r.Error)
	}
	r = drivertest.Run(t, p, rec, 11, "var x = 1;")
	for _, n := range []string{"x", "r", "s", "twice"} {
		if !slices.Contains(r.Names, n) {
			t.Errorf("names %q lack %s", r.Names, n)
		}
	}
	if d := (driver.Info{ValueFormat: Runtime.ValueFormat}).Display(1, r.ValueName, r.Value); d != "x ==> 1" {
		t.Errorf("display %q, want jshell's x ==> 1", d)
	}
	if r := drivertest.Interrupt(t, p, rec, 12, "while (true) {}", 500*time.Millisecond); r.Status != "interrupted" {
		t.Errorf("interrupt: %s", r.Status)
	}
	if r := drivertest.Interrupt(t, p, rec, 13, "Thread.sleep(100000)", 500*time.Millisecond); r.Status != "interrupted" {
		t.Errorf("interrupting a sleep: %s", r.Status)
	}
	rec.TakeOutput()
	if r := drivertest.Run(t, p, rec, 14, "x + 1"); r.Value != "2" {
		t.Errorf("after the interrupt: %s %q %v", r.Status, r.Value, r.Error)
	}
}
