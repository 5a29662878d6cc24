package cli

import "testing"

// `history NAME#12` shows entry 12, as `history NAME 12` does: the listing
// prints ids in that form, and people paste them.
func TestEntryArgs(t *testing.T) {
	for _, tc := range []struct {
		pos      []string
		name, id string
	}{
		{[]string{"etl"}, "etl", ""},
		{[]string{"etl", "12"}, "etl", "12"},
		{[]string{"etl", "etl#12"}, "etl", "etl#12"},
		{[]string{"etl#12"}, "etl", "etl#12"},
	} {
		name, id := entryArgs(tc.pos)
		if name != tc.name || id != tc.id {
			t.Errorf("entryArgs(%q) = %q, %q; want %q, %q", tc.pos, name, id, tc.name, tc.id)
		}
	}
}
