package terminal

import "bytes"

// cellNames rewrites the paths of cell files in a REPL's output to
// "<cell N>", the name the worker runtimes give cells, so that an error
// points at the cell and not at a temporary file: GHCi's
// "/run/…/ghci-cells-123/cell_3.hs:1:7: error:" reads "<cell 3>:1:7:
// error:". Output that may begin a path but ends before it is decided is
// held until the next write or flush.
type cellNames struct {
	prefix []byte // the cell directory and "/cell_"
	ext    []byte // the cell files' extension, ".hs"
	held   []byte
}

func newCellNames(dir, ext string) *cellNames {
	return &cellNames{prefix: []byte(dir + "/cell_"), ext: []byte(ext)}
}

// maxDigits bounds a cell number, so that what is held stays small.
const maxDigits = 9

// rewrite returns b, after what was held, with cell paths rewritten; it
// holds back a tail that may be the start of one.
func (c *cellNames) rewrite(b []byte) []byte {
	if len(c.held) == 0 && !bytes.Contains(b, c.prefix) && partialSuffix(b, c.prefix) == 0 {
		return b // most output: passed on as it came, not copied
	}
	data := append(c.held, b...)
	c.held = nil
	var out []byte
	for {
		i := bytes.Index(data, c.prefix)
		if i < 0 {
			break
		}
		j := i + len(c.prefix)
		k := j
		for k < len(data) && k-j <= maxDigits && data[k] >= '0' && data[k] <= '9' {
			k++
		}
		rest := data[k:]
		switch {
		case k-j > maxDigits, k == j && k < len(data):
			// Not a cell number: the prefix was text like any other.
		case k == len(data), len(rest) < len(c.ext) && bytes.HasPrefix(c.ext, rest):
			// Undecided until more comes.
			out = append(out, data[:i]...)
			c.held = append([]byte(nil), data[i:]...)
			return out
		case bytes.HasPrefix(rest, c.ext):
			out = append(out, data[:i]...)
			out = append(out, "<cell "...)
			out = append(out, data[j:k]...)
			out = append(out, '>')
			data = rest[len(c.ext):]
			continue
		}
		out = append(out, data[:j]...)
		data = data[j:]
	}
	h := partialSuffix(data, c.prefix)
	out = append(out, data[:len(data)-h]...)
	if h > 0 {
		c.held = append([]byte(nil), data[len(data)-h:]...)
	}
	return out
}

// flush returns what is held: the output ended (a mark came), so it is
// not a path.
func (c *cellNames) flush() []byte {
	h := c.held
	c.held = nil
	return h
}

// partialSuffix is the length of the longest proper prefix of p that b
// ends with.
func partialSuffix(b, p []byte) int {
	for h := min(len(p)-1, len(b)); h > 0; h-- {
		if bytes.HasSuffix(b, p[:h]) {
			return h
		}
	}
	return 0
}
