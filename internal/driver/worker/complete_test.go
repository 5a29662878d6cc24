package worker

import (
	"reflect"
	"testing"
)

// A completion event is taken only for the completion asked for (its
// nonce); any other, forged or late, is dropped, and no other event is
// taken for one.
func TestCompleted(t *testing.T) {
	p := &process{}
	c := &completing{nonce: "n1", ch: make(chan []string, 1)}
	p.comp = c
	if p.completed([]byte(`{"op":"done","cell":1}`)) {
		t.Errorf("a done event taken for a completion")
	}
	if !p.completed([]byte(`{"op":"complete","nonce":"guess","matches":["FAKE"]}`)) || p.comp != c {
		t.Errorf("a completion of another nonce was taken")
	}
	if !p.completed([]byte(`{"op":"complete","nonce":"n1","matches":["total_count","total_sum"]}`)) {
		t.Errorf("the completion asked for was not taken")
	}
	if got := <-c.ch; !reflect.DeepEqual(got, []string{"total_count", "total_sum"}) || p.comp != nil {
		t.Errorf("the completion: %q", got)
	}
	if !p.completed([]byte(`{"op":"complete","nonce":"n1","matches":["late"]}`)) || len(c.ch) != 0 {
		t.Errorf("a late completion was delivered")
	}
}

// FuzzCompleted: a completion event of any bytes is taken or dropped,
// never a panic, and delivers only to the completion asked for.
func FuzzCompleted(f *testing.F) {
	f.Add([]byte(`{"op":"complete","nonce":"n1","matches":["a","b"]}`))
	f.Add([]byte(`{"op":"complete","nonce":"n1","matches":[1,2]}`))
	f.Add([]byte(`{"op":"complete"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := &process{}
		c := &completing{nonce: "n1", ch: make(chan []string, 1)}
		p.comp = c
		p.completed(b)
		if len(c.ch) == 1 && p.comp != nil {
			t.Errorf("delivered and still waiting")
		}
	})
}
