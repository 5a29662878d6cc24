package drivertest

import (
	"context"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
)

// Asker is a Recorder that also takes the questions cells ask.
type Asker struct {
	*Recorder
	Asked chan driver.Prompt
}

// NewAsker makes an Asker.
func NewAsker() *Asker { return &Asker{Recorder: NewRecorder(), Asked: make(chan driver.Prompt, 1)} }

// InputAsked implements driver.Asker.
func (a *Asker) InputAsked(p driver.Prompt) { a.Asked <- p }

// PGID is pid's process group, from /proc/PID/stat.
func PGID(t testing.TB, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	g, err := strconv.Atoi(f[2])
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// HeldPipes are the copy's descriptors on pipes its parent holds too, as
// a fork says them ("pipe (fd N)"), sorted.
func HeldPipes(t testing.TB, parent, copy int) []string {
	t.Helper()
	targets := func(pid int) map[string]string {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd"
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, e := range ents {
			if target, err := os.Readlink(dir + "/" + e.Name()); err == nil && strings.HasPrefix(target, "pipe:") {
				m[e.Name()] = target
			}
		}
		return m
	}
	held := map[string]bool{}
	for _, target := range targets(parent) {
		held[target] = true
	}
	var out []string
	for fd, target := range targets(copy) {
		if held[target] {
			out = append(out, "pipe (fd "+fd+")")
		}
	}
	sort.Strings(out)
	return out
}

// PipesSaid are the pipes among what a fork says it shares, sorted.
func PipesSaid(shared []string) []string {
	var out []string
	for _, s := range shared {
		if strings.HasPrefix(s, "pipe (fd ") {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// Fork forks parent between cells into channels ad makes, with a cookie
// of its own, and adopts the copy with h: the copy, what the fork said,
// and where it went. The copy is ended, and its channels removed, when
// the test ends.
func Fork(t testing.TB, parent driver.Process, ad driver.Adopter, spec driver.Spec, h driver.Handler) (driver.Process, driver.Forked, driver.ForkInto) {
	t.Helper()
	ch, err := ad.ForkChannels(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ch.Close)
	into := ch.Into()
	into.Cookie = Cookie("copy")
	f, err := parent.(driver.Forker).Fork(into, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if f.PID <= 0 || f.PID == parent.PID() {
		t.Fatalf("fork: pid %d (parent %d)", f.PID, parent.PID())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	child, err := ch.Adopt(ctx, spec, f.PID, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Tree().Kill(time.Second) })
	return child, f, into
}
