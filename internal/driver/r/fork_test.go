package r

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// TestFork: a fork of R's worker between cells is a second worker holding
// the same names, each changing its own from then on; the copy speaks on
// its own channels, has its own process group (an interrupt of either
// reaches its own only) and its own temporary directory (its end does
// not remove the parent's), and its end is seen with its status though it
// is not this process's child. The fork names the parent's child process
// (not the copy's) and the pipe to it (shared).
func TestFork(t *testing.T) {
	exe := testR(t)
	parent, prec := drivertest.StartExe(t, worker.Driver{R: Runtime}, exe)
	drivertest.MustValue(t, parent, prec, 1, "x <- c(1, 2, 3)\nfeed <- pipe('sleep 60', 'r')\nopen(feed)\nlength(x)")
	prec.TakeOutput()
	drivertest.MustValue(t, parent, prec, 2, "cat(tempdir())")
	ptmp := prec.TakeOutput()

	// R starts no thread of its own; a threaded BLAS does (OpenBLAS's
	// pool, at start).
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(parent.PID()) + "/task")
	if err != nil {
		t.Fatal(err)
	}
	crec := drivertest.NewAsker()
	child, f, into := drivertest.Fork(t, parent, worker.Driver{R: Runtime}, driver.Spec{Exe: exe, ValueLimit: 10000}, crec)
	if f.ThreadsTotal != len(tasks)-1 || len(f.Threads) != min(len(tasks)-1, driver.ForkList) {
		t.Errorf("the fork's threads not copied: %q (%d), want the parent's %d besides its first", f.Threads, f.ThreadsTotal, len(tasks)-1)
	}
	for _, name := range f.Threads {
		if !strings.HasPrefix(name, "unnamed thread ") {
			t.Errorf("the fork's thread %q: R names none of its own", name)
		}
	}
	kids, err := os.ReadFile("/proc/" + strconv.Itoa(parent.PID()) + "/task/" + strconv.Itoa(parent.PID()) + "/children")
	if err != nil {
		t.Fatal(err)
	}
	// The pipe's shell (or what it became: a shell may exec its command),
	// now the parent's only child besides the copy.
	others := slices.DeleteFunc(strings.Fields(string(kids)), func(k string) bool { return k == strconv.Itoa(f.PID) })
	if kid := strings.Join(others, ","); len(f.Children) != 1 || f.ChildrenTotal != 1 ||
		!strings.HasSuffix(f.Children[0], " (pid "+kid+")") {
		t.Errorf("the fork's children: %v (%d), want the pipe's process (pid %s)", f.Children, f.ChildrenTotal, kid)
	}
	if !strings.Contains(strings.Join(f.Shared, ","), "pipe (fd") {
		t.Errorf("the fork's shared: %v (%d), want the pipe to the shell", f.Shared, f.SharedTotal)
	}
	if g := drivertest.PGID(t, f.PID); g != f.PID {
		t.Errorf("the copy's process group %d, want its own (%d)", g, f.PID)
	}
	if g := drivertest.PGID(t, parent.PID()); g != parent.PID() {
		t.Errorf("the parent's process group %d, want its own (%d)", g, parent.PID())
	}

	// The copy holds none of its parent's channels: the pipes both hold
	// are those the fork said it shares.
	if held, said := drivertest.HeldPipes(t, parent.PID(), f.PID), drivertest.PipesSaid(f.Shared); !slices.Equal(held, said) {
		t.Errorf("the pipes the copy shares with its parent: %q, the fork said %q", held, said)
	}

	if v := drivertest.MustValue(t, child, crec.Recorder, 3, "x <- c(x, 4)\ncat('in the copy\\n')\nx"); v != "[1] 1 2 3 4" {
		t.Errorf("the copy's x: %s", v)
	}
	if out := crec.TakeOutput(); out != "in the copy\n" {
		t.Errorf("the copy's output %q", out)
	}
	// The copy is not of the parent's tree, and what it starts carries
	// its own cookie.
	for _, m := range parent.Tree().Members(true) {
		if m.PID == f.PID {
			t.Errorf("the copy %d is a member of the parent's tree", f.PID)
		}
	}
	key, value, _ := strings.Cut(into.Cookie, "=")
	if v := drivertest.MustValue(t, child, crec.Recorder, 11, "system2('sh', c('-c', shQuote('echo $"+key+"')), stdout = TRUE)"); v != `[1] "`+value+`"` {
		t.Errorf("a process the copy started has cookie %s, want %s", v, into.Cookie)
	}
	if v := drivertest.MustValue(t, parent, prec, 3, "x"); v != "[1] 1 2 3" {
		t.Errorf("the parent's x after the copy changed its own: %s", v)
	}
	if out := prec.TakeOutput(); out != "" {
		t.Errorf("the parent's output %q: the copy's reached it", out)
	}
	if v := drivertest.MustValue(t, child, crec.Recorder, 10, "m <- matrix(1, 300, 300)\n(m %*% m)[1, 1]"); v != "[1] 300" {
		t.Errorf("the copy's matrix product (its BLAS without the parent's threads): %s", v)
	}
	if v := drivertest.MustValue(t, child, crec.Recorder, 4, "tempdir() != "+strconv.Quote(ptmp)+" && dir.exists(tempdir())"); v != "[1] TRUE" {
		t.Errorf("the copy's temporary directory is its parent's (%s): %s", ptmp, v)
	}
	if v := drivertest.MustValue(t, child, crec.Recorder, 5, "system('echo from a subprocess; echo to stderr >&2')"); v != "" {
		t.Errorf("the copy's subprocess: value %q", v)
	}
	if out := crec.TakeOutput(); out != "from a subprocess\nto stderr\n" {
		t.Errorf("the copy's subprocess's output %q", out)
	}
	if out := prec.TakeOutput(); out != "" {
		t.Errorf("the parent's output %q: the copy's subprocess reached it", out)
	}

	// The copy's console is its own: readline() asks there.
	if err := child.Run(6, "readline('name? ')"); err != nil {
		t.Fatal(err)
	}
	select {
	case q := <-crec.Asked:
		if !strings.Contains(q.Text, "name?") {
			t.Errorf("the copy's question %+v", q)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the copy's readline() did not ask")
	}
	if err := child.(driver.Answerer).Answer("bob", false); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-crec.Done:
		if r.Status != "done" || r.Value != `[1] "bob"` {
			t.Errorf("the copy's readline(): %+v", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the copy's readline() did not end")
	}
	crec.TakeOutput()

	// An interrupt of the copy, escalated to its process group, ends its
	// cell and leaves the parent's running cell alone.
	if err := parent.Run(4, "Sys.sleep(2)\n'slept'"); err != nil {
		t.Fatal(err)
	}
	r := drivertest.Interrupt(t, child, crec.Recorder, 8, "repeat {}", 250*time.Millisecond)
	if r.Status != "interrupted" {
		t.Errorf("the copy's interrupted cell: %+v", r)
	}
	select {
	case r := <-prec.Done:
		if r.Status != "done" || r.Value != `[1] "slept"` {
			t.Errorf("the parent's cell while the copy was interrupted: %+v", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the parent's cell did not end")
	}

	// The copy's end is seen, with its status, though it is the parent
	// worker's child and not this process's; the parent's temporary
	// directory outlives it.
	if err := child.Run(9, "q(save = 'no', status = 7)"); err != nil {
		t.Fatal(err)
	}
	select {
	case ex := <-crec.Exit:
		if ex.Code != 7 {
			t.Errorf("the copy's end: %+v, want status 7", ex)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the copy's end was not seen")
	}
	if proc.Alive(child.Tree().Leader) {
		t.Error("the copy is alive after its end was reported")
	}
	if v := drivertest.MustValue(t, parent, prec, 5, "length(x)"); v != "[1] 3" {
		t.Errorf("the parent after the copy ended: %s", v)
	}
	if _, err := os.Stat(ptmp); err != nil {
		t.Errorf("the parent's temporary directory after the copy's end: %v", err)
	}
}

// TestForkRefused: a fork asked without a directory and an end marker is
// refused with the reason, and the worker goes on.
func TestForkRefused(t *testing.T) {
	p, rec := start(t)
	drivertest.MustValue(t, p, rec, 1, "x <- 1")
	_, err := p.(driver.Forker).Fork(driver.ForkInto{}, 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "needs a directory and an end marker") {
		t.Errorf("a fork into nowhere: %v", err)
	}
	if v := drivertest.MustValue(t, p, rec, 2, "x + 1"); v != "[1] 2" {
		t.Errorf("the worker after a refused fork: %s", v)
	}
}

// TestForkSharedTempDir: a copy that cannot be given its own temporary
// directory (the parent's cannot be moved aside for a moment) is made all
// the same, and the fork says that the two share it and that the first
// to end removes it.
func TestForkSharedTempDir(t *testing.T) {
	p, rec := start(t)
	// What the parent's directory would be moved to is taken, and not empty.
	drivertest.MustValue(t, p, rec, 1, "aside <- paste0(tempdir(), '-fork-', Sys.getpid())\n"+
		"dir.create(aside)\nfile.create(file.path(aside, 'taken'))\ncat(aside)")
	aside := rec.TakeOutput()
	defer os.RemoveAll(aside)
	ch, err := worker.MakeChannels(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	f, err := p.(driver.Forker).Fork(ch.Into(), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Ended before it is adopted, without R's clean-up (which would
	// remove the directory the two share).
	defer syscall.Kill(f.PID, syscall.SIGKILL)
	if len(f.Shared) == 0 || !strings.HasPrefix(f.Shared[0], "tempdir(), removed by the first to end: /") ||
		f.SharedTotal != len(f.Shared) {
		t.Errorf("the fork's shared: %q (%d), want the temporary directory first", f.Shared, f.SharedTotal)
	}
}

// TestCellForkRunsOff: a child a cell forks that runs off the cell's end
// (parallel's mcfork, not left by mcexit) ends there, rather than answer
// for the session and read its commands: the cells after count on.
func TestCellForkRunsOff(t *testing.T) {
	p, rec := start(t)
	drivertest.MustValue(t, p, rec, 1, "n <- 0\nchild <- parallel:::mcfork()\nn <- n + 1\nn")
	for i := 2; i <= 6; i++ {
		if v := drivertest.MustValue(t, p, rec, i, "n <- n + 1\nn"); v != "[1] "+strconv.Itoa(i) {
			t.Fatalf("cell %d after a cell's fork ran off: %s", i, v)
		}
	}
	select {
	case r := <-rec.Done:
		t.Errorf("a result no cell asked for: %+v", r)
	case <-time.After(200 * time.Millisecond):
	}
	if v := drivertest.MustValue(t, p, rec, 7, "dir.exists(tempdir())"); v != "[1] TRUE" {
		t.Errorf("the session's temporary directory after its cell's child ended: %s", v)
	}
	// The child ended: the session's only child is it, a zombie, if any.
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID()) + "/task/" + strconv.Itoa(p.PID()) + "/children")
	if err != nil {
		t.Fatal(err)
	}
	for _, kid := range strings.Fields(string(b)) {
		if st, err := os.ReadFile("/proc/" + kid + "/stat"); err == nil {
			s := string(st)
			if state := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0]; state != "Z" {
				t.Errorf("the cell's child %s lives on (state %s)", kid, state)
			}
		}
	}
}
