package ghci

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/terminal"
)

func TestBlocks(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"6*7", "6*7\n"},
		{"x = 1\ny = 2\nx + y", "x = 1\ny = 2\nx + y\n"},
		{"twice :: Int -> Int\ntwice x = y\n  where y = x * 2\ntwice 21",
			":{\ntwice :: Int -> Int\ntwice x = y\n  where y = x * 2\n:}\ntwice 21\n"},
		{"fact 0 = 1\nfact n = n * fact (n - 1)\n\nfact 5", ":{\nfact 0 = 1\nfact n = n * fact (n - 1)\n:}\nfact 5\n"},
		{"data T = A\n  | B\n  deriving Show\nA", ":{\ndata T = A\n  | B\n  deriving Show\n:}\nA\n"},
		{":{\nlet a = 1\n    b = 2\n:}\n:t a", ":{\nlet a = 1\n    b = 2\n:}\n:t a\n"},
		{"main = do\n  putStrLn \"a\"\n  putStrLn \"b\"", ":{\nmain = do\n  putStrLn \"a\"\n  putStrLn \"b\"\n:}\n"},
	} {
		if got := Blocks(tc.in); got != tc.want {
			t.Errorf("Blocks(%q) =\n%q, want\n%q", tc.in, got, tc.want)
		}
	}
}

func start(t *testing.T) (*drivertest.Recorder, func(n int, code string) (string, string, string)) {
	exe := drivertest.Exe(t, "POLYREPL_TEST_GHCI", "ghci", "GHC (Debian: apt-get install ghc)")
	p, rec := drivertest.StartExe(t, terminal.Driver{P: Profile}, exe)
	if p.Version() == "" || strings.ContainsAny(p.Version(), " \n") {
		t.Errorf("version %q, want GHC's version number", p.Version())
	}
	return rec, func(n int, code string) (string, string, string) {
		t.Helper()
		r := drivertest.Run(t, p, rec, n, code)
		msg := ""
		if r.Error != nil {
			msg = r.Error.Message
		}
		return r.Status, rec.TakeOutput(), msg
	}
}

func TestCells(t *testing.T) {
	t.Parallel()
	_, run := start(t)
	for i, tc := range []struct{ code, status, out string }{
		{"6*7", "done", "42\n"},
		{"putStr \"no-newline\"", "done", "no-newline"},
		{"putStrLn \"héllo 中文 🎉\"", "done", "héllo 中文 🎉\n"},
		{"twice :: Int -> Int\ntwice x = y\n  where y = x * 2\ntwice 21", "done", "42\n"},
		{"fact :: Integer -> Integer\nfact 0 = 1\nfact n = n * fact (n - 1)\nfact 20", "done", "2432902008176640000\n"},
		{"s = \"" + strings.Repeat("a", 5000) + "\"\nlength s", "done", "5000\n"},
	} {
		status, out, msg := run(i+1, tc.code)
		if status != tc.status || out != tc.out {
			t.Errorf("%q: %s %q (%s), want %s %q", tc.code, status, out, msg, tc.status, tc.out)
		}
	}
}

func TestErrorsAndNames(t *testing.T) {
	t.Parallel()
	_, run := start(t)
	status, out, msg := run(1, "undefinedThing + 1")
	if status != "error" || !strings.Contains(msg, "not in scope: undefinedThing") || !strings.Contains(out, "undefinedThing") {
		t.Errorf("scope error: %s %q (message %q)", status, out, msg)
	}
	// The error points at the cell, not at the temporary file it ran from.
	if !strings.HasPrefix(msg, "<cell 1>:1:1: error") || strings.Contains(out, "ghci-cells-") {
		t.Errorf("scope error names %q (output %q), want <cell 1>", msg, out)
	}
	status, _, msg = run(2, `error "boom"`)
	if status != "error" || !strings.Contains(msg, "boom") {
		t.Errorf("exception: %s (message %q)", status, msg)
	}
	if status, out, _ := run(3, "x = 1\ny = x + 1\ny"); status != "done" || out != "2\n" {
		t.Errorf("after errors: %s %q", status, out)
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	exe := drivertest.Exe(t, "POLYREPL_TEST_GHCI", "ghci", "GHC (Debian: apt-get install ghc)")
	p, rec := drivertest.StartExe(t, terminal.Driver{P: Profile}, exe)
	r := drivertest.Run(t, p, rec, 1, "x = 1\nf y = y\nputStrLn \"z\"")
	if !slices.Equal(r.Names, []string{"f", "x"}) && !slices.Equal(r.Names, []string{"x", "f"}) {
		t.Errorf("names %q, want f and x", r.Names)
	}
}

func TestInterrupt(t *testing.T) {
	t.Parallel()
	exe := drivertest.Exe(t, "POLYREPL_TEST_GHCI", "ghci", "GHC (Debian: apt-get install ghc)")
	p, rec := drivertest.StartExe(t, terminal.Driver{P: Profile}, exe)
	drivertest.Run(t, p, rec, 1, "x = 41")
	if r := drivertest.Interrupt(t, p, rec, 2, "length [1..]", 500*time.Millisecond); r.Status != "interrupted" {
		t.Errorf("status %s, want interrupted", r.Status)
	}
	rec.TakeOutput()
	if r := drivertest.Run(t, p, rec, 3, "x + 1"); r.Status != "done" || rec.TakeOutput() != "42\n" {
		t.Errorf("after the interrupt: %s", r.Status)
	}
}

func TestBinds(t *testing.T) {
	for code, want := range map[string]bool{
		"x = 1":                        true,
		"f :: Int -> Int\nf n = n + 1": true,
		"let y = 2":                    true,
		"data T = A | B":               true,
		"line <- getLine":              true,
		":load Foo.hs":                 true,
		"import Data.List":             true,
		"x == 1":                       true, // looks like an equation: listed, to be safe
		"[n | n <- [1..3]]":            true,
		"1 + 1":                        false,
		"map (+1) [1, 2]":              false,
		"print x\nputStrLn \"hi\"":     false,
		"sum\n  [1, 2]":                false,
	} {
		if got := binds(code); got != want {
			t.Errorf("binds(%q) = %v, want %v", code, got, want)
		}
	}
}
