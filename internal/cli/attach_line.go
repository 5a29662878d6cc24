package cli

import (
	"context"
	"io"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/polyrepl/polyrepl/internal/api"
)

// The console's line editing beyond golang.org/x/term's Terminal: the
// keys it watches, a block's indentation, and completion.

// Keys the console watches for before the line editor sees them.
const (
	keyCtrlC  = 0x03
	keyCtrlU  = 0x15 // the line editor's "erase the line"
	keyDetach = 0x1d // Ctrl-]
	keyTab    = '\t'
	// indentKey is the console's own key, never typed (Unicode's private
	// use area): given to the line editor at the start of a continuation
	// line, it becomes the block's indentation there, drawn as the line
	// starts.
	indentKey = '\uE000'
	// While a secret is typed, unseen: backspace and Ctrl-H become
	// keyHiddenBack, Ctrl-U and Ctrl-C keyHiddenClear, control keys the
	// line editor leaves to its callback.
	keyBackspace   = 0x7f
	keyCtrlH       = 0x08
	keyHiddenBack  = 0x1f
	keyHiddenClear = 0x1e
)

// keyWatch takes Ctrl-C and the detach key on their way to the line
// editor: Ctrl-C is told on ctrlC and erases the line being typed; the
// detach key ends input as Ctrl-D does on an empty line. Armed, its next
// read starts with indentKey.
type keyWatch struct {
	r     io.Reader
	ctrlC chan struct{}
	// armed: the next line continues a block and starts indented. Read
	// and the line editor's callback run on the goroutine reading lines,
	// which also arms it between lines.
	armed bool
	// secret, if set, says a secret is being typed, kept out of the line
	// editor's line: its erasing keys become keyHiddenBack and
	// keyHiddenClear, which reach the editor's callback.
	secret func() bool
}

func (k *keyWatch) Read(p []byte) (int, error) {
	if k.armed && len(p) >= utf8.UTFMax {
		k.armed = false
		return utf8.EncodeRune(p, indentKey), nil
	}
	n, err := k.r.Read(p)
	secret := n > 0 && k.secret != nil && k.secret()
	for i := 0; i < n; i++ {
		switch p[i] {
		case keyCtrlC:
			select {
			case k.ctrlC <- struct{}{}:
			default:
			}
			p[i] = keyCtrlU
			if secret {
				p[i] = keyHiddenClear
			}
		case keyDetach:
			p[i] = keyCtrlC // the line editor ends input on it
		case keyCtrlU:
			if secret {
				p[i] = keyHiddenClear
			}
		case keyBackspace, keyCtrlH:
			if secret {
				p[i] = keyHiddenBack
			}
		}
	}
	return n, err
}

// continues reports whether the lines typed so far are an unfinished
// cell: a line ending in '\' or ':', open brackets, or a block begun with
// ':' not yet closed by an empty line (or one of spaces alone).
func continues(lines []string) bool {
	last := strings.TrimRight(lines[len(lines)-1], " \t")
	if strings.HasSuffix(last, "\\") || strings.HasSuffix(last, ":") {
		return true
	}
	if depth(lines) > 0 {
		return true
	}
	if len(lines) > 1 && last != "" {
		// Inside a block begun with ':' (Python): an empty line ends it.
		for _, l := range lines[:len(lines)-1] {
			if strings.HasSuffix(strings.TrimRight(l, " \t"), ":") {
				return true
			}
		}
	}
	return false
}

// depth counts the brackets the lines leave open.
func depth(lines []string) int {
	d := 0
	for _, l := range lines {
		d += opened(l)
	}
	return d
}

// opened counts the brackets a line opens and does not close.
func opened(l string) int {
	d := 0
	for _, r := range l {
		switch r {
		case '(', '[', '{':
			d++
		case ')', ']', '}':
			d--
		}
	}
	return d
}

// indentStep is what a block adds to its line's indentation.
const indentStep = "    "

// indentAfter is the indentation the line after lines starts with: the
// last line's own, four spaces more after a line that opens a block (ends
// in ':', or leaves a bracket open).
func indentAfter(lines []string) string {
	last := lines[len(lines)-1]
	in := last[:len(last)-len(strings.TrimLeft(last, " \t"))]
	trimmed := strings.TrimRight(last, " \t")
	if strings.HasSuffix(trimmed, ":") || opened(last) > 0 {
		in += indentStep
	}
	return in
}

// completer completes the word before the cursor from the session: by
// the runtime's own completion on its live state where it has one
// (Python's rlcompleter, attributes after a dot included), else from the
// session's names (as listed after each cell) and its runtime's keywords.
type completer struct {
	a       *console
	runtime string
	// shown: the candidates last listed, so a second Tab does not list
	// them again.
	shown string
}

// complete is the line editor's Tab: the word before the cursor extended
// as far as its candidates agree, the candidates listed when they do not;
// at the start of a line, or after spaces, an indentation step.
func (c *completer) complete(line string, pos int) (string, int, bool) {
	before, after := line[:pos], line[pos:]
	word := lastWord(before, wordAlso(c.runtime))
	if word == "" {
		return before + indentStep + after, pos + len(indentStep), true
	}
	cands := c.candidates(word)
	if len(cands) == 0 {
		return "", 0, false
	}
	common := commonPrefix(cands)
	if len(common) > len(word) {
		c.shown = ""
		return before + common[len(word):] + after, pos + len(common) - len(word), true
	}
	if list := strings.Join(cands, "  "); list != c.shown && len(cands) > 1 {
		c.shown = list
		if len(cands) > 60 {
			list = strings.Join(cands[:60], "  ") + "  …"
		}
		// The editor lets go of its lock while it calls here: its Write
		// shows the list above the line being typed.
		c.a.t.Write([]byte(list + "\n"))
	}
	return "", 0, false
}

// candidates lists what word may become, sorted, without repeats: the
// runtime's completions, or the session's names and the runtime's
// keywords that start with word.
func (c *completer) candidates(word string) []string {
	ctx, cancel := context.WithTimeout(c.a.e.ctx, 5*time.Second)
	defer cancel()
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if strings.HasPrefix(s, word) && s != word && !seen[s] && utf8.ValidString(s) && !strings.ContainsAny(s, "\r\n\x1b") {
			seen[s] = true
			out = append(out, s)
		}
	}
	r, err := c.a.e.client.Complete(ctx, c.a.name, word)
	for _, m := range r.Matches {
		add(m)
	}
	if err != nil || r.By != api.CompletedByRuntime {
		for _, k := range keywords(c.runtime) {
			add(k)
		}
	}
	sort.Strings(out)
	return out
}

// lastWord is the name being typed at the end of s: letters, digits, '_'
// and '.' (R names hold dots), and the runes in also (R's "$@": a list's
// element, a slot).
func lastWord(s, also string) string {
	i := len(s)
	for i > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:i])
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.' || strings.ContainsRune(also, r)) {
			break
		}
		i -= n
	}
	return s[i:]
}

// wordAlso are the characters besides letters, digits, _ and . that a
// runtime's completion takes inside a word: R's df$co and obj@sl, Ruby's
// Shapes::C. A switch, not a map: a package-level map is built at every
// process's start, each command's, and only attach completes.
func wordAlso(runtime string) string {
	switch runtime {
	case "r":
		return "$@"
	case "ruby":
		return ":"
	}
	return ""
}

func commonPrefix(ss []string) string {
	p := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, p) {
			_, n := utf8.DecodeLastRuneInString(p)
			p = p[:len(p)-n]
		}
	}
	return p
}

// keywords are each runtime's reserved words and common builtins, for
// completion beside the session's names. (A switch over slices the
// linker lays out, as wordAlso: no map built at every process's start.)
func keywords(runtime string) []string {
	switch runtime {
	case "python", "ipython":
		return pythonWords
	case "r":
		return rWords
	case "ruby":
		return rubyWords
	case "node":
		return nodeWords
	case "bash", "sh":
		return shKeywords
	case "julia":
		return juliaWords
	}
	return nil
}

var rWords = []string{"if", "else", "repeat", "while", "function", "for", "next", "break", "TRUE", "FALSE", "NULL",
	"Inf", "NaN", "NA", "library", "require", "print", "cat", "paste", "paste0", "length", "names",
	"summary", "head", "tail", "str", "plot", "data.frame", "list", "vector", "matrix", "return"}

var rubyWords = []string{"alias", "and", "begin", "break", "case", "class", "def", "defined?", "do", "else", "elsif",
	"end", "ensure", "false", "for", "if", "in", "module", "next", "nil", "not", "or", "redo", "rescue",
	"retry", "return", "self", "super", "then", "true", "undef", "unless", "until", "when", "while",
	"yield", "puts", "require", "require_relative", "attr_accessor"}

var nodeWords = []string{"await", "break", "case", "catch", "class", "const", "continue", "debugger", "default",
	"delete", "do", "else", "export", "extends", "false", "finally", "for", "function", "if", "import",
	"in", "instanceof", "let", "new", "null", "return", "super", "switch", "this", "throw", "true",
	"try", "typeof", "undefined", "var", "void", "while", "yield", "console", "require", "JSON",
	"Math", "Object", "Array", "Promise", "String", "Number"}

var juliaWords = []string{"baremodule", "begin", "break", "catch", "const", "continue", "do", "else", "elseif", "end",
	"export", "false", "finally", "for", "function", "global", "if", "import", "let", "local", "macro",
	"module", "quote", "return", "struct", "true", "try", "using", "while", "println", "nothing"}

var pythonWords = []string{"False", "None", "True", "and", "as", "assert", "async", "await", "break",
	"class", "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
	"if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
	"while", "with", "yield", "print", "len", "range", "enumerate", "isinstance", "sorted", "list",
	"dict", "set", "tuple", "str", "int", "float", "open", "type", "dir", "help", "input", "zip", "map",
	"filter", "sum", "min", "max", "abs", "repr"}

var shKeywords = []string{"if", "then", "else", "elif", "fi", "case", "esac", "for", "while", "until",
	"do", "done", "function", "in", "echo", "printf", "export", "local", "read", "return", "set",
	"unset", "shift", "source", "test", "trap", "cd", "pwd", "exit"}
