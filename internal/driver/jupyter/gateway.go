package jupyter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/polyrepl/polyrepl/internal/api"
	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// The variables a session's environment may set for its gateway.
const (
	TokenVar         = "POLYREPL_GATEWAY_TOKEN"      // the token itself
	TokenFileVar     = "POLYREPL_GATEWAY_TOKEN_FILE" // a file holding it, 0600
	gatewayTimeout   = 30 * time.Second              // one REST request
	gatewayConnect   = 10 * time.Second              // a TCP (and TLS) connection
	pingEvery        = 10 * time.Second              // WebSocket pings, to find a stalled gateway
	reconnectFor     = 10 * time.Second              // how long a lost channels connection is tried again
	maxGatewayFrame  = 256 << 20                     // the largest message taken from a gateway (spooled to disk past bigFrame)
	maxGatewayAnswer = 4 << 20                       // the largest REST answer read
	maxSaid          = 1000                          // characters of a gateway's error message quoted
	maxGatewayID     = 200                           // characters of a kernel id the gateway gives
	maxListed        = 20                            // kernel names listed in an error
)

// gateway is a Jupyter Server, Kernel Gateway or Enterprise Gateway: the
// REST API that starts, interrupts and ends kernels.
type gateway struct {
	base  *url.URL
	token string
	http  *http.Client
}

// newGateway checks the URL and finds the token. http:// is allowed only
// to this machine's loopback, unless allowHTTP: the token and every cell
// would cross the network in clear.
func newGateway(raw string, allowHTTP bool, env []string) (*gateway, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("the gateway %q is not an http:// or https:// URL: give one such as https://gateway.example:8888", raw)
	}
	if u.Scheme == "http" && !allowHTTP && !loopback(u.Hostname()) {
		return nil, fmt.Errorf("the gateway %s is http:// to another machine: its token and every cell would cross the network unencrypted; use https://, or pass --gateway-http if the network is yours", u.Redacted())
	}
	token, err := gatewayToken(env)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: gatewayConnect, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   gatewayConnect,
		ResponseHeaderTimeout: gatewayTimeout,
		IdleConnTimeout:       90 * time.Second,
	}
	return &gateway{base: u, token: token, http: &http.Client{Transport: tr}}, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// gatewayToken is the token from the session's environment: the variable,
// else the file it names, which must be the user's alone.
func gatewayToken(env []string) (string, error) {
	if t := driver.Getenv(env, TokenVar); t != "" {
		return t, nil
	}
	path := driver.Getenv(env, TokenFileVar)
	if path == "" {
		return "", nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("cannot read the gateway token file $%s: %w", TokenFileVar, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("the gateway token file %s can be read by others (mode %o): chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("cannot read the gateway token file $%s: %w", TokenFileVar, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// where names the gateway for people: its URL without credentials.
func (g *gateway) where() string { return g.base.Redacted() }

// call makes one REST request and reads its JSON answer into out (if not
// nil); every failure says what the gateway did and what to do.
func (g *gateway) call(ctx context.Context, method, path string, body, out any) error {
	ctx, cancel := context.WithTimeout(ctx, gatewayTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	rq, err := http.NewRequestWithContext(ctx, method, g.base.String()+path, rd)
	if err != nil {
		return err
	}
	rq.Header.Set("Content-Type", "application/json")
	if g.token != "" {
		rq.Header.Set("Authorization", "token "+g.token)
	}
	resp, err := g.http.Do(rq)
	if err != nil {
		return g.unreachable(ctx, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxGatewayAnswer))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		how := "set $" + TokenVar + " (or $" + TokenFileVar + ") to the server's token"
		if g.token != "" {
			how = "the token in $" + TokenVar + " (or $" + TokenFileVar + ") is not the server's: give the right one"
		}
		return fmt.Errorf("the gateway %s refused polyrepl (%s on %s %s): %s", g.where(), resp.Status, method, path, how)
	case resp.StatusCode >= 300:
		return &statusError{code: resp.StatusCode, msg: fmt.Sprintf("the gateway %s answered %s to %s %s%s", g.where(), resp.Status, method, path, said(b))}
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("the gateway %s answered %s %s with something that is not the Jupyter API's JSON (%v): is the URL a Jupyter Server, Kernel Gateway or Enterprise Gateway?", g.where(), method, path, err)
		}
	}
	return nil
}

// statusError is an HTTP answer that was not a success.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

// said quotes the start of what a gateway said with an error.
func said(b []byte) string {
	var j struct {
		Message string `json:"message"`
		Reason  string `json:"reason"`
	}
	if json.Unmarshal(b, &j) == nil && (j.Message != "" || j.Reason != "") {
		return ": " + strings.TrimSpace(label(j.Reason, maxLabelChars)+" "+label(j.Message, maxSaid))
	}
	if t := strings.TrimSpace(string(b)); t != "" {
		return ": " + label(t, 300)
	}
	return ""
}

func (g *gateway) unreachable(ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("the gateway %s did not answer in time: is it overloaded or stopped? (%v)", g.where(), err)
	}
	return fmt.Errorf("cannot reach the gateway %s: %w; is it running, and is the URL right?", g.where(), err)
}

// gatewaySpec is one kernel a gateway offers.
type gatewaySpec struct {
	Name string `json:"name"`
	Spec struct {
		DisplayName   string `json:"display_name"`
		Language      string `json:"language"`
		InterruptMode string `json:"interrupt_mode"`
	} `json:"spec"`
}

// specs lists the gateway's kernels.
func (g *gateway) specs(ctx context.Context) (map[string]gatewaySpec, error) {
	var r struct {
		Default     string                 `json:"default"`
		KernelSpecs map[string]gatewaySpec `json:"kernelspecs"`
	}
	if err := g.call(ctx, http.MethodGet, "/api/kernelspecs", nil, &r); err != nil {
		return nil, err
	}
	return r.KernelSpecs, nil
}

// GatewayRuntimes lists the kernels a gateway offers, as runtimes.
func GatewayRuntimes(ctx context.Context, raw string, allowHTTP bool, env []string) ([]api.RuntimeInfo, error) {
	g, err := newGateway(raw, allowHTTP, env)
	if err != nil {
		return nil, err
	}
	specs, err := g.specs(ctx)
	if err != nil {
		return nil, err
	}
	var out []api.RuntimeInfo
	for name, s := range specs {
		r := api.RuntimeInfo{
			Name: runtimePrefix + label(name, maxLabelChars), Family: Family, Exe: g.where(), Path: g.where(), Found: true,
			Display: label(s.Spec.DisplayName, maxLabelChars), Language: label(s.Spec.Language, maxLabelChars), Needs: "the gateway " + g.where(),
		}
		if !validName(name) {
			r.Found, r.Problem = false, "the gateway names this kernel with characters a kernel name cannot have (letters, digits, '.', '_' and '-')"
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// startGateway starts kernel name on the gateway spec names and connects
// to its channels.
func startGateway(ctx context.Context, spec driver.Spec, name string, h driver.Handler) (*kernel, error) {
	g, err := newGateway(spec.Gateway, spec.GatewayHTTP, spec.Env)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, driver.StartTimeout)
	defer cancel()
	specs, err := g.specs(ctx)
	if err != nil {
		return nil, err
	}
	ks, ok := specs[name]
	if !ok {
		var names []string
		for n := range specs {
			names = append(names, label(n, maxLabelChars))
		}
		sort.Strings(names)
		if len(names) > maxListed {
			names = append(names[:maxListed], fmt.Sprintf("and %d more", len(names)-maxListed))
		}
		return nil, fmt.Errorf("the gateway %s has no kernel named %q; it offers %s", g.where(), name, strings.Join(names, ", "))
	}
	env := map[string]string{"KERNEL_USERNAME": driver.Getenv(spec.Env, "USER")}
	for _, kv := range spec.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "KERNEL_") {
			env[k] = v
		}
	}
	var started struct {
		ID string `json:"id"`
	}
	if err := g.call(ctx, http.MethodPost, "/api/kernels", map[string]any{"name": name, "env": env}, &started); err != nil {
		return nil, err
	}
	if started.ID == "" {
		return nil, fmt.Errorf("the gateway %s started a kernel but did not say its id", g.where())
	}
	if n := utf8.RuneCountInString(started.ID); n > maxGatewayID {
		g.deleteKernel(started.ID)
		return nil, fmt.Errorf("the gateway %s gave its kernel an id of %d characters (%s), more than the %d polyrepl takes: is it a Jupyter gateway?",
			g.where(), n, label(started.ID, 40), maxGatewayID)
	}
	k, err := newKernel(h, spec)
	if err != nil {
		g.deleteKernel(started.ID)
		return nil, err
	}
	t := &wsTransport{g: g, id: started.ID, k: k, session: k.id.session, closing: make(chan struct{})}
	k.t, k.tree = t, proc.Tree{Cookie: spec.Cookie}
	k.exe, k.where = g.where(), fmt.Sprintf("%s (kernel %s)", g.where(), started.ID)
	k.endedBy = func(time.Duration) error {
		t.close()
		err := g.deleteKernel(started.ID)
		select {
		case k.dead <- driver.Exit{Code: 0, At: time.Now()}:
		default:
		}
		return err
	}
	fail := func(err error) error {
		t.close()
		g.deleteKernel(started.ID)
		close(k.done)
		return err
	}
	if err := t.connect(ctx); err != nil {
		return nil, fail(err)
	}
	go t.read()
	if err := k.handshake(ctx); err != nil {
		return nil, fail(fmt.Errorf("the kernel %s on the gateway %s did not start: %w", name, g.where(), err))
	}
	k.note = joinNote(label(ks.Spec.DisplayName, maxLabelChars)+" on "+g.where(), k.note)
	go t.ping()
	go k.loop()
	return k, nil
}

// deleteKernel ends a kernel on the gateway.
func (g *gateway) deleteKernel(id string) error {
	err := g.call(context.Background(), http.MethodDelete, "/api/kernels/"+url.PathEscape(id), nil, nil)
	var se *statusError
	if errors.As(err, &se) && se.code == http.StatusNotFound {
		return nil // gone already
	}
	return err
}

// wsTransport carries a gateway kernel's messages over its channels
// WebSocket, in the v1 binary framing if the gateway speaks it, else in
// JSON text.
type wsTransport struct {
	g       *gateway
	id      string // the kernel's id on the gateway
	session string
	k       *kernel

	mu      sync.Mutex
	conn    *websocket.Conn
	binary  bool
	stalled bool // the connection was closed for a ping unanswered
	closed  bool
	closing chan struct{}
}

// connect opens the channels WebSocket, asking for the binary framing.
func (t *wsTransport) connect(ctx context.Context) error {
	u := *t.g.base
	u.Scheme = map[string]string{"http": "ws", "https": "wss"}[u.Scheme]
	u.Path += "/api/kernels/" + url.PathEscape(t.id) + "/channels"
	u.RawQuery = url.Values{"session_id": {t.session}}.Encode()
	hdr := http.Header{}
	if t.g.token != "" {
		hdr.Set("Authorization", "token "+t.g.token)
	}
	ctx, cancel := context.WithTimeout(ctx, gatewayTimeout)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{
		HTTPClient: t.g.http, HTTPHeader: hdr, Subprotocols: []string{v1Protocol},
	})
	if err != nil {
		if resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
			return fmt.Errorf("the gateway %s refused the kernel's channels (%s): check $%s", t.g.where(), resp.Status, TokenVar)
		}
		return fmt.Errorf("cannot open the channels of kernel %s on the gateway %s: %v", t.id, t.g.where(), err)
	}
	c.SetReadLimit(-1) // readWS bounds what is held, and what is taken
	t.mu.Lock()
	t.conn, t.binary = c, c.Subprotocol() == v1Protocol
	t.mu.Unlock()
	return nil
}

// read passes on what the gateway sends; when the connection breaks it
// is opened again (the gateway keeps a session's messages meanwhile), and
// when it cannot be, the kernel is reported lost, with why.
func (t *wsTransport) read() {
	for {
		t.mu.Lock()
		c, bin := t.conn, t.binary
		t.mu.Unlock()
		typ, rd, err := c.Reader(context.Background())
		var fr *wsFrame
		if err == nil {
			fr, err = readWS(rd, t.k.spool)
		}
		var dropped *frameDropped
		if errors.As(err, &dropped) {
			if !t.k.pass(inbound{note: dropped.Error()}) {
				return
			}
			continue
		}
		if err == nil {
			var ch string
			var m *Msg
			if fr.path != "" {
				ch, m, err = decodeSpooledWS(fr, typ == websocket.MessageText, bin)
			} else {
				ch, m, err = t.decode(typ, fr.b, bin)
			}
			if err != nil {
				fr.remove()
				log.Printf("kernel %s on the gateway %s: %v", t.id, t.g.where(), err)
				continue
			}
			if !t.k.pass(inbound{ch: ch, m: m, cost: fr.size}) {
				return
			}
			continue
		}
		select {
		case <-t.closing:
			return
		default:
		}
		c.CloseNow() // broken: its resources go before a new one is opened
		t.mu.Lock()
		if t.stalled {
			err = fmt.Errorf("stalled: a ping went unanswered for %s", pingEvery)
			t.stalled = false
		}
		t.mu.Unlock()
		if why := t.reconnect(err); why != nil {
			t.k.dead <- driver.Exit{Code: -1, Err: why, At: time.Now()}
			return
		}
	}
}

func (t *wsTransport) decode(typ websocket.MessageType, b []byte, bin bool) (string, *Msg, error) {
	switch {
	case typ == websocket.MessageText:
		return decodeWSJSON(b)
	case bin:
		return decodeWSv1(b)
	default:
		return decodeWSLegacyBinary(b)
	}
}

// reconnect opens the channels again after a break, for up to
// reconnectFor; the error says what was lost and what to do.
func (t *wsTransport) reconnect(broke error) error {
	deadline := time.Now().Add(reconnectFor)
	var err error
	for time.Now().Before(deadline) {
		select {
		case <-t.closing:
			return nil
		case <-time.After(500 * time.Millisecond):
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err = t.g.call(ctx, http.MethodGet, "/api/kernels/"+url.PathEscape(t.id), nil, nil)
		if err == nil {
			err = t.connect(ctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		var se *statusError
		if errors.As(err, &se) && se.code == http.StatusNotFound {
			return fmt.Errorf("the gateway %s no longer has kernel %s (it was shut down or culled there); the next exec starts a new one", t.g.where(), t.id)
		}
	}
	return fmt.Errorf("the gateway %s went away: the kernel's connection %s, and the gateway did not answer again within %s (%s); the kernel %s may still run there, and the next exec starts a new one",
		t.g.where(), brokeHow(broke), reconnectFor, rootCause(err), t.id)
}

// brokeHow says how a WebSocket connection ended, in words.
func brokeHow(err error) string {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "was closed"
	case websocket.CloseStatus(err) != -1:
		return fmt.Sprintf("was closed by the gateway (%s)", websocket.CloseStatus(err))
	case strings.HasPrefix(err.Error(), "stalled"):
		return err.Error()
	}
	return "broke (" + rootCause(err) + ")"
}

// rootCause is the innermost error's text: "connect: connection
// refused", not the chain of what was being done.
func rootCause(err error) string {
	if err == nil {
		return "no answer"
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Op + ": " + op.Err.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer"
	}
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(err) {
		err = u
	}
	return err.Error()
}

// ping finds a gateway that stalled without closing the connection.
func (t *wsTransport) ping() {
	tick := time.NewTicker(pingEvery)
	defer tick.Stop()
	for {
		select {
		case <-t.closing:
			return
		case <-tick.C:
		}
		t.mu.Lock()
		c := t.conn
		t.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), pingEvery)
		err := c.Ping(ctx)
		cancel()
		if err != nil {
			t.mu.Lock()
			t.stalled = true
			t.mu.Unlock()
			c.CloseNow()
		}
	}
}

func (t *wsTransport) send(ch string, m *Msg) error {
	t.mu.Lock()
	c, bin, closed := t.conn, t.binary, t.closed
	t.mu.Unlock()
	if closed {
		return errors.New("the connection to the gateway is closed")
	}
	var b []byte
	var err error
	typ := websocket.MessageText
	if bin {
		b, err = encodeWSv1(ch, m)
		typ = websocket.MessageBinary
	} else {
		b, err = encodeWSJSON(ch, m)
	}
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), gatewayTimeout)
	defer cancel()
	if err := c.Write(ctx, typ, b); err != nil {
		return fmt.Errorf("cannot send to the gateway %s: %w", t.g.where(), err)
	}
	return nil
}

// interrupt asks the gateway, which interrupts the kernel the way its
// spec says.
func (t *wsTransport) interrupt(int) error {
	return t.g.call(context.Background(), http.MethodPost, "/api/kernels/"+url.PathEscape(t.id)+"/interrupt", nil, nil)
}

func (t *wsTransport) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.closed = true
	close(t.closing)
	if t.conn != nil {
		t.conn.Close(websocket.StatusNormalClosure, "")
	}
}
