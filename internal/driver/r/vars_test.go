package r

import (
	"strings"
	"testing"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/driver/drivertest"
)

// find is the line named name, failing without one.
func find(t *testing.T, vars []api.Var, name string) api.Var {
	t.Helper()
	for _, v := range vars {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no line %q in %+v", name, vars)
	return api.Var{}
}

// A look lists the global environment's names from their structure — a
// frame's shape and columns, a vector's first values, a list's items, a
// function's arguments, an S4 object's slots — goes into what a path
// names ($, [[ ]], @) without evaluating it, calls an unknown class's
// print only within its time (its error and its time said in note), runs
// no active binding, prints nothing and changes no name; the cell's
// result carries the same look, without any print.
func TestVars(t *testing.T) {
	p, rec := start(t)
	r := drivertest.Run(t, p, rec, 1, `df <- data.frame(a = 1:150, b = letters[(0:149 %% 26) + 1], f = factor(rep(c("x","y","z"), 50)))
x <- c(1.5, 2, 3); s <- "hello"; l <- list(a = 1, b = "two", c = list(d = 3)); u <- list(1, "a")
f <- function(x, y = 2) x + y; m <- matrix(1:12, 3); .hid <- 1
fit <- lm(a ~ as.numeric(f), df)
boom <- structure(list(), class = "boom"); print.boom <- function(x, ...) stop("no printing")
slow <- structure(list(), class = "slow"); print.slow <- function(x, ...) { Sys.sleep(5); cat("slept\n") }
setClass("P", representation(name = "character", age = "numeric")); pp <- new("P", name = "a", age = 3)
makeActiveBinding("act", function() { cat("RAN\n"); 1 }, globalenv())`)
	if r.Status != "done" || r.Vars == nil {
		t.Fatalf("%+v %+v", r, r.Error)
	}
	if v := find(t, r.Vars.Vars, "boom"); v.Note != "" || v.Preview != "" {
		t.Errorf("the cell's look printed boom: %+v", v)
	}
	if len(r.Names) != r.Vars.Total || r.Names[0] != "act" {
		t.Errorf("names %v, look of %d", r.Names, r.Vars.Total)
	}
	in := p.(driver.Inspector)
	start := time.Now()
	look, err := in.Vars(driver.VarsQuery{}, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the look took %s: the slow print was not cut", d)
	}
	for _, tc := range []struct{ name, typ, size, preview, note string }{
		{"df", "data.frame", "150×3", "a int, b chr, f fct", ""},
		{"x", "numeric", "3 items", "1.5 2.0 3.0", ""},
		{"s", "character", "5 characters", `"hello"`, ""},
		{"l", "list", "3 items", "a: num, b: chr, c: list", ""},
		{"f", "function", "", "function(x, y = 2)", ""},
		{"m", "matrix", "3×4", "integer 1 2 3 4 5 6 7 8 9 10 …", ""},
		{"fit", "lm", "12 items", "lm(formula = a ~ as.numeric(f), data = df)", ""},
		{"pp", "P", "", "", ""},
		{"boom", "boom", "0 items", "", "print raised: no printing"},
		{"slow", "slow", "0 items", "", "print took over 0.2 s"},
		{"act", "active binding", "", "", "an active binding: a look does not run it"},
	} {
		v := find(t, look.Vars, tc.name)
		if v.Type != tc.typ || v.Size != tc.size || tc.preview != "" && v.Preview != tc.preview || v.Note != tc.note {
			t.Errorf("%s: %+v, want %+v", tc.name, v, tc)
		}
	}
	if look.Total != 14 || len(look.Vars) != 14 {
		t.Errorf("total %d, %d lines: %+v", look.Total, len(look.Vars), look.Vars)
	}
	if v := find(t, look.Vars, "df"); !v.Members || v.Memory == 0 {
		t.Errorf("df: %+v", v)
	}
	for _, tc := range []struct{ path, want string }{
		{"df", "a:integer:150 items b:character:150 items f:factor:150 items"},
		{"l$c", "d:numeric:1 item"},
		{`l[["c"]]`, "d:numeric:1 item"},
		{"u", "[[1]]:numeric:1 item [[2]]:character:1 character"},
		{"fit$coefficients", "(Intercept):numeric:1 item as.numeric(f):numeric:1 item"},
		{"pp", "@name:character:1 character @age:numeric:1 item"},
		{"x", "[[1]]:numeric:1 item [[2]]:numeric:1 item [[3]]:numeric:1 item"},
	} {
		look, err := in.Vars(driver.VarsQuery{Path: tc.path}, 20*time.Second)
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		var got []string
		for _, v := range look.Vars {
			got = append(got, v.Name+":"+v.Type+":"+v.Size)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: %q, want %q", tc.path, strings.Join(got, " "), tc.want)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{"dfx", "object 'dfx' not found"},
		{"df$zz", "df has no element 'zz'"},
		{"u[[5]]", "subscript out of bounds: u has 2 items"},
		{"act", "act is an active binding: reading it would run its function"},
		{"df[1, 2]", "cannot read the path 'df[1, 2]'"},
		{"f()", "cannot read the path 'f()'"},
		{"pp@nope", `no slot of name "nope" for this object of class "P"`},
	} {
		_, err := in.Vars(driver.VarsQuery{Path: tc.path}, 20*time.Second)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
	}
	all, err := in.Vars(driver.VarsQuery{All: true}, 20*time.Second)
	if err != nil || all.Total < 1000 || len(all.Vars) != api.VarsLimit {
		t.Errorf("all: %d lines of %d, %v", len(all.Vars), all.Total, err)
	}
	if out := rec.TakeOutput(); out != "" {
		t.Errorf("a look printed %q", out)
	}
	r = drivertest.Run(t, p, rec, 2, "length(ls(all.names = TRUE))")
	if r.Value != "[1] 16" { // the 14, .hid and setClass's .__C__P
		t.Errorf("the names after the looks: %+v", r)
	}
}

// The prints of one look take at most about a second in all: past that,
// the objects left get no print, and their note says why.
func TestVarsBudget(t *testing.T) {
	p, rec := start(t)
	drivertest.Run(t, p, rec, 1, `print.slow <- function(x, ...) Sys.sleep(5)
for (i in 1:12) assign(sprintf("s%02d", i), structure(list(), class = "slow"))`)
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
		case v.Note == "print took over 0.2 s":
			took++
		case strings.HasPrefix(v.Note, "the look's time for previews (1 s) ran out"):
			out++
		}
	}
	if took < 3 || took > 6 || took+out != 12 {
		t.Errorf("%d prints cut at 0.2 s, %d left without: %+v", took, out, look.Vars)
	}
}

// A path's names may hold what JSON escapes (<, ", é): the worker reads
// them back whole.
func TestVarsPathEscapes(t *testing.T) {
	p, rec := start(t)
	drivertest.Run(t, p, rec, 1, `z <- list("a<b" = list(q = 1), 'say "hi"' = list(r = 2), "é" = list(s = 3))`)
	for path, want := range map[string]string{`z[["a<b"]]`: "q", `z[["say \"hi\""]]`: "r", "z$`é`": "s"} {
		look, err := p.(driver.Inspector).Vars(driver.VarsQuery{Path: path}, 20*time.Second)
		if err != nil || len(look.Vars) != 1 || look.Vars[0].Name != want {
			t.Errorf("%s: %+v, %v; want %s", path, look.Vars, err, want)
		}
	}
}
