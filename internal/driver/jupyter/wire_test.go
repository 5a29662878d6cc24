package jupyter

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func sample(t *testing.T) *Msg {
	t.Helper()
	id := identity{session: "s1", username: "me"}
	m, err := id.request("execute_request", map[string]any{"code": "1+1 # héllo"})
	if err != nil {
		t.Fatal(err)
	}
	m.Parent = Header{MsgID: "p1", MsgType: "kernel_info_request"}
	m.Buffers = [][]byte{{0, 1, 2}, []byte("buf")}
	return m
}

func same(t *testing.T, what string, got, want *Msg) {
	t.Helper()
	if got.Header != want.Header || got.Parent != want.Parent || !bytes.Equal(got.Content, want.Content) ||
		!slices.EqualFunc(got.Buffers, want.Buffers, bytes.Equal) {
		t.Errorf("%s: got %+v (content %s), want %+v (content %s)", what, got, got.Content, want, want.Content)
	}
}

// TestZMQSigned: a message goes to frames and back, signed; a changed
// byte or another key is refused, and routing identities before the
// delimiter are skipped.
func TestZMQSigned(t *testing.T) {
	m := sample(t)
	s := signer{key: []byte("secret")}
	frames, err := s.encodeZMQ(m)
	if err != nil {
		t.Fatal(err)
	}
	if string(frames[0]) != delimiter || len(frames[1]) != 64 {
		t.Fatalf("frames start %q, signature %q", frames[0], frames[1])
	}
	got, err := s.decodeZMQ(append([][]byte{[]byte("routing-id")}, frames...), nil)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "round trip", got, m)

	tampered := slices.Clone(frames)
	tampered[5] = []byte(strings.Replace(string(frames[5]), "1+1", "2+2", 1))
	if _, err := s.decodeZMQ(tampered, nil); err != errBadSignature {
		t.Errorf("a changed content: %v, want errBadSignature", err)
	}
	if _, err := (signer{key: []byte("other")}).decodeZMQ(frames, nil); err != errBadSignature {
		t.Errorf("another key: %v, want errBadSignature", err)
	}
	if _, err := s.decodeZMQ(frames[:4], nil); err == nil {
		t.Error("a message cut short was taken")
	}
	// With no key the protocol signs nothing and checks nothing.
	plain, _ := signer{}.encodeZMQ(m)
	if len(plain[1]) != 0 {
		t.Errorf("no key, signature %q", plain[1])
	}
}

// TestWSFramings: the JSON text framing and the v1 binary framing carry
// a message and its channel both ways; the legacy binary framing (JSON
// with buffers) is read.
func TestWSFramings(t *testing.T) {
	m := sample(t)
	b, err := encodeWSJSON("shell", m)
	if err != nil {
		t.Fatal(err)
	}
	ch, got, err := decodeWSJSON(b)
	if err != nil || ch != "shell" {
		t.Fatalf("JSON: %q %v", ch, err)
	}
	noBuf := *m
	noBuf.Buffers = nil
	same(t, "JSON", got, &noBuf)

	b, err = encodeWSv1("iopub", m)
	if err != nil {
		t.Fatal(err)
	}
	if n := binary.LittleEndian.Uint64(b); n != 8 { // channel, 4 parts, 2 buffers, the end
		t.Errorf("v1 offset count %d, want 8", n)
	}
	ch, got, err = decodeWSv1(b)
	if err != nil || ch != "iopub" {
		t.Fatalf("v1: %q %v", ch, err)
	}
	same(t, "v1", got, m)

	// Legacy: a big-endian count, offsets, the JSON, the buffers.
	js, _ := encodeWSJSON("iopub", m)
	parts := [][]byte{js, m.Buffers[0], m.Buffers[1]}
	head := make([]byte, 4*(len(parts)+1))
	binary.BigEndian.PutUint32(head, uint32(len(parts)))
	off := len(head)
	for i, p := range parts {
		binary.BigEndian.PutUint32(head[4*(i+1):], uint32(off))
		off += len(p)
	}
	legacy := append(head, bytes.Join(parts, nil)...)
	ch, got, err = decodeWSLegacyBinary(legacy)
	if err != nil || ch != "iopub" {
		t.Fatalf("legacy: %q %v", ch, err)
	}
	same(t, "legacy", got, m)
}

// TestWSHostileFrames: frames whose offsets lie are refused, never a
// panic.
func TestWSHostileFrames(t *testing.T) {
	m := sample(t)
	good, _ := encodeWSv1("shell", m)
	cases := map[string][]byte{
		"empty":      {},
		"short":      good[:5],
		"huge count": append(binary.LittleEndian.AppendUint64(nil, 1<<40), good[8:]...),
		"cut":        good[:len(good)-10],
	}
	backwards := slices.Clone(good)
	binary.LittleEndian.PutUint64(backwards[16:], 1<<20)
	cases["offset past the end"] = backwards
	for what, b := range cases {
		if _, _, err := decodeWSv1(b); err == nil {
			t.Errorf("v1 %s: taken", what)
		}
		if _, _, err := decodeWSLegacyBinary(b); err == nil && what != "cut" {
			t.Errorf("legacy %s: taken", what)
		}
	}
	if _, _, err := decodeWSJSON([]byte(`{"channel":"shell"}`)); err == nil {
		t.Error("a JSON frame with no header was taken")
	}
}

func writeSpec(t *testing.T, root, name, body string) {
	t.Helper()
	dir := filepath.Join(root, "kernels", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kernel.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSpecs: kernels are found where Jupyter looks, an earlier directory
// hiding the same name in a later one; a broken kernel.json is reported
// by name; an unknown kernel's error lists the others and where polyrepl
// looked.
func TestSpecs(t *testing.T) {
	first, second, home := t.TempDir(), t.TempDir(), t.TempDir()
	writeSpec(t, first, "k", `{"argv": ["first", "{connection_file}"], "display_name": "First", "language": "python"}`)
	writeSpec(t, second, "k", `{"argv": ["second"], "language": "python"}`)
	writeSpec(t, second, "other", `{"argv": ["x", "-f", "{connection_file}", "{resource_dir}"], "language": "R", "interrupt_mode": "message"}`)
	writeSpec(t, second, "broken", `{"argv": [`)
	writeSpec(t, second, "noargv", `{"language": "R"}`)
	writeSpec(t, filepath.Join(home, ".local", "share", "jupyter"), "mine", `{"argv": ["m"]}`)
	env := []string{"JUPYTER_PATH=" + first + string(filepath.ListSeparator) + second, "HOME=" + home, "PATH=/nonexistent"}

	dirs := SpecDirs(env, "/")
	if len(dirs) < 3 || dirs[0] != filepath.Join(first, "kernels") || dirs[1] != filepath.Join(second, "kernels") ||
		dirs[2] != filepath.Join(home, ".local", "share", "jupyter", "kernels") {
		t.Errorf("dirs %v: want JUPYTER_PATH's, then the user's", dirs)
	}
	specs, problems := Specs(env, "/")
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	for _, want := range []string{"k", "mine", "other"} {
		if !slices.Contains(names, want) {
			t.Errorf("kernels %v lack %s", names, want)
		}
	}
	if len(problems) != 2 {
		t.Errorf("problems %v, want the broken and the argv-less kernel", problems)
	}
	k, err := FindSpec("k", env, "/")
	if err != nil || k.Argv[0] != "first" || k.DisplayName != "First" {
		t.Errorf("k: %+v %v, want the first directory's", k, err)
	}
	o, _ := FindSpec("other", env, "/")
	if got := o.args("/run/c.json"); !slices.Equal(got, []string{"x", "-f", "/run/c.json", o.Dir}) || o.InterruptMode != "message" {
		t.Errorf("other's args %v, mode %q", got, o.InterruptMode)
	}
	if _, err := FindSpec("broken", env, "/"); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("broken: %v", err)
	}
	_, err = FindSpec("nosuch", env, "/")
	if err == nil || !strings.Contains(err.Error(), "k, mine") || !strings.Contains(err.Error(), first) {
		t.Errorf("an unknown kernel: %v", err)
	}
	for _, bad := range []string{"../etc", "a/b", "", ".."} {
		if _, err := FindSpec(bad, env, "/"); err == nil || !strings.Contains(err.Error(), "not a kernel name") {
			t.Errorf("name %q: %v", bad, err)
		}
	}
}

// TestGatewayRules: http:// only to this machine unless allowed; the
// token from the variable or a file only its owner reads.
func TestGatewayRules(t *testing.T) {
	for _, c := range []struct {
		url   string
		allow bool
		ok    bool
	}{
		{"http://127.0.0.1:8888", false, true},
		{"http://localhost:8888/", false, true},
		{"http://[::1]:8888", false, true},
		{"https://gateway.example", false, true},
		{"http://gateway.example:8888", false, false},
		{"http://gateway.example:8888", true, true},
		{"ftp://gateway.example", false, false},
		{"gateway.example:8888", false, false},
	} {
		_, err := newGateway(c.url, c.allow, nil)
		if (err == nil) != c.ok {
			t.Errorf("%s (allow http %v): %v", c.url, c.allow, err)
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	os.WriteFile(file, []byte(" tok \n"), 0o644)
	if _, err := gatewayToken([]string{TokenFileVar + "=" + file}); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a token file others read: %v", err)
	}
	os.Chmod(file, 0o600)
	if tok, err := gatewayToken([]string{TokenFileVar + "=" + file}); tok != "tok" || err != nil {
		t.Errorf("token file: %q %v", tok, err)
	}
	if tok, _ := gatewayToken([]string{TokenFileVar + "=" + file, TokenVar + "=direct"}); tok != "direct" {
		t.Errorf("the variable comes first: %q", tok)
	}
	g, _ := newGateway("https://user:pw@gateway.example/base/", false, nil)
	if w := g.where(); strings.Contains(w, "pw") {
		t.Errorf("where %q shows a password", w)
	}
}

// TestMIMEAndErrors: the helpers that read what kernels send.
func TestMIMEAndErrors(t *testing.T) {
	if s := str(json.RawMessage(`["a\n", "b"]`)); s != "a\nb" {
		t.Errorf("a text in lines: %q", s)
	}
	if e := (errorContent{Ename: "E", Evalue: "\x1b[31mboom\x1b[0m", Traceback: []string{"\x1b[1mline\x1b[0m", "two"}}).cellError(); e.Message != "boom" || e.Traceback != "line\ntwo" {
		t.Errorf("colours left in %+v", e)
	}
}
