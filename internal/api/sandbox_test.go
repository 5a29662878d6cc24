package api

import (
	"strings"
	"testing"
)

// An Enforced from a holder of another build is held to its bounds,
// the cut said; a small one is left as it is.
func TestEnforcedBounded(t *testing.T) {
	if (*Enforced)(nil).Bounded() != nil {
		t.Error("nil became something")
	}
	small := &Enforced{Mechanism: "landlock", ABI: 7, Parts: []EnforcedPart{{Part: PartWrite, Enforced: true}}}
	if got := small.Bounded(); got.Mechanism != "landlock" || len(got.Parts) != 1 || got.Parts[0] != small.Parts[0] {
		t.Errorf("a small report changed: %+v", got)
	}
	big := &Enforced{Mechanism: strings.Repeat("m", 10_000)}
	for range 1000 {
		big.Parts = append(big.Parts, EnforcedPart{Part: strings.Repeat("p", 5000), Why: strings.Repeat("w", 5000)})
	}
	got := big.Bounded()
	if len(got.Parts) != EnforcedParts || len([]rune(got.Mechanism)) > EnforcedText+100 {
		t.Fatalf("%d parts, mechanism of %d", len(got.Parts), len(got.Mechanism))
	}
	for _, p := range got.Parts {
		if len(p.Part) > 4*(EnforcedText+100) || len(p.Why) > 4*(EnforcedText+200) {
			t.Errorf("a part of %d and %d bytes", len(p.Part), len(p.Why))
		}
	}
	if last := got.Parts[EnforcedParts-1].Why; !strings.HasSuffix(last, "[… 968 more parts left out]") {
		t.Errorf("the cut is not said: …%s", last[max(0, len(last)-60):])
	}
	if len(big.Parts) != 1000 || len(big.Parts[0].Why) != 5000 {
		t.Error("the report given was changed in place")
	}
}
