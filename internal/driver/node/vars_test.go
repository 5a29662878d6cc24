package node

import (
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
)

// A look lists the names cells defined (var, function, let/const/class),
// each from its structure — type, size, first items or keys, a function's
// head — goes into what a path names (a.b, a[0], a["k"], a Map's key)
// without evaluating it, and runs no user code: a getter is listed as a
// getter, a Proxy's traps and an object's own toString are never called;
// nothing prints, no name changes, and the cell's result carries the same
// look.
func TestVars(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, `const arr = [1, 'two', {a: 1}, [3]]; let m = new Map([['k', 1], ['j', {x: 2}]]); var s = 'hello';
const cfg = {db: {host: 'h', port: 5432}, list: [1,2]}; function add(a, b) { return a + b }; class P { constructor() { this.name = 'p' } }
const pp = new P(); const buf = Buffer.from('abc'); const set = new Set([1,2]); const d = new Date(0);
const evil = { get boom() { console.log('RAN'); throw new Error('no') }, toString() { console.log('RAN'); throw new Error('no') } };
const px = new Proxy({}, { ownKeys() { console.log('RAN'); return [] }, getPrototypeOf() { console.log('RAN'); return null } });
Object.defineProperty(globalThis, 'trap', { get() { console.log('RAN'); return 1 }, enumerable: true, configurable: true });`)
	if r.Status != "done" || r.Vars == nil {
		t.Fatalf("%+v %+v", r, r.Error)
	}
	want := "P:class: add:function: arr:Array:4 items buf:Buffer:3 bytes cfg:Object:2 keys d:Date: evil:Object:2 keys " +
		"m:Map:2 keys pp:P:1 key px:Proxy: s:string:5 characters set:Set:2 items trap:getter:"
	if got := drivertest.VarLines(r.Vars.Vars); got != want {
		t.Errorf("the cell's look:\n%s\nwant\n%s", got, want)
	}
	if strings.Join(r.Names, " ") != "P add arr buf cfg d evil m pp px s set trap" {
		t.Errorf("names %v", r.Names)
	}
	// A cell that replaces util.types' functions, and an object whose
	// prototype is a Proxy: a look runs neither.
	hostile := drivertest.Run(t, p, rec, 2, `require('util').types.isMap = () => { console.log('RAN'); return false };
const under = Object.create(new Proxy({}, { getOwnPropertyDescriptor() { console.log('RAN') }, get() { console.log('RAN') } }));
under.k = 1`)
	if hostile.Status != "done" {
		t.Fatalf("%+v", hostile)
	}
	keys := "Object.getOwnPropertyNames(globalThis).length"
	before := drivertest.Run(t, p, rec, 3, keys).Value
	in := p.(driver.Inspector)
	look, err := in.Vars(driver.VarsQuery{}, 20*time.Second)
	want = strings.Replace(want, " trap:getter:", " trap:getter: under:Object:1 key", 1)
	if err != nil || drivertest.VarLines(look.Vars) != want || look.Total != 14 {
		t.Errorf("look: %s (%d), %v", drivertest.VarLines(look.Vars), look.Total, err)
	}
	previews := map[string]string{}
	for _, v := range look.Vars {
		previews[v.Name] = v.Preview
	}
	for name, want := range map[string]string{
		"arr": `[1, "two", Object, Array(1)]`, "add": "function add(a, b)", "P": "class P",
		"cfg": "{db: Object, list: Array(2)}", "m": `"k" => 1, "j" => Object`, "buf": "97, 98, 99",
		"d": "1970-01-01T00:00:00.000Z", "evil": "{boom: [Getter], toString: [Function toString]}",
		"s": `"hello"`, "pp": `{name: "p"}`,
	} {
		if previews[name] != want {
			t.Errorf("%s: preview %q, want %q", name, previews[name], want)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{"arr", "[0]:number: [1]:string:3 characters [2]:Object:1 key [3]:Array:1 item"},
		{"arr[2]", "a:number:"},
		{"cfg.db", "host:string:1 character port:number:"},
		{`cfg["db"]`, "host:string:1 character port:number:"},
		{"m", "k:number: j:Object:1 key"},
		{`m["j"]`, "x:number:"},
		{"evil", "boom:getter: toString:function:"},
		{"set", "[0]:number: [1]:number:"},
	} {
		look, err := in.Vars(driver.VarsQuery{Path: tc.path}, 20*time.Second)
		if err != nil || drivertest.VarLines(look.Vars) != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.path, drivertest.VarLines(look.Vars), err, tc.want)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{"nope", "nope is not defined"},
		{"cfg.zz", `cfg has no property "zz"`},
		{"evil.boom", "evil.boom is an accessor (a getter): a look does not call it"},
		{"px", "px is a Proxy: a look does not run its traps"},
		{"trap", "trap is an accessor"},
		{"cfg.db()", `cannot read the path "cfg.db()"`},
		{"s", "s is a string: it has no members"},
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
	if after := drivertest.Run(t, p, rec, 4, keys).Value; after != before {
		t.Errorf("the globals were %s before the looks, %s after", before, after)
	}
}
