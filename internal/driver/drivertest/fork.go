package drivertest

import (
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

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
