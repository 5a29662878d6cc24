package ruby

import (
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
)

// A look lists the session's names — locals, main's @ivars, the globals,
// constants and methods its cells made — from their structure, with
// Ruby's own methods bound (a class's own size or each is not asked);
// goes into what a path names (x[0], h["k"], h[:k], obj.@ivar) without
// evaluating it; calls an unknown class's inspect only in a look between
// cells, within 0.2 s and with its output caught (its error or time in
// note); prints nothing, assigns nothing; the cell's result carries the
// same look, with no inspect.
func TestVars(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, `arr = [1, "two", {a: 1}, [3]]; h = {"k" => 1, j: {x: 2}}; s = "hello"
Pt = Struct.new(:x, :y); pt = Pt.new(1, 2); def add(a, b = 2) a + b end; @count = 3; $flag = true
class Boom; def initialize; @a = 1; end; def inspect; raise "no inspect"; end; end; boom = Boom.new
class Slow; def inspect; sleep 5; "slept"; end; end; slow = Slow.new
class Talk; def inspect; puts "RAN"; "talk"; end; end; talk = Talk.new
class Big < Array; def size; raise "no size"; end; end; big = Big.new([1, 2])`)
	if r.Status != "done" || r.Vars == nil {
		t.Fatalf("%+v %+v", r, r.Error)
	}
	want := "$flag:TrueClass: @count:Integer: Big:Class: Boom:Class: Pt:Class: Slow:Class: Talk:Class: add:method: " +
		"arr:Array:4 items big:Big:2 items boom:Boom: h:Hash:2 keys pt:Pt:2 members s:String:5 characters slow:Slow: talk:Talk:"
	if got := drivertest.VarLines(r.Vars.Vars); got != want {
		t.Errorf("the cell's look:\n%s\nwant\n%s", got, want)
	}
	for _, v := range r.Vars.Vars {
		if v.Note != "" {
			t.Errorf("the cell's look called inspect: %+v", v)
		}
	}
	if len(r.Names) != 16 || r.Names[0] != "$flag" {
		t.Errorf("names %v", r.Names)
	}
	in := p.(driver.Inspector)
	start := time.Now()
	look, err := in.Vars(driver.VarsQuery{}, 20*time.Second)
	if err != nil || drivertest.VarLines(look.Vars) != want || look.Total != 16 {
		t.Fatalf("look: %s (%d), %v", drivertest.VarLines(look.Vars), look.Total, err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("the look took %s: the slow inspect was not cut", d)
	}
	got := map[string]api.Var{}
	for _, v := range look.Vars {
		got[v.Name] = v
	}
	for _, tc := range []struct{ name, preview, note string }{
		{"arr", `[1, "two", {1 key}, [1 item]]`, ""},
		{"h", `{"k" => 1, :j => {1 key}}`, ""},
		{"pt", "x: 1, y: 2", ""},
		{"add", "def add(a, b = …)", ""},
		{"s", `"hello"`, ""},
		{"boom", "@a=1", "inspect raised RuntimeError: no inspect"},
		{"slow", "", "inspect took over 0.2 s"},
		{"talk", "talk", ""},
	} {
		if v := got[tc.name]; v.Preview != tc.preview || v.Note != tc.note {
			t.Errorf("%s: %+v, want %+v", tc.name, v, tc)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{"arr", "[0]:Integer: [1]:String:3 characters [2]:Hash:1 key [3]:Array:1 item"},
		{"arr[2]", ":a:Integer:"},
		{"h", `"k":Integer: :j:Hash:1 key`},
		{"h[:j]", ":x:Integer:"},
		{"pt", ":x:Integer: :y:Integer:"},
		{"boom", "@a:Integer:"},
		{"big", "[0]:Integer: [1]:Integer:"},
	} {
		look, err := in.Vars(driver.VarsQuery{Path: tc.path}, 20*time.Second)
		if err != nil || drivertest.VarLines(look.Vars) != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.path, drivertest.VarLines(look.Vars), err, tc.want)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{"nope", "undefined local variable or method `nope' for main:Object"},
		{"h[:zz]", "key not found in h: :zz"},
		{"arr[9]", "index 9 outside of arr (4 items)"},
		{"arr.first()", `cannot read the path "arr.first()"`},
		{"boom.@zz", "boom has no instance variable @zz"},
		{`h["k"]`, `h["k"] is of class Integer, with no instance variables: it has no members`},
	} {
		_, err := in.Vars(driver.VarsQuery{Path: tc.path}, 20*time.Second)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
	}
	all, err := in.Vars(driver.VarsQuery{All: true}, 20*time.Second)
	if err != nil || all.Total <= look.Total+50 || len(all.Vars) != api.VarsLimit {
		t.Errorf("all: %d lines of %d, %v", len(all.Vars), all.Total, err)
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("a look printed %q", out)
	}
	// The 8 locals and _ (the cell's value, as in irb), and main's @count.
	r = drivertest.Run(t, p, rec, 2, "[local_variables.size, instance_variables]")
	if r.Value != `[9, [:@count]]` {
		t.Errorf("after the looks: %+v", r)
	}
}

// The inspects of one look take at most about a second in all: past
// that, the objects left get no inspect, and their note says why.
func TestVarsBudget(t *testing.T) {
	p, rec := start(t)
	drivertest.Run(t, p, rec, 1, `class Slow; def inspect; sleep 5; end; end
s01, s02, s03, s04, s05, s06, s07, s08, s09, s10, s11, s12 = Array.new(12) { Slow.new }; nil`)
	start := time.Now()
	look, err := p.(driver.Inspector).Vars(driver.VarsQuery{}, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("the look took %s", d)
	}
	took, out := 0, 0
	for _, v := range look.Vars {
		switch {
		case v.Note == "inspect took over 0.2 s":
			took++
		case strings.HasPrefix(v.Note, "the look's time for previews (1.0 s) ran out"):
			out++
		}
	}
	if took < 3 || took > 6 || took+out != 12 {
		t.Errorf("%d inspects cut at 0.2 s, %d left without: %+v", took, out, look.Vars)
	}
}

// A path's keys may hold what JSON escapes (<, ", é): the worker reads
// them back whole.
func TestVarsPathEscapes(t *testing.T) {
	p, rec := start(t)
	drivertest.Run(t, p, rec, 1, `z = {"a<b" => {q: 1}, 'say "hi"' => {r: 2}, "é" => {s: 3}}; nil`)
	for path, want := range map[string]string{`z["a<b"]`: ":q", `z["say \"hi\""]`: ":r", `z['é']`: ":s"} {
		look, err := p.(driver.Inspector).Vars(driver.VarsQuery{Path: path}, 20*time.Second)
		if err != nil || len(look.Vars) != 1 || look.Vars[0].Name != want {
			t.Errorf("%s: %+v, %v; want %s", path, look.Vars, err, want)
		}
	}
}
