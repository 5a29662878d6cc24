package bound

import (
	"fmt"
	"strings"
	"testing"
)

// TestRecut: a text cut once and cut again shows one marker, counting
// from the whole (issue 35 item 6: an output of 148,890 characters held
// to 30,000 and then to 8,000 said "22,037 characters cut").
func TestRecut(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "row %d %s\n", i, strings.Repeat("x", 40))
	}
	whole := b.String()
	total := len(whole)
	for _, first := range []int{30000, 9000, 1000} {
		once, c1 := HeadTailLines(whole, first)
		c1.File = "/f.txt"
		for _, limit := range []int{8000, 1000, 50, first + 10} {
			twice, c2 := Recut(once, c1, limit)
			if c2.Total != total || c2.File != "/f.txt" {
				t.Errorf("%d then %d: cut %+v, want total %d and the file", first, limit, c2, total)
			}
			if n := strings.Count(twice, "cut …]"); n != 1 {
				t.Errorf("%d then %d: %d markers, want 1:\n%.300s", first, limit, n, twice)
			}
			if want := Marker(c2.Total - c2.Head - c2.Tail); !strings.Contains(twice, want) {
				t.Errorf("%d then %d: the marker is not %q:\n%.300s", first, limit, want, twice)
			}
			if got := runeCount(twice) - runeCount(Marker(c2.Total-c2.Head-c2.Tail)); got > limit+1 {
				t.Errorf("%d then %d: %d characters kept", first, limit, got)
			}
			if !strings.HasPrefix(whole, strings.SplitN(twice, "\n[…", 2)[0]) || !strings.HasSuffix(whole, strings.SplitN(twice, "cut …]\n", 2)[1]) {
				t.Errorf("%d then %d: head or tail not the whole's:\n%.300s", first, limit, twice)
			}
		}
	}
	if s, c := Recut("abc", nil, 10); s != "abc" || c != nil {
		t.Errorf("a whole short text: %q %v", s, c)
	}
	part := strings.Repeat("y", 100)
	s, c := Recut(part, &Cut{Total: 5000, Head: 100, File: "/g"}, 40)
	if c.Total != 5000 || !strings.Contains(s, Marker(5000-c.Head-c.Tail)) {
		t.Errorf("a part without a marker: %q %+v", s, c)
	}
}
