package main

import (
	"fmt"
	"strings"
)

// peerCell is one cell of the peers' task: statements, then an
// expression whose value is the answer. A REPL is sent both (it shows
// the value); a fresh process per call prints the expression instead.
// No cell holds a compound statement: python3 -i ends one only at a
// blank line, so a block followed by more code fails there.
type peerCell struct {
	what string // a few words for the table
	body string
	expr string
}

// repl is the cell as a session or a REPL takes it.
func (c peerCell) repl() string { return joinLines(c.body, c.expr) }

// script is the cell as a fresh process runs it.
func (c peerCell) script() string {
	if c.expr == "" {
		return c.body
	}
	return joinLines(c.body, "print("+c.expr+")")
}

func joinLines(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

// peerCells is the task in one of its two forms (pandas, or plain lists
// where the bench's python has no pandas): the same for every server.
type peerCells struct {
	build     peerCell
	questions []peerCell
	mistake   peerCell
	fix       peerCell
	plot      string // draws the figure; each server's route shows or saves it
	long      peerCell
}

var peerCellsPandas = peerCells{
	build: peerCell{what: "build 200,000 rows (a DataFrame)", body: strings.Join([]string{
		"import numpy as np",
		"import pandas as pd",
		"rng = np.random.default_rng(40)",
		"n = 200_000",
		"regions = np.array(['north', 'south', 'east', 'west', 'central'])",
		"products = np.array(['widget', 'gadget', 'gizmo', 'sprocket', 'flange', 'doohickey'])",
		"df = pd.DataFrame({'day': rng.integers(0, 365, n), 'region': regions[rng.integers(0, 5, n)], 'product': products[rng.integers(0, 6, n)], 'qty': rng.integers(1, 10, n), 'amount': rng.integers(500, 50000, n) / 100})",
	}, "\n"), expr: "len(df)"},
	questions: []peerCell{
		{what: "total revenue", expr: "round(df.amount.sum(), 2)"},
		{what: "revenue by region", expr: "df.groupby('region').amount.sum().round(2).to_dict()"},
		{what: "best-selling product", expr: "df.groupby('product').qty.sum().idxmax()"},
		{what: "median order", expr: "round(df.amount.median(), 2)"},
		{what: "orders over 400", expr: "int((df.amount > 400).sum())"},
		{what: "busiest day", expr: "int(df.day.value_counts().idxmax())"},
	},
	mistake: peerCell{what: "a mistake: a misspelt column (KeyError)", expr: "df.groupby('regoin').amount.mean().round(2).to_dict()"},
	fix:     peerCell{what: "its fix", expr: "df.groupby('region').amount.mean().round(2).to_dict()"},
	plot:    "import matplotlib\nmatplotlib.use('agg')\nimport matplotlib.pyplot as plt\nax = df.groupby('day').amount.sum().plot(figsize=(6.4, 4.8), title='revenue by day')",
	long:    peerCell{what: "a cell of 5 s", body: "import time\nprint('working...')\ntime.sleep(5)\nprint('done', len(df))"},
}

var peerCellsLists = peerCells{
	build: peerCell{what: "build 200,000 rows (a list of tuples)", body: strings.Join([]string{
		"import random",
		"from collections import Counter",
		"random.seed(40)",
		"n = 200_000",
		"regions = ['north', 'south', 'east', 'west', 'central']",
		"products = ['widget', 'gadget', 'gizmo', 'sprocket', 'flange', 'doohickey']",
		"rows = [(random.randrange(365), random.choice(regions), random.choice(products), random.randint(1, 9), random.randrange(500, 50000) / 100) for _ in range(n)]",
	}, "\n"), expr: "len(rows)"},
	questions: []peerCell{
		{what: "total revenue", expr: "round(sum(r[4] for r in rows), 2)"},
		{what: "revenue by region", expr: "{g: round(sum(r[4] for r in rows if r[1] == g), 2) for g in regions}"},
		{what: "best-selling product", expr: "max(products, key=lambda p: sum(r[3] for r in rows if r[2] == p))"},
		{what: "median order", expr: "round(sorted(r[4] for r in rows)[n // 2], 2)"},
		{what: "orders over 400", expr: "sum(1 for r in rows if r[4] > 400)"},
		{what: "busiest day", expr: "Counter(r[0] for r in rows).most_common(1)[0][0]"},
	},
	mistake: peerCell{what: "a mistake: a tuple indexed by name (TypeError)", expr: "round(sum(r['amount'] for r in rows), 2)"},
	fix:     peerCell{what: "its fix", expr: "{g: round(sum(r[4] for r in rows if r[1] == g) / sum(1 for r in rows if r[1] == g), 2) for g in regions}"},
	plot:    "import matplotlib\nmatplotlib.use('agg')\nimport matplotlib.pyplot as plt\ndaily = sorted(Counter(r[0] for r in rows).items())\nfig = plt.figure(figsize=(6.4, 4.8))\nlines = plt.plot([d for d, _ in daily], [c for _, c in daily])",
	long:    peerCell{what: "a cell of 5 s", body: "import time\nprint('working...')\ntime.sleep(5)\nprint('done', len(rows))"},
}

// peerPhases are the task's phases in order, with what each is.
func peerPhases(cells peerCells) [][2]string {
	ph := [][2]string{{"build", cells.build.what}}
	for i, q := range cells.questions {
		ph = append(ph, [2]string{fmt.Sprintf("q%d", i+1), q.what})
	}
	return append(ph,
		[2]string{"mistake", cells.mistake.what},
		[2]string{"fix", cells.fix.what},
		[2]string{"plot", "a plot of revenue by day"},
		[2]string{"long", fmt.Sprintf("a cell of %d s, the client's patience %s: come back for it", peerLongCellSecs, peerPatience)},
		[2]string{"interrupt", "interrupt a `time.sleep(60)`, then ask `n`: the data is still there"})
}

// peerCommon are the phases every server does: the targets compare them.
func peerCommon(phase string) bool {
	switch phase {
	case "plot", "long", "interrupt":
		return false
	}
	return true
}

// peerQuestion says if a phase is one of the six questions.
func peerQuestion(phase string) bool {
	return len(phase) == 2 && phase[0] == 'q'
}

// peerAnswers runs the build and every question in one fresh python, for
// what each reply must hold.
func peerAnswers(w *world, python string, cells peerCells) (map[string]string, error) {
	var b strings.Builder
	b.WriteString(cells.build.body + "\n")
	ask := func(phase, expr string) {
		fmt.Fprintf(&b, "print('@@%s')\nprint(%s)\n", phase, expr)
	}
	ask("build", cells.build.expr)
	for i, q := range cells.questions {
		ask(fmt.Sprintf("q%d", i+1), q.expr)
	}
	ask("fix", cells.fix.expr)
	cmd := w.command(python, "-c", b.String())
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("the task's answers in a fresh %s: %v", python, err)
	}
	want := map[string]string{}
	for _, part := range strings.Split(string(out), "@@")[1:] {
		phase, ans, _ := strings.Cut(part, "\n")
		want[phase] = strings.TrimSpace(ans)
	}
	return want, nil
}
