package julia

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
	"github.com/polyrepl/polyrepl/internal/driver/worker"
)

// The worker the binary carries speaks the look's part of the worker
// protocol (internal/driver/worker/vars.go) — the "vars NBYTES NONCE"
// command, its "vars" event with nonce, vars, total or error, a cell's
// "done" with vars and vars_total, and every field of api.Var — and the
// looks are inside the module, before the line that runs main. (Julia is
// not installed where polyrepl is tested: this is what can be checked
// without one.)
func TestWorkerSource(t *testing.T) {
	src := string(source())
	for _, want := range []string{
		`length(f) == 3 && f[1] == "vars"`, // the command: vars NBYTES NONCE
		`read(CMDS, parse(Int, f[2]))`,     // its NBYTES of JSON
		`"op" => "\"vars\""`, `"nonce" => jsonstr(String(f[3]))`,
		`"vars" => "["`, `"total" => string(total)`, `"error" => jsonstr(`,
		`"vars_total" => string(length(ns))`, `append!(fields, Base.invokelatest(celllook))`,
		`\"path\"`, `\"all\"`, `"limit"`, `"preview"`, `"timeout"`, // the command's arguments
	} {
		if !strings.Contains(src, want) {
			t.Errorf("the worker lacks %s", want)
		}
	}
	typ := reflect.TypeOf(api.Var{})
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if !strings.Contains(src, `"\"`+name+`\":`) {
			t.Errorf("a look's line never says %s", name)
		}
	}
	end := strings.LastIndex(src, moduleEnd)
	if i := strings.Index(src, "function look("); i < 0 || i > end || !strings.HasSuffix(strings.TrimSpace(src), "PolyreplWorker.main()") {
		t.Errorf("the looks are not inside the module (look at %d, module end at %d)", i, end)
	}
	if !bytes.HasPrefix([]byte(src), serve[:100]) {
		t.Error("the worker does not start as worker.jl does")
	}
}

// On a machine with Julia (1.9 or newer), a look lists the session's own
// globals — not the modules it loaded or the worker's — with their type,
// size and a preview from structure, goes into a path, says a path naming
// nothing in Julia's words, calls an unknown type's show only between
// cells (its error or time in note), and changes no name (ans stays).
// Where polyrepl is tested there is no Julia: this test skips, and has
// never run.
func TestVars(t *testing.T) {
	exe := drivertest.Exe(t, "POLYREPL_TEST_JULIA", "julia", "Julia 1.9 or newer (juliaup; not in Debian)")
	p, rec := drivertest.StartExe(t, worker.Driver{R: Runtime}, exe)
	r := drivertest.Run(t, p, rec, 1, `using Dates
v = [1, 2, 3]; m = zeros(2, 3); cfg = Dict("db" => Dict(:host => "h", :port => 5432)); s = "hello"
add(a, b = 2) = a + b
struct Point; x::Int; y::Int; end
pt = Point(1, 2)
struct Boom; a::Int; end; Base.show(io::IO, ::Boom) = error("no show"); boom = Boom(1)
struct Slow; end; Base.show(io::IO, ::Slow) = (sleep(5); print(io, "slept")); slow = Slow()
nothing`)
	if r.Status != "done" || r.Vars == nil {
		t.Fatalf("%+v %+v", r, r.Error)
	}
	want := "Boom:DataType: Point:DataType: Slow:DataType: add:function:2 methods boom:Boom: cfg:Dict{String, Dict{Symbol, Any}}:1 key " +
		"m:Matrix{Float64}:2×3 pt:Point: s:String:5 characters slow:Slow: v:Vector{Int64}:3 items"
	if got := drivertest.VarLines(r.Vars.Vars); got != want {
		t.Errorf("the cell's look:\n%s\nwant\n%s", got, want)
	}
	for _, v := range r.Vars.Vars {
		if v.Note != "" {
			t.Errorf("the cell's look called show: %+v", v)
		}
	}
	in := p.(driver.Inspector)
	start := time.Now()
	look, err := in.Vars(driver.VarsQuery{}, 20*time.Second)
	if err != nil || drivertest.VarLines(look.Vars) != want {
		t.Fatalf("look: %s (%d), %v", drivertest.VarLines(look.Vars), look.Total, err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("the look took %s: the slow show was not cut", d)
	}
	got := map[string]api.Var{}
	for _, v := range look.Vars {
		got[v.Name] = v
	}
	for _, tc := range []struct{ name, preview, note string }{
		{"v", "[1, 2, 3]", ""},
		{"s", `"hello"`, ""},
		{"pt", "x=1, y=2", ""},
		{"Point", "struct Point: x::Int64, y::Int64", ""},
		{"add", "add(a, b)", ""},
		{"boom", "a=1", "show raised ErrorException: no show"},
		{"slow", "", "show took over 0.2 s"},
	} {
		if v := got[tc.name]; v.Preview != tc.preview || v.Note != tc.note {
			t.Errorf("%s: %+v, want %+v", tc.name, v, tc)
		}
	}
	for path, want := range map[string]string{
		"cfg":              `"db":Dict{Symbol, Any}:2 keys`,
		`cfg["db"]`:        "",
		"pt":               "x:Int64: y:Int64:",
		"v":                "[1]:Int64: [2]:Int64: [3]:Int64:",
		`cfg["db"][:port]`: "-",
	} {
		look, err := in.Vars(driver.VarsQuery{Path: path}, 20*time.Second)
		switch want {
		case "": // the keys of a Dict are in its hash order
			if err != nil || look.Total != 2 {
				t.Errorf("%s: %+v, %v", path, look, err)
			}
		case "-":
			if err == nil || !strings.Contains(err.Error(), "no fields") {
				t.Errorf("%s: %v, want no members", path, err)
			}
		default:
			if err != nil || drivertest.VarLines(look.Vars) != want {
				t.Errorf("%s: %q, %v; want %q", path, drivertest.VarLines(look.Vars), err, want)
			}
		}
	}
	for path, want := range map[string]string{
		"nope":      "UndefVarError: `nope` not defined",
		`cfg["zz"]`: `KeyError: key "zz" not found`,
		"v[9]":      "BoundsError: attempt to access 3-element Vector{Int64} at index [9]",
		"pt.z":      "type Point has no field z",
		"v.first()": `cannot read the path "v.first()"`,
	} {
		if _, err := in.Vars(driver.VarsQuery{Path: path}, 20*time.Second); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	all, err := in.Vars(driver.VarsQuery{All: true}, 20*time.Second)
	if err != nil || all.Total <= look.Total {
		t.Errorf("all: %d of %d, %v", len(all.Vars), all.Total, err)
	}
	if out := rec.TakeOutput(); strings.Contains(out, "slept") {
		t.Errorf("a look printed %q", out)
	}
	if r := drivertest.Run(t, p, rec, 2, "ans"); r.Status != "done" || r.Value != "" {
		t.Errorf("after the looks ans is %q (%s): a look changed it", r.Value, r.Status)
	}
}
