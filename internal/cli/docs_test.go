package cli

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The docs are kept true to the binary as a user reads it: the commands
// and flags below are read from `polyrepl help` and `polyrepl help CMD`,
// not from the code that prints them.

// helpCommand is one command as help shows it.
type helpCommand struct {
	name     string
	synopsis string            // "exec NAME CODE|- [-t SECS] …", from "Usage: polyrepl …"
	args     string            // the positional part of the synopsis: "NAME CODE|-"
	flags    map[string]string // the synopsis's flags by first spelling: "-t" → "-t SECS"
	spelling map[string]string // every spelling in its Flags list → its first: "--timeout" → "-t"
	takesArg map[string]bool   // by first spelling: whether a value follows
}

// pendingFlags are flags the docs already show that engineers are adding
// to the binary now. Once one is in help, delete its line here.
var pendingFlags = map[string]string{}

// globalFlags are taken by every command, ahead of its own flags.
var globalFlags = []string{"--label", "-h", "--help"}

// helpCommands reads every command from `polyrepl help`, and each one's
// synopsis and flags from `polyrepl help CMD`.
func helpCommands(t *testing.T) map[string]*helpCommand {
	t.Helper()
	out, _, status := run("help")
	if status != ExitOK {
		t.Fatalf("help exited %d", status)
	}
	_, list, ok := strings.Cut(out, "\nCommands:\n")
	if !ok {
		t.Fatalf("help has no Commands list:\n%s", out)
	}
	cmds := map[string]*helpCommand{}
	for _, line := range strings.Split(list, "\n") {
		if line == "" {
			break
		}
		rest, ok := strings.CutPrefix(line, "  ")
		if !ok || strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, "-") {
			continue // a summary line, or --version
		}
		name, _, _ := strings.Cut(rest, " ")
		cmds[name] = readHelp(t, name)
	}
	if len(cmds) < 10 {
		t.Fatalf("read only %d commands from help:\n%s", len(cmds), out)
	}
	return cmds
}

// readHelp reads `polyrepl help name`.
func readHelp(t *testing.T, name string) *helpCommand {
	t.Helper()
	out, _, status := run("help", name)
	first, _, _ := strings.Cut(out, "\n")
	syn, ok := strings.CutPrefix(first, "Usage: polyrepl ")
	if status != ExitOK || !ok {
		t.Fatalf("help %s exited %d, printed:\n%s", name, status, out)
	}
	c := &helpCommand{name: name, synopsis: syn, spelling: map[string]string{}, takesArg: map[string]bool{}}
	c.args, c.flags = splitSynopsis(strings.TrimPrefix(strings.TrimPrefix(syn, name), " "))
	if _, list, ok := strings.Cut(out, "\nFlags:\n"); ok {
		for _, line := range strings.Split(list, "\n") {
			left, _, _ := strings.Cut(strings.TrimSpace(line), "  ")
			if !strings.HasPrefix(line, "  -") {
				break
			}
			var first string
			for _, sp := range strings.Split(left, ", ") {
				f, arg, _ := strings.Cut(sp, " ")
				if first == "" {
					first = f
				}
				c.spelling[f] = first
				c.takesArg[first] = arg != ""
			}
		}
	}
	for f := range c.flags {
		if _, ok := c.spelling[f]; !ok {
			t.Errorf("help %s: the synopsis has %s, which its Flags list lacks", name, f)
		}
	}
	return c
}

// splitSynopsis splits what follows a command's name in a synopsis into
// its positional arguments ("NAME CODE|-", "[NAME]") and its flags, each
// "[-t SECS]" by its flag ("-t" → "-t SECS").
func splitSynopsis(s string) (args string, flags map[string]string) {
	flags = map[string]string{}
	var pos []string
	for _, m := range regexp.MustCompile(`\[[^\]]*\]|\S+`).FindAllString(s, -1) {
		inner := strings.TrimSuffix(strings.TrimPrefix(m, "["), "]")
		if strings.HasPrefix(inner, "-") {
			f, _, _ := strings.Cut(inner, " ")
			flags[f] = inner
			continue
		}
		pos = append(pos, m)
	}
	return strings.Join(pos, " "), flags
}

// synopsisBlock returns docs/cli.md's synopsis lines ("polyrepl exec …")
// by command name.
func synopsisBlock(t *testing.T) map[string]string {
	t.Helper()
	block := section(t, "docs/cli.md", doc(t, "docs/cli.md"), "## Synopsis", "## ")
	_, code, ok := strings.Cut(block, "```\n")
	if !ok {
		t.Fatal("docs/cli.md's Synopsis section has no ``` block")
	}
	code, _, _ = strings.Cut(code, "```")
	lines := map[string]string{}
	for _, line := range strings.Split(code, "\n") {
		rest, ok := strings.CutPrefix(line, "polyrepl ")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, " ")
		if _, dup := lines[name]; dup {
			t.Errorf("docs/cli.md's synopsis block has two lines for `polyrepl %s`: keep one", name)
		}
		lines[name] = rest
	}
	return lines
}

// docs/cli.md's synopsis block has one line per command of `polyrepl
// help`, with its arguments and every flag help lists (in any order),
// and nothing help lacks: a flag added to a command is one edit of its
// line there.
func TestDocsCLISynopses(t *testing.T) {
	cmds := helpCommands(t)
	lines := synopsisBlock(t)
	for _, name := range slices.Sorted(maps.Keys(cmds)) {
		c := cmds[name]
		line, ok := lines[name]
		if !ok {
			t.Errorf("docs/cli.md's synopsis block lacks `polyrepl %s`; add the line `polyrepl %s` (as `polyrepl help %s` gives it)", name, c.synopsis, name)
			continue
		}
		args, shown := splitSynopsis(strings.TrimPrefix(strings.TrimPrefix(line, name), " "))
		if args != c.args {
			t.Errorf("docs/cli.md shows `polyrepl %s %s`; `polyrepl help %s` gives `polyrepl %s`: make the arguments agree", name, args, name, c.synopsis)
		}
		for _, f := range slices.Sorted(maps.Keys(c.flags)) {
			switch got, ok := shown[f]; {
			case !ok:
				t.Errorf("docs/cli.md lacks %s of `polyrepl %s`; add `[%s]` to its line in the synopsis block (help: `polyrepl %s`)", f, name, c.flags[f], c.synopsis)
			case got != c.flags[f]:
				t.Errorf("docs/cli.md shows `[%s]` on `polyrepl %s`; help has `[%s]`: make them agree", got, name, c.flags[f])
			}
		}
		for _, f := range slices.Sorted(maps.Keys(shown)) {
			if _, ok := c.flags[f]; ok || f == "--label" {
				continue
			}
			pending, isPending := pendingFlags[name+" "+f]
			switch _, inHelp := c.spelling[f]; {
			case isPending && inHelp:
				t.Errorf("%s of `polyrepl %s` is in `polyrepl help %s` now: delete its line from pendingFlags in internal/cli/docs_test.go", f, name, name)
			case isPending:
				t.Logf("docs/cli.md shows %s of `polyrepl %s` before the binary has it (%s)", f, name, pending)
			default:
				t.Errorf("docs/cli.md shows %s on `polyrepl %s`, which `polyrepl help %s` does not list; remove it from the line, or add the flag to the command", f, name, name)
			}
		}
		delete(lines, name)
	}
	for _, name := range slices.Sorted(maps.Keys(lines)) {
		if name == "--version" {
			continue
		}
		t.Errorf("docs/cli.md's synopsis block shows `polyrepl %s`, which `polyrepl help` does not list; remove the line", name)
	}
}

// docs/cli.md's exit status table gives every status a command exits
// with.
func TestDocsCLIExitStatuses(t *testing.T) {
	table := section(t, "docs/cli.md", doc(t, "docs/cli.md"), "## Exit status", "## ")
	for _, s := range []int{ExitOK, ExitFailed, ExitUsage, ExitInput, ExitTimeout} {
		if !strings.Contains(table, fmt.Sprintf("| **%d** |", s)) {
			t.Errorf("docs/cli.md's exit status table lacks a row `| **%d** | … |`", s)
		}
	}
}

// Every command line the README and the docs show — `polyrepl CMD …` in
// a code span or a code block — names a command `polyrepl help` lists
// and only flags `polyrepl help CMD` lists.
func TestDocsShowOnlyRealCommandsAndFlags(t *testing.T) {
	cmds := helpCommands(t)
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	// docs/reliability.md is generated from the reliability suite, whose
	// bad inputs are commands the binary refuses.
	files = slices.DeleteFunc(files, func(f string) bool { return filepath.Base(f) == "reliability.md" })
	files = append([]string{"../../README.md"}, files...)
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(file, "../../")
		for _, m := range commandLines(string(b)) {
			where := fmt.Sprintf("%s:%d", name, m.line)
			c, ok := cmds[m.cmd]
			if !ok {
				if m.cmd != "--version" && m.cmd != "holder" { // holder: the hidden per-session process, as ps shows it
					t.Errorf("%s shows `polyrepl %s`, which `polyrepl help` does not list", where, m.cmd)
				}
				continue
			}
			for i := 0; i < len(m.words); i++ {
				w := strings.TrimRight(strings.Trim(m.words[i], "[]"), ",.;:)")
				if w == "--" {
					break // the rest is positional
				}
				if len(w) < 2 || w[0] != '-' || (w[1] >= '0' && w[1] <= '9') {
					continue
				}
				f, _, hasValue := strings.Cut(w, "=")
				first, ok := c.spelling[f]
				switch {
				case ok:
					if c.takesArg[first] && !hasValue {
						i++ // its value, which may start with '-'
					}
				case slices.Contains(globalFlags, f):
					if f == "--label" && !hasValue {
						i++
					}
				case pendingFlags[m.cmd+" "+f] != "":
				default:
					t.Errorf("%s shows %s on `polyrepl %s`, which `polyrepl help %s` does not list (in: %s)", where, f, m.cmd, m.cmd, m.text)
				}
			}
		}
	}
}

// shownCommand is one `polyrepl CMD …` a document shows.
type shownCommand struct {
	line  int
	cmd   string
	words []string
	text  string
}

// In a code block a command starts its line (after a prompt "$ "), a
// path (~/.local/bin/polyrepl) or a pipe; elsewhere in a block the word
// is output ("Register polyrepl with …"). In a code span it may be
// anywhere.
var (
	blockRE = regexp.MustCompile(`(?:^\s*(?:\$\s+)?|/|\|\s*)polyrepl ([a-z][a-z-]*|--version)\b`)
	spanRE  = regexp.MustCompile(`(?:^|[\s/(|])polyrepl ([a-z][a-z-]*|--version)\b`)
)

// commandLines finds the command lines a Markdown text shows: in code
// blocks (fenced or indented) and code spans (which may run over lines
// of a paragraph). A command's words end at the end of its code, at a
// shell operator or comment, or at a gap of two spaces (a listing's
// description column); quoted words are one word each.
func commandLines(text string) []shownCommand {
	var found []shownCommand
	add := func(line int, code string, re *regexp.Regexp) {
		for _, loc := range re.FindAllStringSubmatchIndex(code, -1) {
			found = append(found, shownCommand{line: line, cmd: code[loc[2]:loc[3]],
				words: shellWords(code[loc[3]:]), text: strings.TrimSpace(code[loc[2]:])})
		}
	}
	fenced := false
	var span strings.Builder // the code span open across lines
	spanLine, inSpan := 0, false
	for i, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(strings.TrimSpace(line), "```"):
			fenced = !fenced
			inSpan = false
			continue
		case fenced || (strings.HasPrefix(line, "    ") && !inSpan):
			add(i+1, line, blockRE)
			continue
		case strings.TrimSpace(line) == "":
			inSpan = false // a span ends with its paragraph
			continue
		}
		parts := strings.Split(line, "`")
		for j, part := range parts {
			if j > 0 {
				if inSpan {
					add(spanLine, span.String(), spanRE)
				} else {
					span.Reset()
					spanLine = i + 1
				}
				inSpan = !inSpan
			}
			if inSpan {
				if j == 0 {
					span.WriteByte(' ')
				}
				span.WriteString(part)
			}
		}
	}
	return found
}

// shellWords splits s into words as a shell would for quoting, stopping
// at |, ;, &&, #, > or a run of two spaces outside quotes.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
		}
		w.Reset()
		inWord = false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case (ch == '\'' || ch == '"') && !inWord:
			end := strings.IndexByte(s[i+1:], ch)
			if end < 0 {
				end = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+end])
			inWord = true
			i += end + 1
		case ch == ' ' || ch == '\t':
			flush()
			if strings.HasPrefix(s[i:], "  ") {
				return words
			}
		case !inWord && strings.ContainsRune("|;&#>", rune(ch)):
			flush()
			return words
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	flush()
	return words
}

// Every relative link of the README and the docs reaches a file that
// exists, and a heading there when it names one (#anchor, as GitHub
// makes them), so moving text between the docs does not leave a reader
// at a dead link.
func TestDocsLinks(t *testing.T) {
	files, _ := filepath.Glob("../../docs/*.md")
	files = append([]string{"../../README.md"}, files...)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
			}
			text, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s links to %s, which does not exist", strings.TrimPrefix(file, "../../"), target)
				continue
			}
			if anchor != "" && !slices.Contains(anchors(string(text)), anchor) {
				t.Errorf("%s links to %s, but %s has no heading with that anchor", strings.TrimPrefix(file, "../../"), target, strings.TrimPrefix(filepath.Clean(dest), "../../"))
			}
		}
	}
}

// anchors returns the anchors GitHub gives a Markdown text's headings:
// lower case, punctuation dropped, spaces made hyphens.
func anchors(text string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}
