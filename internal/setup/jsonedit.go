package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// field is one key of a JSON object, in the order it is written.
type field struct {
	key   string
	value any
}

// object is a JSON object that keeps its keys in order.
type object []field

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := marshal(f.key, "", "")
		v, err := marshal(f.value, "", "")
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// jsonEntry is polyrepl's entry in a JSON client's mcpServers.
func (c Client) jsonEntry(s Server) object {
	var o object
	if c.Typed {
		o = append(o, field{"type", "stdio"})
	}
	return append(o, field{"command", s.Command}, field{"args", s.Args})
}

// marshal writes v as JSON without HTML escapes, indented by unit after
// the first line's prefix, or on one line as people write it ("a": 1,
// "b": 2) when unit is "".
func marshal(v any, prefix, unit string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if unit != "" {
		enc.SetIndent(prefix, unit)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out := bytes.TrimRight(b.Bytes(), "\n")
	if unit == "" {
		out = spaced(out)
	}
	return out, nil
}

// spaced puts a space after each comma and colon of compact JSON.
func spaced(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/8)
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			end := skipValue(b, i)
			out = append(out, b[i:end]...)
			i = end - 1
		case ',', ':':
			out = append(out, b[i], ' ')
		default:
			out = append(out, b[i])
		}
	}
	return out
}

// editJSON sets mcpServers.polyrepl's fields in the JSON document b to
// entry's, splicing bytes so that the rest of the file stays as it was.
func editJSON(b []byte, entry object) ([]byte, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		b = []byte("{}\n")
	}
	var before any
	if err := json.Unmarshal(b, &before); err != nil {
		return nil, &ParseError{Why: "it is not valid JSON (" + jsonProblem(b, err) + "); fix it, or move it aside so that polyrepl starts a new one, and run this again"}
	}
	top := skipSpace(b, 0)
	if b[top] != '{' {
		return nil, &ParseError{Why: "it holds a JSON " + jsonKind(b[top]) + ", not an object; fix it, or move it aside, and run this again"}
	}
	unit := indentUnit(b, top)
	if ms, _ := members(b, top); len(ms) > 0 && !multiline(b) {
		unit = "" // a one-line document stays on one line
	}
	want := object{{Name, entry}}
	// Each round mends one thing and starts over on the new bytes, so
	// that every offset used is fresh.
	for range 2*len(entry) + 4 {
		servers, err := findMember(b, top, "mcpServers")
		if err != nil {
			return nil, err
		}
		if servers == nil {
			b = insertMember(b, top, "mcpServers", want, unit)
			continue
		}
		if b[servers.valStart] != '{' {
			if b[servers.valStart] == 'n' { // null: as if absent
				b = replaceValue(b, servers, want, unit)
				continue
			}
			return nil, &ParseError{Why: "its \"mcpServers\" is a " + jsonKind(b[servers.valStart]) + ", not an object; fix it by hand"}
		}
		mine, err := findMember(b, servers.valStart, Name)
		if err != nil {
			return nil, err
		}
		if mine == nil {
			b = insertMember(b, servers.valStart, Name, entry, unit)
			continue
		}
		if b[mine.valStart] != '{' {
			b = replaceValue(b, mine, entry, unit)
			continue
		}
		mended := false
		for _, f := range entry {
			m, err := findMember(b, mine.valStart, f.key)
			if err != nil {
				return nil, err
			}
			if m == nil {
				b, mended = insertMember(b, mine.valStart, f.key, f.value, unit), true
				break
			}
			if !sameJSON(b[m.valStart:m.valEnd], f.value) {
				b, mended = replaceValue(b, m, f.value, unit), true
				break
			}
		}
		if !mended {
			return b, verifyJSON(before, b, entry)
		}
	}
	return nil, errors.New("internal error: the JSON edit did not settle")
}

// verifyJSON checks that after differs from before only in polyrepl's
// entry, which now holds entry's fields.
func verifyJSON(before any, after []byte, entry object) error {
	var got any
	if err := json.Unmarshal(after, &got); err != nil {
		return fmt.Errorf("internal error: the edit made invalid JSON (%v); nothing was changed", err)
	}
	want := normalJSON(before)
	top := want.(map[string]any)
	servers, ok := top["mcpServers"].(map[string]any)
	if !ok {
		servers = map[string]any{}
		top["mcpServers"] = servers
	}
	mine, ok := servers[Name].(map[string]any)
	if !ok {
		mine = map[string]any{}
		servers[Name] = mine
	}
	for _, f := range entry {
		mine[f.key] = normalJSON(f.value)
	}
	if !reflect.DeepEqual(got, want) {
		return errors.New("internal error: the edit would have changed more than polyrepl's entry; nothing was changed")
	}
	return nil
}

// normalJSON is v as encoding/json decodes it into an any.
func normalJSON(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

// sameJSON reports whether raw means the same as v.
func sameJSON(raw []byte, v any) bool {
	var got any
	if json.Unmarshal(raw, &got) != nil {
		return false
	}
	return reflect.DeepEqual(got, normalJSON(v))
}

// member is one key and value of an object, as offsets into the document.
type member struct {
	key              string
	keyStart         int // the key's opening quote
	valStart, valEnd int
}

// members lists the object at b[start] ('{') and returns the offset of
// its closing brace. b must be valid JSON.
func members(b []byte, start int) ([]member, int) {
	var out []member
	i := skipSpace(b, start+1)
	for b[i] != '}' {
		ks := i
		i = skipValue(b, i)
		var key string
		json.Unmarshal(b[ks:i], &key)
		i = skipSpace(b, i)
		i = skipSpace(b, i+1) // the colon
		vs := i
		i = skipValue(b, i)
		out = append(out, member{key: key, keyStart: ks, valStart: vs, valEnd: i})
		i = skipSpace(b, i)
		if b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return out, i
}

// findMember finds key in the object at b[start]; nil if it is absent,
// an error if it is there twice (which of the two a client reads is its
// own business).
func findMember(b []byte, start int, key string) (*member, error) {
	ms, _ := members(b, start)
	var found *member
	for i := range ms {
		if ms[i].key == key {
			if found != nil {
				return nil, &ParseError{Why: fmt.Sprintf("it has the key %q twice in one object; remove one by hand", key)}
			}
			found = &ms[i]
		}
	}
	return found, nil
}

// insertMember adds key: v as the last member of the object at b[start],
// laid out as the object's other members are.
func insertMember(b []byte, start int, key string, v any, unit string) []byte {
	ms, end := members(b, start)
	k, _ := marshal(key, "", "")
	if unit == "" {
		val, _ := marshal(v, "", "")
		if len(ms) == 0 {
			return splice(b, start+1, end, string(k)+": "+string(val))
		}
		last := ms[len(ms)-1]
		return splice(b, last.valEnd, last.valEnd, ", "+string(k)+": "+string(val))
	}
	if len(ms) == 0 {
		outer := lineIndent(b, start)
		inner := outer + unit
		val, _ := marshal(v, inner, unit)
		text := "\n" + inner + string(k) + ": " + string(val) + "\n" + outer
		return splice(b, start+1, end, text)
	}
	last := ms[len(ms)-1]
	before := b[:last.keyStart]
	gap := before[bytes.LastIndexAny(before, "{,")+1:]
	if nl := bytes.LastIndexByte(gap, '\n'); nl >= 0 {
		ind := string(gap[nl+1:])
		val, _ := marshal(v, ind, unit)
		return splice(b, last.valEnd, last.valEnd, ",\n"+ind+string(k)+": "+string(val))
	}
	val, _ := marshal(v, "", "")
	return splice(b, last.valEnd, last.valEnd, ", "+string(k)+": "+string(val))
}

// replaceValue puts v in place of m's value.
func replaceValue(b []byte, m *member, v any, unit string) []byte {
	ind := lineIndent(b, m.keyStart)
	old := b[m.valStart:m.valEnd]
	if !bytes.ContainsRune(old, '\n') && (old[0] == '[' || old[0] == '{') {
		unit = "" // keep a one-line list or object on one line
	}
	val, _ := marshal(v, ind, unit)
	return splice(b, m.valStart, m.valEnd, string(val))
}

func splice(b []byte, from, to int, text string) []byte {
	out := make([]byte, 0, len(b)+len(text))
	out = append(out, b[:from]...)
	out = append(out, text...)
	return append(out, b[to:]...)
}

// multiline reports whether the document is laid out on several lines.
func multiline(b []byte) bool {
	return bytes.Count(bytes.TrimSpace(b), []byte("\n")) > 0
}

// insertMember and replaceValue take unit "" to mean "on one line".

// indentUnit is one level of the document's indentation, as its top
// object's first member shows it; two spaces when it shows none.
func indentUnit(b []byte, top int) string {
	ms, _ := members(b, top)
	if len(ms) == 0 {
		return "  "
	}
	gap := b[top+1 : ms[0].keyStart]
	nl := bytes.LastIndexByte(gap, '\n')
	if nl < 0 || nl == len(gap)-1 {
		return "  "
	}
	return strings.TrimPrefix(string(gap[nl+1:]), lineIndent(b, top))
}

// lineIndent is the whitespace that begins the line holding b[i].
func lineIndent(b []byte, i int) string {
	start := bytes.LastIndexByte(b[:i], '\n') + 1
	end := start
	for end < len(b) && (b[end] == ' ' || b[end] == '\t') {
		end++
	}
	return string(b[start:end])
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the offset just after the value at b[i], which is
// valid JSON.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		for i++; ; i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch b[i] {
			case '"':
				i = skipValue(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
	}
	for i < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[i])) {
		i++
	}
	return i
}

func jsonKind(c byte) string {
	switch c {
	case '[':
		return "list"
	case '"':
		return "string"
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	}
	return "number"
}

// jsonProblem says where and what is wrong with b, by line and column.
func jsonProblem(b []byte, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err.Error()
	}
	off := int(se.Offset) - 1 // the offset is just after the bad byte
	off = max(0, min(off, len(b)))
	line := bytes.Count(b[:off], []byte("\n")) + 1
	col := off - bytes.LastIndexByte(b[:off], '\n')
	return fmt.Sprintf("line %d, column %d: %v", line, col, se)
}
