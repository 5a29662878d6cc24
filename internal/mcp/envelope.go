package mcp

import "bytes"

// envelope is what the MCP server's line guard reads of a JSON-RPC line:
// its top-level "id" and "method" as they are written, and whether it has
// a "result" or an "error" — enough to know the requests in flight and
// their answers without decoding a line's params or result (the SDK
// decodes every line, once). A line that is not one JSON object yields
// what was found before it went wrong; the guard's full check answers
// such lines.
type envelope struct {
	id     []byte // raw JSON, nil if absent
	method []byte // raw JSON string, quotes and all; nil if absent
	answer bool   // a "result" or "error" key
}

// request says whether the line is a request awaiting an answer: a
// method and an id that is a string or a number.
func (e envelope) request() bool { return e.method != nil && usableIDBytes(e.id) }

// response says whether the line answers a request.
func (e envelope) response() bool { return e.method == nil && e.answer && usableIDBytes(e.id) }

func usableIDBytes(id []byte) bool {
	return len(id) > 0 && (id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9')
}

// readEnvelope scans line's top-level keys. Values it does not keep are
// skipped, strings by searching for their closing quote, so a long
// argument or result costs a scan, not a decode.
func readEnvelope(line []byte) envelope {
	var e envelope
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return e
	}
	i++
	for {
		i = skipSpace(line, i)
		if i >= len(line) || line[i] != '"' {
			return e
		}
		end := skipString(line, i)
		if end < 0 {
			return e
		}
		key := line[i+1 : end-1]
		i = skipSpace(line, end)
		if i >= len(line) || line[i] != ':' {
			return e
		}
		i = skipSpace(line, i+1)
		end = skipValue(line, i)
		if end < 0 {
			return e
		}
		switch string(key) {
		case "id":
			e.id = line[i:end]
		case "method":
			if line[i] == '"' {
				e.method = line[i:end]
			} else {
				e.method = nil
			}
		case "result", "error":
			e.answer = true
		}
		i = skipSpace(line, end)
		if i >= len(line) || line[i] != ',' {
			return e
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"'),
// or -1 if it does not end.
func skipString(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		q := i + j
		n := 0 // backslashes before the quote
		for k := q - 1; k >= i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

// skipValue returns the index after the value starting at b[i], or -1 if
// it does not end.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	start := i
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\r' && b[i] != '\n' {
		i++
	}
	if i == start {
		return -1
	}
	return i
}
