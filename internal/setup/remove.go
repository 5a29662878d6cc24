package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// Unregister returns content without polyrepl's registration, the text
// of what it removed ("" when there was none, and then content
// unchanged), and whether what is left is an empty document (no key, no
// comment: a file --write created, which can go). Like Edit, it splices
// bytes and checks the result with a parser: every other server, key,
// comment and line stays as it was.
func (c Client) Unregister(content []byte) (out []byte, removed string, empty bool, err error) {
	if c.Format == TOML {
		out, removed, err = unregisterTOML(content)
	} else {
		out, removed, err = unregisterJSON(content)
	}
	if err != nil || removed == "" {
		return content, "", false, err
	}
	return out, removed, isEmptyDoc(c.Format, out), nil
}

// isEmptyDoc reports whether b holds nothing but whitespace (and, for
// JSON, one empty object).
func isEmptyDoc(f Format, b []byte) bool {
	t := bytes.TrimSpace(b)
	if f == JSON {
		return string(t) == "{}" || len(t) == 0
	}
	return len(t) == 0
}

// removeRefusal is a file Unregister cannot read: nothing is removed.
func removeRefusal(why string) error {
	return &ParseError{Why: why, Removing: true}
}

// unregisterJSON removes mcpServers.polyrepl from the JSON document b,
// and mcpServers itself when polyrepl was its only server (as a --write
// that added it left it).
func unregisterJSON(b []byte) ([]byte, string, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return b, "", nil
	}
	var before any
	if err := json.Unmarshal(b, &before); err != nil {
		return nil, "", removeRefusal("it is not valid JSON (" + jsonProblem(b, err) + ")")
	}
	top := skipSpace(b, 0)
	if b[top] != '{' {
		return b, "", nil // no mcpServers in it, so no polyrepl
	}
	servers, err := findMember(b, top, "mcpServers")
	if err != nil || servers == nil || b[servers.valStart] != '{' {
		return b, "", removing(err)
	}
	mine, err := findMember(b, servers.valStart, Name)
	if err != nil || mine == nil {
		return b, "", removing(err)
	}
	removed := dedent(lineIndent(b, mine.keyStart) + string(b[mine.keyStart:mine.valEnd]))
	out := removeMember(b, servers.valStart, mine.key)
	dropped := false
	if ms, _ := members(out, servers.valStart); len(ms) == 0 {
		out, dropped = removeMember(out, top, "mcpServers"), true
	}
	// Check: the document is the one before, less polyrepl's entry.
	want := normalJSON(before).(map[string]any)
	delete(want["mcpServers"].(map[string]any), Name)
	if dropped {
		delete(want, "mcpServers")
	}
	var got any
	if err := json.Unmarshal(out, &got); err != nil || !reflect.DeepEqual(got, any(want)) {
		return nil, "", errors.New("internal error: removing polyrepl's entry would have changed more than that entry; nothing was changed")
	}
	return out, removed, nil
}

// removing marks a refusal found while looking for polyrepl's entry as
// one of removing it.
func removing(err error) error {
	if pe := (*ParseError)(nil); errors.As(err, &pe) {
		pe.Removing = true
	}
	return err
}

// removeMember cuts key and its value out of the object at b[start],
// with the comma and the layout between it and its neighbour, so that
// what insertMember added goes as it came.
func removeMember(b []byte, start int, key string) []byte {
	ms, end := members(b, start)
	i := slices.IndexFunc(ms, func(m member) bool { return m.key == key })
	switch {
	case i < 0:
		return b
	case len(ms) == 1:
		return splice(b, start+1, end, "")
	case i < len(ms)-1:
		return splice(b, ms[i].keyStart, ms[i+1].keyStart, "")
	default:
		return splice(b, ms[i-1].valEnd, ms[i].valEnd, "")
	}
}

// unregisterTOML removes polyrepl's server from the TOML document b:
// the [mcp_servers.polyrepl] table and every table under it (its env,
// say), wherever they are, and a key that defines it inline or dotted.
// Comments above a table belong to the one below them, as in
// insertTable, and stay.
func unregisterTOML(b []byte) ([]byte, string, error) {
	if !utf8.Valid(b) {
		return nil, "", removeRefusal("it is not valid TOML (it is not UTF-8)")
	}
	var before map[string]any
	if _, err := toml.Decode(string(b), &before); err != nil {
		return nil, "", removeRefusal("it is not valid TOML (" + strings.TrimPrefix(err.Error(), "toml: ") + ")")
	}
	if _, ok := tomlLookup(before, "mcp_servers", Name); !ok {
		return b, "", nil
	}
	ours := func(key []string) bool {
		return len(key) >= 2 && key[0] == "mcp_servers" && key[1] == Name
	}
	stmts := scanTOML(b)
	type cut struct{ from, to int }
	var cuts []cut
	var table []string // the table the statements are in
	for i, s := range stmts {
		switch {
		case s.header:
			table = s.key
			if ours(s.key) {
				from, to := s.start, bodyEnd(stmts, i)
				// A blank line before the table goes with it when a
				// blank line or the end follows it, as insertTable put
				// one there.
				if i > 0 && blank(b, stmts[i-1]) && (to == len(b) || afterIsBlank(b, stmts, to)) {
					from = stmts[i-1].start
				}
				cuts = append(cuts, cut{from, to})
			}
		case s.keyval && !ours(table) && ours(append(slices.Clip(table), s.key...)):
			cuts = append(cuts, cut{s.start, s.end})
		}
	}
	var removed strings.Builder
	out := b
	for k := len(cuts) - 1; k >= 0; k-- {
		c := cuts[k]
		out = splice(out, c.from, c.to, "")
	}
	for _, c := range cuts {
		removed.WriteString(strings.Trim(string(b[c.from:c.to]), "\r\n") + "\n")
	}
	var got map[string]any
	if _, err := toml.Decode(string(out), &got); err != nil {
		return nil, "", fmt.Errorf("internal error: removing polyrepl's table made invalid TOML (%v); nothing was changed", err)
	}
	if servers, ok := before["mcp_servers"].(map[string]any); ok {
		delete(servers, Name)
	}
	if !reflect.DeepEqual(withoutEmptyServers(got), withoutEmptyServers(before)) {
		return nil, "", errors.New("internal error: removing polyrepl's table would have changed more than that table; nothing was changed")
	}
	return out, removed.String(), nil
}

// withoutEmptyServers is m without an mcp_servers table that holds
// nothing (which a document may or may not spell out).
func withoutEmptyServers(m map[string]any) map[string]any {
	if m == nil {
		m = map[string]any{}
	}
	if s, ok := m["mcp_servers"].(map[string]any); ok && len(s) == 0 {
		delete(m, "mcp_servers")
	}
	return m
}

// blank reports whether s is a line of whitespace alone.
func blank(b []byte, s tomlStmt) bool {
	return !s.header && !s.keyval && len(bytes.TrimSpace(b[s.start:s.end])) == 0
}

// afterIsBlank reports whether the statement that starts at offset at is
// a blank line.
func afterIsBlank(b []byte, stmts []tomlStmt, at int) bool {
	for _, s := range stmts {
		if s.start == at {
			return blank(b, s)
		}
	}
	return false
}

// dedent takes the indentation all of text's lines share off each.
func dedent(text string) string {
	lines := strings.Split(text, "\n")
	common, seen := "", false
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if !seen {
			common, seen = ind, true
			continue
		}
		n := 0
		for n < len(common) && n < len(ind) && common[n] == ind[n] {
			n++
		}
		common = common[:n]
	}
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, common)
	}
	return strings.Join(lines, "\n")
}
