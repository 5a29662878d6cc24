package holder

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/polyrepl/polyrepl/internal/limit"
)

// Every method of the Service is one operation on the wire, and the
// daemon's side calls each by the name the holder dispatches.
func TestEveryOperationIsOneMethod(t *testing.T) {
	st := reflect.TypeOf((*Service)(nil)).Elem()
	if st.NumMethod() != len(ops) {
		t.Errorf("the Service has %d methods and the wire %d operations", st.NumMethod(), len(ops))
	}
	// Each op runs the method it is named for: a recorder says which.
	for name, o := range ops {
		rec := &recorder{}
		if _, err := o.run(rec, nil); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if len(rec.called) != 1 {
			t.Errorf("%s ran %v, want one method", name, rec.called)
		}
	}
	// The daemon's side names each method as the holder dispatches it.
	r := remote{}
	rt := reflect.TypeOf(r)
	for i := range rt.NumMethod() {
		if _, ok := st.MethodByName(rt.Method(i).Name); !ok {
			t.Errorf("the daemon's side has %s, which the Service does not", rt.Method(i).Name)
		}
	}
}

// A refusal travels as its code: errors.Is finds it on the daemon's
// side, and arguments the holder cannot read are refused as such.
func TestRefusalsAreTyped(t *testing.T) {
	var err error = &Error{Code: CodeNoTerminal, Msg: "the holder's words"}
	if !errors.Is(err, ErrNoTerminal) || errors.Is(err, errAttached) {
		t.Errorf("errors.Is on a refusal by code")
	}
	if codeOf(errors.New("plain")) != CodeFailed || codeOf(noInput("x")) != CodeNoInput {
		t.Errorf("codes of errors")
	}
	_, err = ops["interrupt"].run(&recorder{}, json.RawMessage(`{"attempt": "two"}`))
	if codeOf(err) != CodeBadArgs {
		t.Errorf("unreadable arguments: %v, want %s", err, CodeBadArgs)
	}
}

// recorder is a Service that notes which method ran.
type recorder struct{ called []string }

func (r *recorder) note(m string) error           { r.called = append(r.called, m); return nil }
func (r *recorder) Interrupt(InterruptArgs) error { return r.note("Interrupt") }
func (r *recorder) Answer(AnswerArgs) error       { return r.note("Answer") }
func (r *recorder) Complete(CompleteArgs) (Completion, error) {
	return Completion{}, r.note("Complete")
}
func (r *recorder) Vars(VarsArgs) (VarsAnswer, error) {
	return VarsAnswer{}, r.note("Vars")
}
func (r *recorder) Fork(ForkArgs) (ForkAnswer, error) {
	return ForkAnswer{}, r.note("Fork")
}

func (r *recorder) Checkpoint(CheckpointArgs) (CheckpointAnswer, error) {
	return CheckpointAnswer{}, r.note("Checkpoint")
}

func (r *recorder) Rollback(RollbackArgs) (RollbackAnswer, error) {
	return RollbackAnswer{}, r.note("Rollback")
}
func (r *recorder) EndRemote(struct{}) error     { return r.note("EndRemote") }
func (r *recorder) Sync(struct{}) error          { return r.note("Sync") }
func (r *recorder) AttachRaw(struct{}) error     { return r.note("AttachRaw") }
func (r *recorder) DetachRaw(struct{}) error     { return r.note("DetachRaw") }
func (r *recorder) SetLimit(limit.Held) error    { return r.note("SetLimit") }
func (r *recorder) MarkRead([]readMark) error    { return r.note("MarkRead") }
func (r *recorder) SetIdleEntry(idleEntry) error { return r.note("SetIdleEntry") }
func (r *recorder) End(struct{}) error           { return r.note("End") }

// A call frame of any bytes is run or refused with a Code, and never
// panics the holder.
func FuzzCall(f *testing.F) {
	f.Add([]byte(`{"id":1,"op":"interrupt","args":{"attempt":2}}`))
	f.Add([]byte(`{"op":"mark-read","args":[{"cell":1,"reader":"a","at":5}]}`))
	f.Add([]byte(`{"op":"answer","args":{"text":"x","echo":"q? x\n"}}`))
	f.Add([]byte(`{"op":"nope"}`))
	f.Add([]byte(`{"op":"set-limit","args":"not an object"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c callMsg
		if json.Unmarshal(b, &c) != nil {
			return
		}
		o, ok := ops[c.Op]
		if !ok {
			return
		}
		if _, err := o.run(&recorder{}, c.Args); err != nil && codeOf(err) != CodeBadArgs {
			t.Errorf("%s: %v, want it run or refused as bad-args", c.Op, err)
		}
	})
}
