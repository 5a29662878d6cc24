package bash

import (
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
)

// varLines is a look's lines as "name:type:size:preview", one a line.
func varLines(vars []api.Var) string {
	var out []string
	for _, v := range vars {
		out = append(out, v.Name+":"+v.Type+":"+v.Size+":"+v.Preview)
	}
	return strings.Join(out, "\n")
}

// A look lists the variables and functions the session set — not the
// environment it started with, not bash's own, not the worker's — with
// their kind (string, integer, array, associative array, nameref,
// function), size (characters, items, keys, lines) and first items; a
// path names an array, and the look lists its items. Nothing runs: no
// fork, no user code, RANDOM not drawn, BASH_REMATCH untouched, no
// variable of the worker's or of the look's own shows; the cell's result
// carries the same look.
func TestVars(t *testing.T) {
	s := start(t)
	r := s.run(t, `x=hello; declare -i n=42; arr=(one "two three" "" four); declare -A h=([k]=v); f() { echo hi; echo there; }
export E=1; declare -n ref=arr; RANDOM=5; [[ abc =~ (b) ]]; size=7; op=mine; s=mine; k=mine`)
	if r.Status != "done" || r.Vars == nil {
		t.Fatalf("%+v %+v", r, r.Error)
	}
	want := `E:string, exported:1 character:"1"
arr:array:4 items:(one "two three" "" four)
f:function:5 lines:echo hi; …
h:associative array:1 key:([k]=v)
k:string:4 characters:"mine"
n:integer::42
op:string:4 characters:"mine"
ref:nameref::→ arr
s:string:4 characters:"mine"
size:string:1 character:"7"
x:string:5 characters:"hello"`
	if got := varLines(r.Vars.Vars); got != want {
		t.Errorf("the cell's look:\n%s\nwant\n%s", got, want)
	}
	if strings.Join(r.Names, " ") != "E arr f h k n op ref s size x" {
		t.Errorf("names %v", r.Names)
	}
	count := "compgen -v | wc -l"
	before := s.ok(t, count)
	in := s.p.(driver.Inspector)
	look, err := in.Vars(driver.VarsQuery{}, 20*time.Second)
	if err != nil || varLines(look.Vars) != want || look.Total != 11 {
		t.Errorf("look (%d, %v):\n%s", look.Total, err, varLines(look.Vars))
	}
	for _, tc := range []struct{ path, want string }{
		{"arr", "[0]:string:3 characters:\"one\"\n[1]:string:9 characters:\"two three\"\n[2]:string:0 characters:\"\"\n[3]:string:4 characters:\"four\""},
		{"h", "[k]:string:1 character:\"v\""},
	} {
		look, err := in.Vars(driver.VarsQuery{Path: tc.path}, 20*time.Second)
		if err != nil || varLines(look.Vars) != tc.want {
			t.Errorf("%s: %v\n%s\nwant\n%s", tc.path, err, varLines(look.Vars), tc.want)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{"nope", "nope: no such variable"},
		{"x", "x is not an array"},
		{"f", "f is a function"},
		{"ref", "ref is a nameref to arr: look at arr"},
		{"a[0]", "bash: a[0]: not a valid identifier"},
		{"__polyrepl_list", "not a valid identifier"},
	} {
		_, err := in.Vars(driver.VarsQuery{Path: tc.path}, 20*time.Second)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
	}
	all, err := in.Vars(driver.VarsQuery{All: true}, 20*time.Second)
	if err != nil || all.Total <= look.Total+20 {
		t.Errorf("all: %d lines of %d, %v", len(all.Vars), all.Total, err)
	}
	for _, v := range all.Vars {
		if strings.HasPrefix(v.Name, "__polyrepl") {
			t.Errorf("all shows the worker's %s", v.Name)
		}
	}
	if out := s.rec.TakeOutput(); out != "" {
		t.Errorf("a look printed %q", out)
	}
	// RANDOM=5 then one draw gives bash's first number for seed 5, as if
	// no look had happened; BASH_REMATCH is the cell's.
	seeded := s.ok(t, `bash -c 'RANDOM=5; echo $RANDOM'`)
	if got := s.ok(t, `echo $RANDOM; echo "${BASH_REMATCH[1]} $size $op $s $k"`); got != seeded+"b 7 mine mine mine\n" {
		t.Errorf("after the looks: %q (RANDOM seeded 5 draws %q)", got, seeded)
	}
	if after := s.ok(t, count); after != before {
		t.Errorf("%s variables before the looks, %s after", before, after)
	}
}
