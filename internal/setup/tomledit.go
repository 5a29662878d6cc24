package setup

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// tomlValue is one key of polyrepl's table: its TOML text and the value a
// decoder reads from it.
type tomlValue struct {
	key, text string
	value     any
}

// tomlValues are the keys of polyrepl's [mcp_servers.polyrepl] table.
func (c Client) tomlValues(s Server) []tomlValue {
	args := make([]string, len(s.Args))
	decoded := make([]any, len(s.Args))
	for i, a := range s.Args {
		args[i], decoded[i] = tomlString(a), a
	}
	vals := []tomlValue{
		{"command", tomlString(s.Command), s.Command},
		{"args", "[" + strings.Join(args, ", ") + "]", decoded},
	}
	if c.ToolTimeout > 0 {
		vals = append(vals, tomlValue{"tool_timeout_sec", strconv.Itoa(c.ToolTimeout), int64(c.ToolTimeout)})
	}
	return vals
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// editTOML sets polyrepl's keys in the [mcp_servers.polyrepl] table of
// the TOML document b, adding the table after the other MCP servers if
// it is not there, and leaving every other byte as it was — comments
// included.
func editTOML(b []byte, vals []tomlValue) ([]byte, error) {
	if !utf8.Valid(b) {
		return nil, &ParseError{Why: "it is not valid TOML (it is not UTF-8); fix it, or move it aside, and run this again"}
	}
	var before map[string]any
	if _, err := toml.Decode(string(b), &before); err != nil {
		return nil, &ParseError{Why: "it is not valid TOML (" + strings.TrimPrefix(err.Error(), "toml: ") + "); fix it, or move it aside so that polyrepl starts a new one, and run this again"}
	}
	nl := "\n"
	if bytes.Contains(b, []byte("\r\n")) {
		nl = "\r\n"
	}
	stmts := scanTOML(b)
	table := -1
	for i, s := range stmts {
		if s.header && !s.array && slices.Equal(s.key, []string{"mcp_servers", Name}) {
			table = i
		}
	}
	var out []byte
	if table < 0 {
		if _, ok := tomlLookup(before, "mcp_servers", Name); ok {
			return nil, &ParseError{Why: "it defines mcp_servers." + Name + " as an inline table or with dotted keys, which polyrepl does not edit; replace that definition by hand with a [mcp_servers." + Name + "] table like the one below"}
		}
		out = insertTable(b, stmts, vals, nl)
	} else {
		for _, s := range stmts[table+1:] {
			if s.header {
				break
			}
			if s.keyval && len(s.key) > 1 && slices.ContainsFunc(vals, func(v tomlValue) bool { return v.key == s.key[0] }) {
				return nil, &ParseError{Why: "its [mcp_servers." + Name + "] table sets " + s.key[0] + " with dotted keys, which polyrepl does not edit; replace that key by hand as below"}
			}
		}
		out = mendTable(b, stmts, table, vals, before, nl)
	}
	return out, verifyTOML(b, out, vals)
}

// insertTable adds a new [mcp_servers.polyrepl] table after the last
// [mcp_servers…] table's keys, or at the end.
func insertTable(b []byte, stmts []tomlStmt, vals []tomlValue, nl string) []byte {
	var t strings.Builder
	t.WriteString("[mcp_servers." + Name + "]" + nl)
	for _, v := range vals {
		t.WriteString(v.key + " = " + v.text + nl)
	}
	pos := len(b)
	for i, s := range stmts {
		if s.header && len(s.key) > 0 && s.key[0] == "mcp_servers" {
			pos = bodyEnd(stmts, i)
		}
	}
	text := t.String()
	if pos > 0 {
		text = nl + text
		if b[pos-1] != '\n' {
			text = nl + text
		}
	}
	if rest := bytes.TrimLeft(b[pos:], " \t"); pos < len(b) && !bytes.HasPrefix(rest, []byte("\n")) && !bytes.HasPrefix(rest, []byte("\r\n")) {
		text += nl // a blank line before what follows
	}
	return splice(b, pos, pos, text)
}

// bodyEnd is the offset after the last key/value of the table whose
// header is stmts[h] (after the header itself when it has none), so that
// comments and blank lines before the next table stay with that table.
func bodyEnd(stmts []tomlStmt, h int) int {
	end := stmts[h].end
	for _, s := range stmts[h+1:] {
		if s.header {
			break
		}
		if s.keyval {
			end = s.end
		}
	}
	return end
}

// mendTable sets vals in the existing table whose header is stmts[h]: a
// key that holds another value gets the new value in place (a comment
// after it stays), a missing key is added after the table's last key.
func mendTable(b []byte, stmts []tomlStmt, h int, vals []tomlValue, before map[string]any, nl string) []byte {
	type cut struct {
		from, to int
		text     string
	}
	var cuts []cut
	var missing strings.Builder
	for _, v := range vals {
		found := false
		for _, s := range stmts[h+1:] {
			if s.header {
				break
			}
			if s.keyval && slices.Equal(s.key, []string{v.key}) {
				found = true
				if old, _ := tomlLookup(before, "mcp_servers", Name, v.key); !reflect.DeepEqual(old, v.value) {
					cuts = append(cuts, cut{s.valStart, s.valEnd, v.text})
				}
			}
		}
		if !found {
			missing.WriteString(v.key + " = " + v.text + nl)
		}
	}
	if missing.Len() > 0 {
		pos := bodyEnd(stmts, h)
		text := missing.String()
		if b[pos-1] != '\n' {
			text = nl + text
		}
		cuts = append(cuts, cut{pos, pos, text})
	}
	slices.SortFunc(cuts, func(a, b cut) int { return b.from - a.from })
	for _, c := range cuts {
		b = splice(b, c.from, c.to, c.text)
	}
	return b
}

// verifyTOML checks that after differs from the document orig only in
// polyrepl's table, which now holds vals.
func verifyTOML(orig, after []byte, vals []tomlValue) error {
	var got, want map[string]any
	if _, err := toml.Decode(string(after), &got); err != nil {
		return fmt.Errorf("internal error: the edit made invalid TOML (%v); nothing was changed", err)
	}
	toml.Decode(string(orig), &want) // it decoded before
	if want == nil {
		want = map[string]any{}
	}
	servers, ok := want["mcp_servers"].(map[string]any)
	if !ok {
		servers = map[string]any{}
		want["mcp_servers"] = servers
	}
	mine, ok := servers[Name].(map[string]any)
	if !ok {
		mine = map[string]any{}
		servers[Name] = mine
	}
	for _, v := range vals {
		mine[v.key] = v.value
	}
	if !reflect.DeepEqual(got, want) {
		return errors.New("internal error: the edit would have changed more than polyrepl's table; nothing was changed")
	}
	return nil
}

// tomlLookup walks nested tables.
func tomlLookup(m map[string]any, keys ...string) (any, bool) {
	var cur any = m
	for _, k := range keys {
		t, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = t[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// tomlStmt is one statement of a TOML document: a table header, a
// key/value (its value may span lines), or a blank or comment line.
type tomlStmt struct {
	start, end       int // the statement's bytes, its line end included
	header, array    bool
	keyval           bool
	key              []string // the header's or the key's dotted parts
	valStart, valEnd int      // a key/value's value, without a comment
}

// scanTOML splits b, which a TOML parser has accepted, into statements.
func scanTOML(b []byte) []tomlStmt {
	var out []tomlStmt
	for i := 0; i < len(b); {
		s := tomlStmt{start: i}
		j := skipBlank(b, i)
		switch {
		case j >= len(b) || b[j] == '\n' || b[j] == '\r' || b[j] == '#':
			i = lineEnd(b, j)
		case b[j] == '[':
			s.header = true
			j++
			if j < len(b) && b[j] == '[' {
				s.array = true
				j++
			}
			s.key, j = scanKey(b, j)
			i = lineEnd(b, j)
		default:
			s.keyval = true
			s.key, j = scanKey(b, j)
			s.valStart = skipBlank(b, j+1) // after '='
			s.valEnd = scanTOMLValue(b, s.valStart)
			i = lineEnd(b, s.valEnd)
		}
		s.end = i
		out = append(out, s)
	}
	return out
}

func skipBlank(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// lineEnd is the offset after the newline that ends the line holding b[i].
func lineEnd(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	if k := bytes.IndexByte(b[i:], '\n'); k >= 0 {
		return i + k + 1
	}
	return len(b)
}

// scanKey reads a dotted key up to '=' or ']'.
func scanKey(b []byte, i int) ([]string, int) {
	var parts []string
	for {
		i = skipBlank(b, i)
		switch b[i] {
		case '"':
			end := skipBasic(b, i)
			p, err := strconv.Unquote(string(b[i:end]))
			if err != nil {
				p = string(b[i+1 : end-1])
			}
			parts, i = append(parts, p), end
		case '\'':
			end := i + 1 + bytes.IndexByte(b[i+1:], '\'') + 1
			parts, i = append(parts, string(b[i+1:end-1])), end
		default:
			start := i
			for i < len(b) && (b[i] == '_' || b[i] == '-' || b[i] >= '0' && b[i] <= '9' || b[i] >= 'a' && b[i] <= 'z' || b[i] >= 'A' && b[i] <= 'Z') {
				i++
			}
			parts = append(parts, string(b[start:i]))
		}
		i = skipBlank(b, i)
		if i >= len(b) || b[i] != '.' {
			return parts, i
		}
		i++
	}
}

// skipBasic returns the offset after the one-line basic string at b[i].
func skipBasic(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// scanTOMLValue returns the offset after the value that starts at b[i]:
// strings of every kind, arrays and inline tables over several lines,
// comments inside arrays; a comment after the value is not part of it.
func scanTOMLValue(b []byte, i int) int {
	depth, end := 0, i
	for i < len(b) {
		switch c := b[i]; {
		case bytes.HasPrefix(b[i:], []byte(`"""`)), bytes.HasPrefix(b[i:], []byte(`'''`)):
			q := b[i : i+3]
			k := i + 3
			for k < len(b) && !bytes.HasPrefix(b[k:], q) {
				if c == '"' && b[k] == '\\' {
					k++
				}
				k++
			}
			k += 3
			for n := 0; n < 2 && k < len(b) && b[k] == c; n++ { // """a"""" ends in a quote
				k++
			}
			i, end = k, k
			continue
		case c == '"':
			i = skipBasic(b, i)
			end = i
			continue
		case c == '\'':
			i = i + 1 + bytes.IndexByte(b[i+1:], '\'') + 1
			end = i
			continue
		case c == '#':
			if depth == 0 {
				return end
			}
			i = lineEnd(b, i)
			continue
		case c == '\n' || c == '\r':
			if depth == 0 {
				return end
			}
		case c == '[' || c == '{':
			depth++
			end = i + 1
		case c == ']' || c == '}':
			depth--
			end = i + 1
		case c == ' ' || c == '\t':
		default:
			end = i + 1
		}
		i++
	}
	return end
}
