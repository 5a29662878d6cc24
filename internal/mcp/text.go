package mcp

import (
	"fmt"
	"strings"
	"time"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/bound"
	"github.com/polyrepl/polyrepl/internal/render"
	"github.com/polyrepl/polyrepl/internal/sandbox"
)

// modelStyle lays a result out for a model: what other clients did set
// apart from its own call's result, and an empty result said aloud.
var modelStyle = render.Style{Voice: model, ActivityHeader: render.ActivityHeaderModel, ActivityIdleHeader: render.ActivityIdleHeaderModel,
	ActivityFirstHeader: render.ActivityFirstHeaderModel, CallHeader: "Your call's result:", SayEmpty: true, BriefActivity: true}

// text writes a cell result for a model, laid out as for a person but in
// the model's terms.
func (s *Server) text(r api.CellResult) string {
	r.Rich = shownRich(trueRich(r.Rich), r)
	r.Output, r.OutputCut = oneMarker(r.Output, r.OutputCut, "output")
	var b strings.Builder
	st := modelStyle
	st.Voice = s.voice
	render.Result(&b, r, st)
	return strings.TrimRight(b.String(), "\n") + s.versionNote()
}

// shownRich is what a reply's text lists of a cell's rich outputs: every
// image (a model is sent it, or told why not), and a document (HTML,
// Markdown, LaTeX) only when the reply shows no useful plain form of it:
// a pandas table's HTML says nothing the value above it did not, and a
// line about it cost every table reply 180 characters. The structured
// content lists them all, with their files.
func shownRich(rich []api.Rich, r api.CellResult) []api.Rich {
	var out []api.Rich
	for _, x := range rich {
		if !strings.HasPrefix(x.MIME, "image/") && plainShown(x.Text, r) {
			continue
		}
		out = append(out, x)
	}
	return out
}

// plainShown says whether a rich output's plain form is in the reply and
// says something: not an object's bare repr ("<IPython.core.display.HTML
// object>"), which tells only that there is more.
func plainShown(text string, r api.CellResult) bool {
	text = strings.TrimSpace(text)
	if text == "" || (strings.HasPrefix(text, "<") && strings.HasSuffix(text, ">") && !strings.Contains(text, "\n")) {
		return false
	}
	return strings.Contains(r.Value, text) || strings.Contains(r.Output, text)
}

// oneMarker puts a cut's description where its marker is, so a model
// reads one line, in place, saying what was cut of the whole and where
// the whole is, instead of a marker and then a second account of it.
func oneMarker(text string, cut *bound.Cut, what string) (string, *bound.Cut) {
	if cut == nil || cut.Head+cut.Tail == 0 {
		return text, cut
	}
	m := bound.Marker(cut.Total - cut.Head - cut.Tail)
	if strings.Count(text, m) != 1 {
		return text, cut
	}
	return strings.Replace(text, m, "\n"+cut.Describe(what)+"\n", 1), nil
}

// imagesText says what a reply did not send of its images and why, or
// changed; "" if it sent each one as it is.
func imagesText(rep imageReport) string {
	var said []string
	if rep.Unshown > 0 {
		said = append(said, fmt.Sprintf("%s not shown inline (a reply shows the first %d and the last); their files are listed above.", render.Plural(rep.Unshown, "image"), imagesInline-1))
	}
	if len(rep.Again) > 0 {
		said = append(said, fmt.Sprintf("Image %s is the same as one you were already sent: not sent again.", numbers(rep.Again)))
	}
	if len(rep.Scaled) > 0 {
		var sizes []string
		for _, x := range rep.Scaled {
			sizes = append(sizes, fmt.Sprintf("%d to %d×%d", x.N, x.Width, x.Height))
		}
		said = append(said, fmt.Sprintf("Scaled down for you (the file keeps the full size): image %s.", strings.Join(sizes, ", ")))
	}
	if len(rep.Over) > 0 {
		said = append(said, fmt.Sprintf("Image %s would pass this reply's budget of %d KB of images: not sent; its file is listed above.", numbers(rep.Over), imageBudget/1000))
	}
	for _, x := range rep.Unsent {
		said = append(said, unsentText(x))
	}
	if len(said) == 0 {
		return ""
	}
	return "[" + strings.Join(said, " ") + "]"
}

// unsentText says why an image was not sent, what it is and where its
// file is.
func unsentText(x imageNote) string {
	f := x.Facts
	said := strings.ToUpper(strings.TrimPrefix(x.Said, "image/"))
	what := said
	if f.Format != "" {
		what = strings.ToUpper(f.Format)
		if f.mime() != x.Said {
			what += " (the runtime called it " + said + ")"
		}
	}
	if f.Corrupt == "" && f.Width > 0 && f.Height > 0 {
		what = fmt.Sprintf("%d×%d %s", f.Width, f.Height, what)
	}
	switch {
	case x.Err != "" && f.Format == "":
		return fmt.Sprintf("Image %d cannot be read (%s): not sent.", x.N, x.Err)
	case f.Corrupt != "" && f.Format == "":
		return fmt.Sprintf("Image %d is corrupt: its bytes are no PNG, JPEG or GIF image (%s); not sent, its file is %s.", x.N, f.Corrupt, x.File)
	case f.Corrupt != "":
		return fmt.Sprintf("Image %d is corrupt: a %s that cannot be read (%s); not sent, its file is %s.", x.N, what, f.Corrupt, x.File)
	case f.Decoded > decodeLimit:
		return fmt.Sprintf("Image %d is a %s: decoding it would take %s, over the %s an image may take here; not sent, and left as its file %s.",
			x.N, what, render.Megabytes(uint64(f.Decoded)), render.Megabytes(decodeLimit), x.File)
	case x.Bytes > readLimit:
		return fmt.Sprintf("Image %d is a %s of %s, over the %s of file an image may have here; not sent, and left as its file %s.",
			x.N, what, render.Kilobytes(x.Bytes), render.Kilobytes(readLimit), x.File)
	case x.Err != "":
		return fmt.Sprintf("Image %d is a %s whose file cannot be read (%s): not sent; its file is %s.", x.N, what, x.Err, x.File)
	}
	return fmt.Sprintf("Image %d is a %s: not sent; its file is %s.", x.N, what, x.File)
}

// numbers lists image numbers: "1, 3".
func numbers(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// historyText lists a record, or shows one entry whole.
func historyText(r api.RecordReply) string {
	var b strings.Builder
	render.History(&b, r)
	return strings.TrimRight(b.String(), "\n")
}

// notesText appends notes to text, each set apart in brackets.
func (s *Server) notesText(text string, notes []api.Note) string {
	var b strings.Builder
	b.WriteString(text)
	render.Notes(&b, notes, s.voice)
	return b.String()
}

// sessionsText lists sessions as the CLI does.
func (s *Server) sessionsText(list []api.SessionInfo, now time.Time) string {
	if len(list) == 0 {
		return "No sessions. The exec tool creates one on first use of a name."
	}
	var b strings.Builder
	for _, si := range list {
		render.Session(&b, si, now, s.voice)
	}
	return strings.TrimRight(b.String(), "\n")
}

// model is the voice of replies to a model: it names tool arguments and
// tool calls, never command lines it cannot run. A server started with
// --sandbox speaks with a voice that knows its ceiling (Server.voice).
var model render.Voice = modelVoice{}

type modelVoice struct {
	// ceiling is the server's sandbox, the most a model may ask for;
	// nil for none.
	ceiling *api.Sandbox
}

// Give names an exec argument with its value, if the exec tool takes
// it and the server's sandbox allows that value: a model is never
// offered what would be refused.
func (m modelVoice) Give(field, value string) string {
	switch field {
	case "sandbox":
		if m.ceiling != nil && sandbox.Rank(value) > sandbox.Rank(m.ceiling.Policy) {
			return ""
		}
	case "network":
		if m.ceiling != nil && value == api.NetworkOn && m.ceiling.Network != api.NetworkOn {
			return ""
		}
	default:
		return ""
	}
	return fmt.Sprintf("%q: %q", field, value)
}

// Confined says who can widen a model's sandbox: the user.
func (m modelVoice) Confined() string {
	if m.ceiling != nil {
		return fmt.Sprintf("this server's sandbox (%s) is the most its sessions may have, set by the user where the server is registered: ask the user if the cell needs more",
			render.Policy(*m.ceiling))
	}
	return "your sandbox is the most your sessions may have: ask the user if the cell needs more"
}

func (modelVoice) Input(field string) string {
	if field == "" {
		return ""
	}
	return fmt.Sprintf("the %q argument", field)
}

func (modelVoice) Step(a api.Action) string {
	switch a.Do {
	case api.DoExec:
		return fmt.Sprintf("the exec tool with session %q", a.Session)
	case api.DoRuntimes:
		return "the runtimes tool"
	case api.DoKernels:
		return "the user, at a terminal (no tool lists a gateway's kernels),"
	case api.DoAttach:
		return fmt.Sprintf("the history tool with the exec tool (session %q)", a.Session)
	case api.DoSessions:
		if a.Session == "" {
			return "the sessions tool"
		}
		return fmt.Sprintf("the sessions tool (its entry for %q)", a.Session)
	case api.DoStop:
		return "the user stopping the polyrepl daemon"
	}
	return fmt.Sprintf("the %s tool (session %q)", a.Do, a.Session)
}
