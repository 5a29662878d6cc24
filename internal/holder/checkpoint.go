package holder

import (
	"context"
	"fmt"
	"log"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// A checkpoint is a frozen fork of the session's runtime, taken between
// cells by the session's own holder: a copy made into channels the
// holder makes (in the runtime's driver directory, Hello.ForkDir),
// adopted with a handler that drops everything, then stopped (SIGSTOP).
// It costs only the pages that later change. A rollback continues it
// (SIGCONT), asks it to fork once more into fresh channels, stops it
// again, and adopts that copy as the session's runtime: the checkpoint
// stays for another rollback. The old runtime's events are muted before
// its tree is killed, so its end is not the session's; the daemon is
// told the new runtime (frameRuntime).
//
// The holder keeps the checkpoints, so a new daemon is told them in its
// hello; the holder's end (kill, stop, restart) ends them all.

// MaxCheckpoints bounds a session's checkpoints: a checkpoint past it
// ends the oldest, which the answer names.
const MaxCheckpoints = 8

// MaxLabel bounds a checkpoint's label.
const MaxLabel = 64

// Checkpoint is a checkpoint as the holder keeps it and says it: its
// label, the cell it was taken after, when, its process, and the names
// the session held then.
type Checkpoint struct {
	Label string    `json:"label"`
	Cell  int       `json:"cell"`
	At    time.Time `json:"at"`
	Proc  proc.Proc `json:"proc"`
	Names []string  `json:"names,omitempty"`
	// Apart is what the copy did not get (the runtime's other threads)
	// or shares with the runtime (open files): a rollback's runtime
	// lacks those threads too.
	Apart *driver.Forked `json:"apart,omitempty"`
}

// CheckpointArgs are a checkpoint's: its label ("" for "cN", N the cell
// it is taken after). A label in use is replaced.
type CheckpointArgs struct {
	Label string `json:"label,omitempty"`
}

// CheckpointAnswer is a checkpoint taken: it, the one of the same label
// it replaced, and the oldest it dropped to stay within MaxCheckpoints.
type CheckpointAnswer struct {
	Checkpoint
	Replaced *Checkpoint `json:"replaced,omitempty"`
	Dropped  *Checkpoint `json:"dropped,omitempty"`
}

// RollbackArgs are a rollback's: the checkpoint's label ("" for the
// latest).
type RollbackArgs struct {
	Label string `json:"label,omitempty"`
}

// RollbackAnswer is a rollback done: the checkpoint resumed, the new
// runtime, and the cells the session had run before it (those after the
// checkpoint's are rolled back).
type RollbackAnswer struct {
	Checkpoint Checkpoint `json:"checkpoint"`
	Leader     proc.Proc  `json:"leader"`
	Before     int        `json:"before"`
}

// Runtime is frameRuntime's payload: the session's runtime and
// checkpoints as they are now, after a checkpoint or a rollback.
type Runtime struct {
	Leader      proc.Proc    `json:"leader"`
	Spare       []proc.Proc  `json:"spare,omitempty"`
	Checkpoints []Checkpoint `json:"checkpoints,omitempty"`
	// Rollback is set when the runtime was swapped for a copy of a
	// checkpoint: Cells and Names are the session's from then on.
	Rollback *RollbackAnswer `json:"rollback,omitempty"`
	Cells    int             `json:"cells"`
	Names    []string        `json:"names,omitempty"`
}

// RuntimeChanger is a Handler told of frameRuntime.
type RuntimeChanger interface {
	RuntimeChanged(Runtime)
}

// CodeNoCheckpoint: no checkpoint of that label, or none at all.
const CodeNoCheckpoint Code = "no-checkpoint"

// relay passes a runtime's events to the server until it is muted: a
// rollback mutes the old runtime's before it ends it, and a checkpoint's
// are muted from the start.
type relay struct {
	s     *server
	muted atomic.Bool
	ended chan struct{} // closed at the runtime's exit
	once  atomic.Bool
}

func newRelay(s *server, muted bool) *relay {
	r := &relay{s: s, ended: make(chan struct{})}
	r.muted.Store(muted)
	return r
}

func (r *relay) Output(p []byte) {
	if !r.muted.Load() {
		r.s.Output(p)
	}
}

func (r *relay) CellDone(res driver.Result) {
	if !r.muted.Load() {
		r.s.CellDone(res)
	}
}

func (r *relay) Exited(e driver.Exit) {
	if !r.muted.Load() {
		r.s.Exited(e)
	}
	if r.once.CompareAndSwap(false, true) {
		close(r.ended)
	}
}

func (r *relay) InputAsked(p driver.Prompt) {
	if !r.muted.Load() {
		r.s.InputAsked(p)
	}
}

// live is the session's runtime and the relay of its events.
type live struct {
	p driver.Process
	h *relay
}

// runtime is the session's runtime now (nil before it started).
func (s *server) runtime() driver.Process {
	if l := s.rt.Load(); l != nil {
		return l.p
	}
	return nil
}

// checkpoint is one kept: the stopped copy, as a driver Process.
type checkpoint struct {
	Checkpoint
	p driver.Process
	h *relay
}

// spareLocked is spare with every checkpoint added: they carry the
// session's cookie and descend from its runtimes, and are no member of
// the runtime's tree.
func (s *server) spareLocked(spare []proc.Proc) []proc.Proc {
	out := slices.Clone(spare)
	for _, c := range s.ckpts {
		out = append(out, c.Proc)
	}
	return out
}

// checkpointsLocked is what the hello says of the checkpoints.
func (s *server) checkpointsLocked() []Checkpoint {
	var out []Checkpoint
	for _, c := range s.ckpts {
		out = append(out, c.Checkpoint)
	}
	return out
}

// treeOf is p's tree, its checkpoints spared.
func (s *server) treeOf(p driver.Process) proc.Tree {
	t := p.Tree()
	s.mu.Lock()
	t.Spare = s.spareLocked(t.Spare)
	s.mu.Unlock()
	return t
}

// between refuses an operation while a cell runs or after the runtime
// ended; it answers the cells run and the names held.
func (s *server) between(what string) (int, []string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.exit != nil || s.ending:
		return 0, nil, &Error{Code: CodeNoFork, Msg: "the runtime has ended"}
	case s.cur != nil && !s.cur.Done:
		return 0, nil, &Error{Code: CodeNoFork, Msg: fmt.Sprintf("cell %d runs: %s is taken between cells (interrupt it first)", s.cur.Cell, what)}
	}
	return s.cells, slices.Clone(s.names), nil
}

// copyOf forks from (the runtime, or a checkpoint) into fresh channels
// and adopts the copy with handler h.
func (s *server) copyOf(from driver.Process, h driver.Handler) (driver.Process, driver.Forked, error) {
	f, ok := from.(driver.Forker)
	ad, ok2 := s.drv.(driver.Adopter)
	if !ok || !ok2 || s.hi.ForkDir == "" {
		return nil, driver.Forked{}, &Error{Code: CodeNoFork, Msg: fmt.Sprintf("the %s runtime cannot fork", s.sp.Spawn.Runtime)}
	}
	ch, err := ad.ForkChannels(s.hi.ForkDir)
	if err != nil {
		return nil, driver.Forked{}, &Error{Code: CodeNoFork, Msg: err.Error()}
	}
	defer ch.Close()
	into := ch.Into()
	into.Cookie = s.sp.Cookie
	got, err := f.Fork(into, forkWait)
	if err != nil {
		return nil, driver.Forked{}, &Error{Code: CodeNoFork, Msg: err.Error()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), driver.StartTimeout)
	defer cancel()
	spec := s.spec
	spec.Sandbox, spec.RuntimeDir = nil, s.hi.ForkDir
	p, err := ch.Adopt(ctx, spec, got.PID, h)
	if err != nil {
		return nil, driver.Forked{}, &Error{Code: CodeNoFork, Msg: err.Error()}
	}
	return p, got.Bounded(), nil
}

// labelOf is a checkpoint's label: given, or "cN".
func labelOf(label string, cell int) (string, error) {
	if label == "" {
		return "c" + strconv.Itoa(cell), nil
	}
	if err := api.ValidateName(label); err != nil || len(label) > MaxLabel {
		return "", &Error{Code: CodeBadArgs, Msg: fmt.Sprintf("a checkpoint's label uses %s, at most %d of them", api.NameChars, MaxLabel)}
	}
	return label, nil
}

// Checkpoint keeps a frozen fork of the runtime.
func (v service) Checkpoint(a CheckpointArgs) (CheckpointAnswer, error) {
	s := v.s
	s.ckMu.Lock()
	defer s.ckMu.Unlock()
	s.oldMu.Lock()
	defer s.oldMu.Unlock()
	cells, names, err := s.between("a checkpoint")
	if err != nil {
		return CheckpointAnswer{}, err
	}
	label, err := labelOf(a.Label, cells)
	if err != nil {
		return CheckpointAnswer{}, err
	}
	h := newRelay(s, true)
	p, apart, err := s.copyOf(s.runtime(), h)
	if err != nil {
		return CheckpointAnswer{}, err
	}
	leader := p.Tree().Leader
	if err := proc.Signal(leader, syscall.SIGSTOP); err != nil {
		stopCopy(p, h, nil)
		return CheckpointAnswer{}, &Error{Code: CodeFailed, Msg: fmt.Sprintf("cannot stop the checkpoint's copy (pid %d): %v", leader.PID, err)}
	}
	waitStopped(leader)
	c := &checkpoint{Checkpoint: Checkpoint{Label: label, Cell: cells, At: time.Now(), Proc: leader, Names: names, Apart: &apart}, p: p, h: h}
	var ans CheckpointAnswer
	var gone []*checkpoint
	s.mu.Lock()
	if i := slices.IndexFunc(s.ckpts, func(k *checkpoint) bool { return k.Label == label }); i >= 0 {
		old := s.ckpts[i]
		ans.Replaced = &old.Checkpoint
		gone = append(gone, old)
		s.ckpts = slices.Delete(s.ckpts, i, i+1)
	}
	if len(s.ckpts) >= MaxCheckpoints {
		old := s.ckpts[0]
		ans.Dropped = &old.Checkpoint
		gone = append(gone, old)
		s.ckpts = s.ckpts[1:]
	}
	s.ckpts = append(s.ckpts, c)
	s.mu.Unlock()
	for _, g := range gone {
		s.endCheckpoint(g)
	}
	s.mu.Lock()
	s.sendRuntimeLocked(nil)
	s.mu.Unlock()
	ans.Checkpoint = c.Checkpoint
	return ans, nil
}

// Rollback ends the runtime and resumes a checkpoint in its place.
func (v service) Rollback(a RollbackArgs) (RollbackAnswer, error) {
	s := v.s
	s.ckMu.Lock()
	defer s.ckMu.Unlock()
	s.oldMu.Lock()
	ending := false // the old runtime's end holds oldMu from here
	defer func() {
		if !ending {
			s.oldMu.Unlock()
		}
	}()
	before, _, err := s.between("a rollback")
	if err != nil {
		return RollbackAnswer{}, err
	}
	s.mu.Lock()
	var c *checkpoint
	if a.Label == "" && len(s.ckpts) > 0 {
		c = s.ckpts[len(s.ckpts)-1]
	} else if i := slices.IndexFunc(s.ckpts, func(k *checkpoint) bool { return k.Label == a.Label }); i >= 0 {
		c = s.ckpts[i]
	}
	s.mu.Unlock()
	if c == nil {
		msg := "the session has no checkpoint"
		if a.Label != "" {
			msg = fmt.Sprintf("the session has no checkpoint %q", api.Clip(a.Label, MaxLabel, "label"))
		}
		return RollbackAnswer{}, &Error{Code: CodeNoCheckpoint, Msg: msg}
	}
	if err := proc.Signal(c.Proc, syscall.SIGCONT); err != nil {
		return RollbackAnswer{}, &Error{Code: CodeFailed, Msg: fmt.Sprintf("checkpoint %s (pid %d) cannot be resumed: %v", c.Label, c.Proc.PID, err)}
	}
	h := newRelay(s, false)
	p, _, err := s.copyOf(c.p, h)
	proc.Signal(c.Proc, syscall.SIGSTOP)
	if err != nil {
		return RollbackAnswer{}, err
	}
	old := s.rt.Load()
	old.h.muted.Store(true) // its end is not the session's
	s.rt.Store(&live{p: p, h: h})
	leader := p.Tree().Leader
	ans := RollbackAnswer{Checkpoint: c.Checkpoint, Leader: leader, Before: before}
	s.mu.Lock()
	s.hi.Leader = leader
	s.cells, s.names, s.last = c.Cell, slices.Clone(c.Names), time.Now()
	if s.cur != nil {
		s.cur.out.free()
		s.cur = nil
	}
	s.idle.free()
	s.idleAfter, s.idleSeq = c.Cell, 0
	s.look = nil
	s.sendRuntimeLocked(&ans)
	s.mu.Unlock()
	t := old.p.Tree()
	s.mu.Lock()
	t.Spare = append(s.spareLocked(t.Spare), leader)
	kept := s.spareLocked(nil)
	s.mu.Unlock()
	// The old runtime ends after the answer: unmapping a large runtime's
	// memory is half a rollback's time, and the session no longer waits
	// on it (a cell runs on the new runtime meanwhile).
	ending = true
	go func() {
		defer s.oldMu.Unlock()
		s.endRolledBack(old, t, kept)
	}()
	return ans, nil
}

// endRolledBack ends the runtime a rollback replaced (its tree t) and
// waits for its end, with the checkpoints kept running meanwhile.
func (s *server) endRolledBack(old *live, t proc.Tree, kept []proc.Proc) {
	// A checkpoint taken from the old runtime is its child, in a process
	// group of its own: the parent's end orphans that group, and the
	// kernel sends a stopped member of an orphaned group SIGHUP (which
	// ends a worker). So none is stopped while the old runtime ends.
	for _, k := range kept {
		proc.Signal(k, syscall.SIGCONT)
	}
	defer func() {
		for _, k := range kept {
			proc.Signal(k, syscall.SIGSTOP)
		}
	}()
	if e, ok := old.p.(driver.Ender); ok {
		e.End(endGrace)
	} else if survivors, err := t.Kill(endGrace); err != nil {
		log.Printf("session %s: the runtime rolled back from: %d processes survived: %v", s.sp.Name, len(survivors), err)
	}
	select {
	case <-old.h.ended:
	case <-time.After(5 * time.Second):
		log.Printf("session %s: the runtime rolled back from (pid %d) did not report its end within 5s", s.sp.Name, t.Leader.PID)
	}
}

// sendRuntimeLocked tells the daemon the runtime and checkpoints now.
func (s *server) sendRuntimeLocked(rb *RollbackAnswer) {
	rt := Runtime{Leader: s.hi.Leader, Spare: s.spareLocked(s.runtime().Tree().Spare), Checkpoints: s.checkpointsLocked(),
		Rollback: rb, Cells: s.cells, Names: s.names}
	s.sendJSONLocked(frameRuntime, rt)
}

// endCheckpoint kills a checkpoint's copy and waits for its end: the
// live runtime and the other checkpoints, which may descend from it,
// are spared.
func (s *server) endCheckpoint(c *checkpoint) {
	s.mu.Lock()
	spare := s.spareLocked(nil)
	s.mu.Unlock()
	if p := s.runtime(); p != nil {
		spare = append(spare, p.Tree().Leader)
	}
	stopCopy(c.p, c.h, slices.DeleteFunc(spare, func(q proc.Proc) bool { return q == c.Proc }))
}

// stopCopy kills a stopped copy (SIGKILL: a stopped process takes no
// SIGTERM) and waits for its driver to report the end.
func stopCopy(p driver.Process, h *relay, spare []proc.Proc) {
	t := proc.Tree{Leader: p.Tree().Leader, Spare: spare}
	proc.Signal(t.Leader, syscall.SIGKILL)
	t.Kill(0)
	select {
	case <-h.ended:
	case <-time.After(5 * time.Second):
		log.Printf("checkpoint (pid %d) did not report its end within 5s", t.Leader.PID)
	}
}

// endCheckpoints ends every checkpoint (the holder's end).
func (s *server) endCheckpoints() {
	s.ckMu.Lock()
	defer s.ckMu.Unlock()
	s.oldMu.Lock()
	defer s.oldMu.Unlock()
	s.mu.Lock()
	cs := s.ckpts
	s.mu.Unlock()
	for i := len(cs) - 1; i >= 0; i-- {
		s.endCheckpoint(cs[i])
		s.mu.Lock()
		s.ckpts = slices.DeleteFunc(s.ckpts, func(k *checkpoint) bool { return k == cs[i] })
		s.mu.Unlock()
	}
}

func (r remote) Checkpoint(a CheckpointArgs) (CheckpointAnswer, error) {
	var ans CheckpointAnswer
	err := r.p.callInto("checkpoint", a, &ans)
	ans.Checkpoint = boundCheckpoint(ans.Checkpoint)
	for _, c := range []*Checkpoint{ans.Replaced, ans.Dropped} {
		if c != nil {
			*c = boundCheckpoint(*c)
		}
	}
	return ans, err
}

func (r remote) Rollback(a RollbackArgs) (RollbackAnswer, error) {
	var ans RollbackAnswer
	err := r.p.callInto("rollback", a, &ans)
	ans.Checkpoint = boundCheckpoint(ans.Checkpoint)
	return ans, err
}

// Checkpoint asks the holder to keep a frozen fork of the runtime.
func (p *Process) Checkpoint(label string) (CheckpointAnswer, error) {
	return p.remote().Checkpoint(CheckpointArgs{Label: label})
}

// Rollback asks the holder to resume a checkpoint in the runtime's
// place. The daemon is told the new runtime (frameRuntime) before the
// answer.
func (p *Process) Rollback(label string) (RollbackAnswer, error) {
	return p.remote().Rollback(RollbackArgs{Label: label})
}

// Checkpoints are the session's checkpoints as the holder last said.
func (p *Process) Checkpoints() []Checkpoint {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.hello.Checkpoints)
}

// runtimeChanged takes frameRuntime: the leader, spare and checkpoints
// the daemon uses from now on, then the handler's turn (the session
// bounds the names, as a cell's).
func (p *Process) runtimeChanged(rt Runtime) {
	rt.Checkpoints = boundCheckpoints(rt.Checkpoints)
	rt.Spare = boundSpare(rt.Spare)
	p.mu.Lock()
	p.hello.Leader = rt.Leader
	p.hello.Checkpoints = rt.Checkpoints
	for _, q := range rt.Spare {
		if !slices.Contains(p.spare, q) {
			p.spare = append(p.spare, q)
		}
	}
	p.spare = slices.DeleteFunc(p.spare, func(c proc.Proc) bool { return !proc.Alive(c) })
	p.mu.Unlock()
	if c, ok := p.h.(RuntimeChanger); ok {
		c.RuntimeChanged(rt)
	}
}

// boundCheckpoints holds a holder's checkpoints to their bounds where
// they enter the daemon: the newest MaxCheckpoints, labels and names cut.
func boundCheckpoints(cs []Checkpoint) []Checkpoint {
	if len(cs) > MaxCheckpoints {
		cs = cs[len(cs)-MaxCheckpoints:]
	}
	for i := range cs {
		cs[i] = boundCheckpoint(cs[i])
	}
	return cs
}

// boundCheckpoint is one checkpoint held to its bounds: its label and
// names cut, and what its copy lacks (driver.Forked.Bounded).
func boundCheckpoint(c Checkpoint) Checkpoint {
	c.Label = api.Clip(c.Label, MaxLabel, "label")
	names := c.Names[:min(len(c.Names), api.MaxNames)]
	for j, n := range names {
		names[j] = api.Clip(n, api.NameLimit, "name")
	}
	c.Names = names
	if c.Apart != nil {
		b := c.Apart.Bounded()
		c.Apart = &b
	}
	return c
}

// MaxSpare bounds the processes a holder may say its runtime's tree
// spares (forks given away, checkpoints), where they enter the daemon: a
// session forked more often than that keeps the newest.
const MaxSpare = 256

// boundSpare holds a holder's spared processes to MaxSpare, the newest.
func boundSpare(ps []proc.Proc) []proc.Proc {
	if len(ps) > MaxSpare {
		ps = ps[len(ps)-MaxSpare:]
	}
	return ps
}

// waitStopped waits, briefly, until a SIGSTOP sent to p took effect (a
// signal is delivered once the process next runs): a checkpoint
// answered is listed as it is.
func waitStopped(p proc.Proc) {
	for deadline := time.Now().Add(2 * time.Second); !proc.Stopped(p) && proc.Alive(p) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}
