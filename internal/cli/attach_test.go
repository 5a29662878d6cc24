package cli

import (
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
)

func TestIndentAfter(t *testing.T) {
	for _, c := range []struct {
		lines []string
		want  string
	}{
		{[]string{"for i in x:"}, "    "},
		{[]string{"for i in x:", "    if i:"}, "        "},
		{[]string{"for i in x:", "    if i:", "        print(i)"}, "        "},
		{[]string{"def f(x):  "}, "    "},
		{[]string{"f <- function(x) {"}, "    "},
		{[]string{"f <- function(x) {", "    y <- x"}, "    "},
		{[]string{"d = {'a': 1,"}, "    "},
		{[]string{"x = 1 + \\"}, ""},
		{[]string{"\tif x:"}, "\t    "},
	} {
		if got := indentAfter(c.lines); got != c.want {
			t.Errorf("indentAfter(%q) = %q, want %q", c.lines, got, c.want)
		}
	}
}

func TestContinues(t *testing.T) {
	for _, c := range []struct {
		lines []string
		want  bool
	}{
		{[]string{"x = 1"}, false},
		{[]string{"for i in x:"}, true},
		{[]string{"for i in x:", "    print(i)"}, true},
		{[]string{"for i in x:", "    print(i)", ""}, false},
		{[]string{"for i in x:", "    print(i)", "        "}, false}, // indentation alone ends it
		{[]string{"f(1,"}, true},
		{[]string{"f(1,", "2)"}, false},
		{[]string{"x = 1 + \\"}, true},
	} {
		if got := continues(c.lines); got != c.want {
			t.Errorf("continues(%q) = %v, want %v", c.lines, got, c.want)
		}
	}
}

func TestQuestionPrompt(t *testing.T) {
	for in, want := range map[string]string{
		"name? ":                 "name? ",
		"Some text\nYour name: ": "Your name: ",
		"\x1b[1mbold?\x1b[0m ":   "bold? ",
		"":                       "(input)> ",
		strings.Repeat("x", 100): "…" + strings.Repeat("x", 59),
	} {
		if got := questionPrompt(in); got != want {
			t.Errorf("questionPrompt(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLastWordAndCommonPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"print(df":    "df",
		"x = my.var":  "my.var",
		"":            "",
		"f(x, ":       "",
		"größe + gr":  "gr",
		"total_count": "total_count",
	} {
		if got := lastWord(in, ""); got != want {
			t.Errorf("lastWord(%q) = %q, want %q", in, got, want)
		}
	}
	if got := lastWord("x <- df$co", wordAlso("r")); got != "df$co" {
		t.Errorf("lastWord of an R list's element = %q", got)
	}
	if got := lastWord("p Shapes::C", wordAlso("ruby")); got != "Shapes::C" {
		t.Errorf("lastWord of a Ruby module's constant = %q", got)
	}
	if got := commonPrefix([]string{"total", "totem", "tot"}); got != "tot" {
		t.Errorf("commonPrefix = %q", got)
	}
	if got := commonPrefix([]string{"größe", "grün"}); got != "gr" {
		t.Errorf("commonPrefix of UTF-8 = %q", got)
	}
}

// TestConsoleHint: a refusal's steps in the console's words — keys and
// lines to type, whole sentences — never a `polyrepl wait` command.
func TestConsoleHint(t *testing.T) {
	got := consoleHint(api.ErrorReply{Hint: "for parallel work use another session name",
		Next: []api.Action{{Do: api.DoWait, Session: "att"}, {Do: api.DoInterrupt, Session: "att"}, {Do: api.DoKill, Session: "att"}}}, "att")
	want := " Ctrl-C interrupts the running cell. In another terminal, `polyrepl kill att` ends the session. For parallel work use another session name."
	if got != want {
		t.Errorf("consoleHint:\n got %q\nwant %q", got, want)
	}
}
