package driver_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/driver"
	_ "github.com/polyrepl/polyrepl/internal/driver/all"
)

// Every runtime's facts cross the wire whole: JSON and back, then held to
// the facts' bounds, they are what the driver says.
func TestFactsTravelWhole(t *testing.T) {
	all := driver.All()
	if len(all) < 10 {
		t.Fatalf("only %d drivers registered", len(all))
	}
	for _, d := range all {
		i := d.Info()
		b, err := json.Marshal(i)
		if err != nil {
			t.Fatal(err)
		}
		var back driver.Info
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if got := back.Bounded(); !reflect.DeepEqual(got, i) {
			t.Errorf("%s: after the wire and the bounds\n%+v\nwant\n%+v", i.Name, got, i)
		}
	}
}

// Facts from a holder of another build are held to the bounds, the cut
// said; an extension that is not one is a transcript of text.
func TestFactsBounded(t *testing.T) {
	long := strings.Repeat("é", 3000)
	many := make([]string, 1000)
	for k := range many {
		many[k] = "exe"
	}
	for _, tc := range []struct {
		name string
		in   driver.Info
		ok   func(driver.Info) bool
	}{
		{"long exit", driver.Info{Exit: long}, func(i driver.Info) bool {
			return strings.HasPrefix(i.Exit, strings.Repeat("é", driver.FactLimit)+"… [exit cut: 3,000 characters in all")
		}},
		{"long value format", driver.Info{ValueFormat: long + "{v}"}, func(i driver.Info) bool {
			return utf8.RuneCountInString(i.ValueFormat) < driver.FactLimit+100 && strings.Contains(i.ValueFormat, "value format cut")
		}},
		{"long limits", driver.Info{Limits: long}, func(i driver.Info) bool {
			return strings.HasPrefix(i.Limits, strings.Repeat("é", driver.FactTextLimit)+"… [limits cut")
		}},
		{"long reason it cannot fork", driver.Info{NoFork: long}, func(i driver.Info) bool {
			return strings.HasPrefix(i.NoFork, strings.Repeat("é", driver.FactTextLimit)+"… [why it cannot fork cut")
		}},
		{"invalid UTF-8", driver.Info{ConsoleLines: "c\xffq"}, func(i driver.Info) bool { return i.ConsoleLines == "c\uFFFDq" }},
		{"many executables", driver.Info{Exes: many}, func(i driver.Info) bool {
			return len(i.Exes) == driver.FactItems && i.Exes[0] == "exe" &&
				i.Exes[driver.FactItems-1] == "[executables cut: 1000 in all; showing the first 31]"
		}},
		{"a long executable", driver.Info{Exes: []string{long}}, func(i driver.Info) bool {
			return len(i.Exes) == 1 && strings.Contains(i.Exes[0], "executable cut")
		}},
		{"no lists", driver.Info{}, func(i driver.Info) bool { return i.Exes == nil && i.VersionArgs == nil }},
		{"ext", driver.Info{Ext: ".f90"}, func(i driver.Info) bool { return i.Ext == ".f90" }},
		{"ext a path", driver.Info{Ext: "/../../x"}, func(i driver.Info) bool { return i.Ext == ".txt" }},
		{"ext with a slash", driver.Info{Ext: ".a/b"}, func(i driver.Info) bool { return i.Ext == ".txt" }},
		{"ext without a dot", driver.Info{Ext: "py"}, func(i driver.Info) bool { return i.Ext == ".txt" }},
		{"ext a dot", driver.Info{Ext: "."}, func(i driver.Info) bool { return i.Ext == ".txt" }},
		{"ext long", driver.Info{Ext: "." + strings.Repeat("a", 17)}, func(i driver.Info) bool { return i.Ext == ".txt" }},
		{"no ext", driver.Info{}, func(i driver.Info) bool { return i.Ext == ".txt" }},
	} {
		if got := tc.in.Bounded(); !tc.ok(got) {
			t.Errorf("%s: %.300q", tc.name, fmt.Sprintf("%+v", got))
		}
	}
}

// A runtime this binary has a driver for has its driver's facts; any
// other, neutral ones under its name.
func TestFacts(t *testing.T) {
	d, err := driver.Lookup("r")
	if err != nil {
		t.Fatal(err)
	}
	if got := driver.Facts("r"); !reflect.DeepEqual(got, d.Info()) {
		t.Errorf("r's facts: %+v", got)
	}
	if got := driver.Facts("cobol"); !reflect.DeepEqual(got, driver.Info{Name: "cobol", Family: "worker", Ext: ".txt"}) {
		t.Errorf("cobol's facts: %+v", got)
	}
}
