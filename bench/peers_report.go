package main

import (
	"fmt"
	"math"
	"strings"
)

// peerTotals sums a run's first round: the replies of the phases every
// server does (common), of the whole task, and the questions' times over
// every round.
type peerTotals struct {
	calls        int
	common, all  int // runes, text + structured
	text, sc     int // of all
	images       int
	questions    series
	failedCalls  int
	conversation int // tool list + common
	commonCalls  int
}

func (r *peerRun) totals() peerTotals {
	var t peerTotals
	for _, c := range r.calls {
		if peerQuestion(c.phase) && c.err == "" {
			t.questions = append(t.questions, c.secs)
		}
		if c.round != 0 {
			continue
		}
		t.calls++
		n := c.text + c.sc
		t.all += n
		t.text += c.text
		t.sc += c.sc
		t.images += c.other
		if peerCommon(c.phase) {
			t.common += n
			t.commonCalls++
		}
		if c.err != "" {
			t.failedCalls++
		}
	}
	t.conversation = r.toolList + t.common
	return t
}

// peersMarkdown is the section.
func peersMarkdown(res *peersResult) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## Against the MCP servers a user would install instead (issue 40)\n\n")
	p("One scripted agent task, the same for every server, through the official TypeScript MCP SDK's client over stdio (each server started with the SDK's default environment: HOME, LOGNAME, PATH, SHELL, TERM, USER, plus what the row says): ")
	p("build 200,000 rows, six questions about them, a mistake and its fix; then, where the server can, a plot, a cell longer than the client's patience (%s) and an interrupt. ", peerPatience)
	p("polyrepl is `polyrepl mcp` on the bench's daemon (its `exec`, `wait` and `interrupt`); desktop-commander keeps a `python3 -i -u` with `start_process` and `interact_with_process`; ")
	p("code-runner runs each call in a fresh process (`run-code`), so every call builds the data again. Times are taken in the client around each call; ")
	p("characters (runes) are counted as the context section counts them: each reply's text plus its `structuredContent` as compact JSON, and the tool list (`tools/list`'s tools as compact JSON) once per conversation; images are not characters and are counted apart. ")
	p("The servers take each phase in turn, in a rotating order. `go run ./bench -only %s` reruns this section alone.\n\n", peersSection)
	if res == nil {
		p("Not measured: the section did not run.\n")
		return b.String()
	}
	if res.err != nil && len(res.runs) == 0 {
		p("Not measured: %s.\n", oneLine(res.err.Error()))
		return b.String()
	}
	p("Data: %s. The six questions are asked %d time(s) (their times are over every round; characters over the first).\n\n", res.data, res.rounds)
	var rows [][]string
	for _, r := range res.runs {
		name := r.name
		if r.version != "" {
			name += " " + r.version
		}
		if r.skipped != "" {
			rows = append(rows, []string{name, "–", "–", "–", "–", "–", "–", "–", "–", "–", "skipped: " + cellText(r.skipped)})
			continue
		}
		t := r.totals()
		state := "no"
		if r.keepsState {
			state = "yes"
		}
		rows = append(rows, []string{name, state, fmt.Sprintf("%d (%s)", r.tools, fmtInt(r.toolList)), fmt.Sprint(t.calls),
			fmtDur(t.questions.median()), fmtDur(quantile(t.questions.valid(), 0.9)), fmtDur(r.wall),
			fmtInt(t.common), fmtInt(t.all) + imagesNote(t.images), fmtInt(t.conversation), cellText(strings.Join(r.notes, "; "))})
	}
	p("%s\n", table([]string{"server", "keeps state", "tools (tool list, characters)", "calls", "a question: median", "p90", "whole task (first round)",
		"replies: build, questions, mistake, fix", "replies: whole task", "conversation: tool list + replies (build … fix)", "what failed or needed a workaround"}, rows))

	var ts [][]string
	for _, t := range peersTargets(res) {
		ts = append(ts, []string{t.text, t.measured, t.verdict()})
	}
	p("%s\n", table([]string{"target (issue 40, against the best peer that keeps state)", "measured", "verdict"}, ts))

	// Phase by phase: calls, time and characters of each server.
	head := []string{"phase"}
	var live []*peerRun
	for _, r := range res.runs {
		if r.skipped == "" {
			live = append(live, r)
			head = append(head, r.name+": calls · time · characters")
		}
	}
	rows = nil
	for _, ph := range peerPhases(res.cells) {
		row := []string{ph[0]}
		for _, r := range live {
			row = append(row, r.phaseCell(ph[0]))
		}
		rows = append(rows, row)
	}
	p("%s\n", table(head, rows))
	p("Phases: ")
	for i, ph := range peerPhases(res.cells) {
		if i > 0 {
			p("; ")
		}
		p("%s, %s", ph[0], ph[1])
	}
	p(". Time is the phase's calls together (first round); a call that failed is marked ✗, a reply that is a tool error (the mistake's, rightly) ⚠.\n\n")
	return b.String()
}

// phaseCell is one server's calls of a phase, first round.
func (r *peerRun) phaseCell(phase string) string {
	for _, c := range r.cannot {
		if c == phase {
			return "cannot"
		}
	}
	var n, chars, other int
	var t float64
	mark := ""
	for _, c := range r.calls {
		if c.phase != phase || c.round != 0 {
			continue
		}
		n++
		t += c.secs
		chars += c.text + c.sc
		other += c.other
		if c.err != "" {
			mark = " ✗"
		} else if c.isErr && mark == "" {
			mark = " ⚠"
		}
	}
	if n == 0 {
		return "–"
	}
	return fmt.Sprintf("%d · %s · %s%s%s", n, fmtDur(t), fmtInt(chars), imagesNote(other), mark)
}

func imagesNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" + %d image(s)", n)
}

// cellText makes s fit a table cell: one line, no pipes.
func cellText(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", "\\|")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// peersTargets are issue 40's item 2, polyrepl against the best peer
// that keeps state (desktop-commander).
func peersTargets(res *peersResult) []target {
	texts := [3]string{
		"(issue 40) A question through `polyrepl mcp`: median at most a fifth of desktop-commander's",
		"(issue 40) Replies' characters (build, questions, mistake, fix): at most desktop-commander's",
		"(issue 40) The whole conversation (tool list + those replies): at most a fifth of desktop-commander's",
	}
	var pr, dc *peerRun
	if res != nil {
		for _, r := range res.runs {
			if r.skipped != "" {
				continue
			}
			switch r.name {
			case peerPolyrepl:
				pr = r
			case peerDC:
				dc = r
			}
		}
	}
	if pr == nil || dc == nil {
		return []target{{text: texts[0], measured: "–"}, {text: texts[1], measured: "–"}, {text: texts[2], measured: "–"}}
	}
	a, d := pr.totals(), dc.totals()
	x := a.questions.median() / d.questions.median()
	ts := []target{judge(texts[0], x, atMost(0.2), fmt.Sprintf("%s vs %s: %s", fmtDur(a.questions.median()), fmtDur(d.questions.median()), fmtRatio(x)))}
	if a.failedCalls > 0 || d.failedCalls > 0 {
		ts = append(ts, target{text: texts[1], measured: "– (a call failed)"}, target{text: texts[2], measured: "– (a call failed)"})
		return ts
	}
	x = ratio(a.common, d.common)
	ts = append(ts, judge(texts[1], x, atMost(1), fmt.Sprintf("%s vs %s: %s", fmtInt(a.common), fmtInt(d.common), fmtRatio(x))))
	x = ratio(a.conversation, d.conversation)
	ts = append(ts, judge(texts[2], x, atMost(0.2), fmt.Sprintf("%s vs %s: %s", fmtInt(a.conversation), fmtInt(d.conversation), fmtRatio(x))))
	return ts
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}
