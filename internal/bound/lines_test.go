package bound

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestHeadTailLinesCutsAtLineEnds: 6,000 short lines cut to 30,000
// characters show whole lines on both sides of the marker, as a person
// reading `exec`'s reply would check.
func TestHeadTailLinesCutsAtLineEnds(t *testing.T) {
	var b strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	out, cut := HeadTailLines(b.String(), 30000)
	if cut == nil {
		t.Fatal("no cut")
	}
	m := Marker(cut.Total - cut.Head - cut.Tail)
	i := strings.Index(out, m)
	if i < 0 {
		t.Fatalf("no marker %q in the output", m)
	}
	head, tail := out[:i], out[i+len(m):]
	if last := head[strings.LastIndexByte(head, '\n')+1:]; !strings.HasPrefix(last, "line ") || !strings.Contains(b.String(), "\n"+last+"\n") {
		t.Errorf("the head ends in %q, not a whole line", last)
	}
	if first, _, _ := strings.Cut(tail, "\n"); !strings.Contains(b.String(), "\n"+first+"\n") || !strings.HasPrefix(first, "line ") {
		t.Errorf("the tail starts with %q, not a whole line", first)
	}
	if strings.Contains(out, "\n\n") {
		t.Error("a blank line around the marker")
	}
}

// TestHeadTailLinesLongLines: a text of one huge line is still cut at its
// bound, not at a line end far away.
func TestHeadTailLinesLongLines(t *testing.T) {
	s := "short\n" + strings.Repeat("x", 1000) + "\nend"
	out, cut := HeadTailLines(s, 100)
	if cut == nil || cut.Head != 50 || cut.Tail != 50 {
		t.Fatalf("cut %+v, want the head and tail at the bound (50 each): %q", cut, out)
	}
}

func FuzzHeadTailLines(f *testing.F) {
	f.Add("a\nb\nc\nd\ne\nf\n", uint16(5))
	f.Add("héllo\nwörld\n中文\n😀🎉\n", uint16(6))
	f.Add("\n\n\n\n\n\n", uint16(2))
	f.Add("a\xff\n\xfeb\x80\n\x80c\xe4\xb8", uint16(3))
	f.Fuzz(func(t *testing.T, s string, l uint16) {
		limit := int(l % 512)
		out, cut := HeadTailLines(s, limit)
		v := strings.ToValidUTF8(s, replacement)
		if !utf8.ValidString(out) {
			t.Fatalf("output not valid UTF-8: %q", out)
		}
		if cut == nil {
			if utf8.RuneCountInString(v) > limit || out != v {
				t.Fatalf("no cut for %q with limit %d, out %q", v, limit, out)
			}
			return
		}
		checkBounded(t, out, cut, limit)
		if cut.Total != utf8.RuneCountInString(v) {
			t.Fatalf("cut %+v of %d characters", cut, utf8.RuneCountInString(v))
		}
		head := v[:runeOffset(v, cut.Head)]
		m := Marker(cut.Total - cut.Head - cut.Tail)
		if want := strings.TrimSuffix(head, "\n") + m + v[lastRunesOffset(v, cut.Tail):]; out != want {
			t.Fatalf("out %q, want head+marker+tail %q", out, want)
		}
	})
}
