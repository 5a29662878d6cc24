package view

import (
	"net"
	"strings"
	"testing"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/client"
)

// The view listens on loopback only, says a taken port in words, and
// prints an address with a token of its own.
func TestListen(t *testing.T) {
	ln, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	if _, err := Listen(port); err == nil || !strings.Contains(err.Error(), "is taken by another program") {
		t.Errorf("a taken port: %v", err)
	}
	s, err := New(&client.Client{}, api.Client{Who: strings.Repeat("a", 500), How: How}, ln)
	if err != nil {
		t.Fatal(err)
	}
	if u := s.URL("etl"); !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.HasSuffix(u, "#etl") || !strings.Contains(u, "/?token="+s.g.token) {
		t.Errorf("URL: %s", u)
	}
	if len([]rune(s.who.Who)) > api.LabelLimit+100 {
		t.Errorf("the label is not bounded: %d characters", len(s.who.Who))
	}
	any, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Skip(err)
	}
	defer any.Close()
	if _, err := New(&client.Client{}, api.Client{}, any); err == nil {
		t.Errorf("a listener on every address was taken")
	}
}
