package jupyter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/go-zeromq/zmq4"
	"golang.org/x/sys/unix"

	"github.com/polyrepl/polyrepl/internal/driver"
	"github.com/polyrepl/polyrepl/internal/proc"
)

// connection is a kernel's connection file: where its five sockets
// listen and the key that signs every message.
type connection struct {
	Transport       string `json:"transport"`
	IP              string `json:"ip"`
	ShellPort       int    `json:"shell_port"`
	IOPubPort       int    `json:"iopub_port"`
	StdinPort       int    `json:"stdin_port"`
	ControlPort     int    `json:"control_port"`
	HBPort          int    `json:"hb_port"`
	Key             string `json:"key"`
	SignatureScheme string `json:"signature_scheme"`
	KernelName      string `json:"kernel_name"`
}

// newConnection picks five free ports on the loopback interface and a
// fresh key. A port is free when polyrepl picks it and taken by the
// kernel a moment later, as with every Jupyter client; a kernel that
// finds one taken fails to start, and says so.
func newConnection(kernelName string) (connection, error) {
	var ports [5]int
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return connection{}, fmt.Errorf("cannot find a free port on 127.0.0.1 for the kernel: %w", err)
		}
		held = append(held, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	key, err := driver.Nonce(32)
	if err != nil {
		return connection{}, err
	}
	return connection{
		Transport: "tcp", IP: "127.0.0.1", Key: key, SignatureScheme: "hmac-sha256", KernelName: kernelName,
		ShellPort: ports[0], IOPubPort: ports[1], StdinPort: ports[2], ControlPort: ports[3], HBPort: ports[4],
	}, nil
}

func (c connection) endpoint(port int) string { return fmt.Sprintf("tcp://%s:%d", c.IP, port) }

// writeConnection writes the connection file, readable by the user only
// (it holds the key), in the daemon's private runtime directory.
func writeConnection(dir string, c connection) (string, error) {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "kernel-*.json") // 0600
	if err != nil {
		return "", fmt.Errorf("cannot write the kernel's connection file: %w", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("cannot write the kernel's connection file: %w", err)
	}
	return f.Name(), nil
}

// startAttempts bounds how often a kernel is started with fresh ports
// when its first start fails before it listened.
const startAttempts = 3

// pickConnection is newConnection; tests replace it to hand a kernel a
// port another process holds.
var pickConnection = newConnection

// startLocal launches the kernel ks on this machine and connects to it.
//
// Its ports are free when picked and taken by the kernel a moment later,
// and another process (often another session's kernel, starting beside
// it) may take one between: the kernel then fails to bind and exits, and
// a channel that reached the other process's socket is closed in its
// greeting. A kernel that fails before all its channels connected is
// started again on fresh ports, as jupyter_client's restarter does
// (random_ports_until_alive), within the one start deadline; the error
// says how often it was tried.
func startLocal(ctx context.Context, spec driver.Spec, ks Spec, h driver.Handler) (*kernel, error) {
	ctx, cancel := context.WithTimeout(ctx, driver.StartTimeout)
	defer cancel()
	var err error
	for attempt := 1; ; attempt++ {
		var k *kernel
		var again bool
		k, again, err = startOnce(ctx, spec, ks, h)
		if err == nil {
			return k, nil
		}
		if !again || attempt == startAttempts || ctx.Err() != nil {
			if attempt > 1 {
				err = fmt.Errorf("%w (started %d times, each on fresh ports)", err, attempt)
			}
			return nil, err
		}
	}
}

// startOnce starts the kernel once on fresh ports. again says the start
// failed before the kernel listened on all its channels, which a port
// taken by another process explains.
func startOnce(ctx context.Context, spec driver.Spec, ks Spec, h driver.Handler) (_ *kernel, again bool, _ error) {
	conn, err := pickConnection(ks.Name)
	if err != nil {
		return nil, false, err
	}
	file, err := writeConnection(spec.RuntimeDir, conn)
	if err != nil {
		return nil, false, err
	}
	argv := ks.args(file)
	if spec.Exe != "" {
		argv[0] = spec.Exe
	}
	// JPY_PARENT_PID: ipykernel ends itself if its parent (the holder)
	// dies. PYDEVD_DISABLE_FILE_VALIDATION: its debugger's warning about
	// frozen modules is noise in a session.
	env := []string{"JPY_PARENT_PID=" + fmt.Sprint(os.Getpid()), "PYDEVD_DISABLE_FILE_VALIDATION=1"}
	for k, v := range ks.Env {
		env = append(env, k+"="+os.Expand(v, func(name string) string { return driver.Getenv(spec.Env, name) }))
	}
	sp := spec
	sp.Exe = argv[0]
	if spec.Sandbox != nil {
		// Its five ports are the only ones a sandboxed kernel may
		// listen on, under network off too.
		sb := *spec.Sandbox
		sb.Ports = []int{conn.ShellPort, conn.IOPubPort, conn.StdinPort, conn.ControlPort, conn.HBPort}
		sp.Sandbox = &sb
	}
	l := driver.Launch{Runtime: runtimePrefix + ks.Name, Needs: "the kernel's own program, as its kernel.json names it",
		EnvVar: "", Spec: sp, Args: argv[1:], Env: env}
	cmd, err := l.Command()
	if err != nil {
		os.Remove(file)
		return nil, false, fmt.Errorf("the kernel %s cannot start: its kernel.json (in %s) runs %s: %w", ks.Name, ks.Dir, argv[0], err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		os.Remove(file)
		return nil, false, fmt.Errorf("cannot create the kernel's output pipe: %w", err)
	}
	cmd.Stdout, cmd.Stderr = outW, outW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := l.Start(cmd); err != nil {
		outR.Close()
		outW.Close()
		os.Remove(file)
		return nil, false, fmt.Errorf("cannot start the kernel %s (%s): %w", ks.Name, driver.ExeOf(cmd), err)
	}
	outW.Close()

	k, err := newKernel(h, spec)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, false, err
	}
	k.tree, k.exe = l.TreeOf(cmd), driver.ExeOf(cmd)
	out := &earlyOut{k: k}
	outEOF := make(chan struct{})
	go func() {
		out.read(outR)
		close(outEOF)
	}()
	go func() {
		ex := driver.ExitOf(cmd.Wait())
		<-driver.OrSoon(outEOF)
		os.Remove(file)
		k.mu.Lock()
		if k.hbLost {
			ex = driver.Exit{Code: -1, Err: errors.New(hbCause()), At: ex.At}
		}
		k.mu.Unlock()
		k.dead <- ex
	}()

	fail := func(what error) error {
		k.tree.Kill(500 * time.Millisecond)
		<-driver.OrSoon(outEOF)
		if k.t != nil {
			k.t.close()
		}
		close(k.done)
		return fmt.Errorf("the kernel %s (%s) did not start: %w%s; is its kernel.json (in %s) right for this machine?",
			ks.Name, driver.ExeOf(cmd), what, driver.Printed(out.early()), ks.Dir)
	}
	t, err := dialZMQ(ctx, k, conn, ks.InterruptMode)
	if err != nil {
		return nil, ctx.Err() == nil, fail(err)
	}
	k.t = t
	if err := k.handshake(ctx); err != nil {
		return nil, false, fail(err)
	}
	k.note = joinNote(ks.DisplayName, k.note)
	out.ready()
	go t.heartbeat(k)
	go k.loop()
	return k, false, nil
}

func joinNote(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}

// earlyOut reads the kernel process's own output (not its cells': those
// come over iopub): kept for the error until the kernel is ready, passed
// to the session after.
type earlyOut struct {
	k     *kernel
	mu    sync.Mutex
	buf   driver.Early
	going bool
}

func (o *earlyOut) read(r io.ReadCloser) {
	defer r.Close()
	b := make([]byte, 32<<10)
	for {
		n, err := r.Read(b)
		if n > 0 {
			p := append([]byte(nil), b[:n]...)
			o.mu.Lock()
			if o.going {
				o.mu.Unlock()
				select {
				case o.k.out <- p:
				case <-o.k.done:
				}
			} else {
				o.buf.Keep(p)
				o.mu.Unlock()
			}
		}
		if err != nil {
			return
		}
	}
}

func (o *earlyOut) early() []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]byte(nil), o.buf.Bytes()...)
}

// ready switches to passing output on. What came before is dropped: a
// kernel's start-up chatter (debugger warnings, banners) is for a
// server's log, and a failed start quotes it.
func (o *earlyOut) ready() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.going = true
}

// zmqTransport speaks to a kernel on this machine over its ZeroMQ
// sockets.
type zmqTransport struct {
	sig    signer
	conn   connection
	cancel context.CancelFunc
	mode   string // the kernelspec's interrupt_mode
	k      *kernel
	sp     *spooler // the kernel's frames too large for memory
	mu     sync.Mutex
	socks  map[string]zmq4.Socket
	closed bool
}

// dialZMQ connects the shell, stdin and control channels (dealers that
// share one identity, so the kernel's input requests reach the stdin
// dealer of the client whose cell asks) and subscribes to iopub. A
// kernel binds its ports a moment after it starts: dialing retries until
// ctx ends.
func dialZMQ(ctx context.Context, k *kernel, c connection, mode string) (*zmqTransport, error) {
	sp, err := newSpooler(k.spool)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(context.Background())
	t := &zmqTransport{sig: signer{key: []byte(c.Key)}, conn: c, cancel: cancel, mode: mode, k: k, sp: sp, socks: map[string]zmq4.Socket{}}
	id := zmq4.SocketIdentity(k.id.session)
	opts := func(extra ...zmq4.Option) []zmq4.Option {
		return append([]zmq4.Option{zmq4.WithDialerRetry(50 * time.Millisecond), zmq4.WithDialerMaxRetries(-1)}, extra...)
	}
	t.socks[shellCh] = zmq4.NewDealer(sctx, opts(zmq4.WithID(id))...)
	t.socks[stdinCh] = zmq4.NewDealer(sctx, opts(zmq4.WithID(id))...)
	t.socks[controlCh] = zmq4.NewDealer(sctx, opts(zmq4.WithID(id))...)
	t.socks[iopubCh] = zmq4.NewSub(sctx, opts()...)
	ports := map[string]int{shellCh: c.ShellPort, stdinCh: c.StdinPort, controlCh: c.ControlPort, iopubCh: c.IOPubPort}
	errs := make(chan error, len(ports))
	for ch, port := range ports {
		go func() {
			if err := t.socks[ch].Dial(sp.endpoint(c.IP, port)); err != nil {
				errs <- fmt.Errorf("cannot connect to its %s channel at %s: %w", ch, c.endpoint(port), err)
				return
			}
			errs <- nil
		}()
	}
	for range ports {
		var err error
		select {
		case err = <-errs:
		case ex := <-k.dead:
			k.dead <- ex
			err = fmt.Errorf("it %s before it listened", ex.Describe())
		case <-ctx.Done():
			err = fmt.Errorf("it did not listen on its ports within %s", driver.StartTimeout)
		}
		if err != nil {
			t.close()
			return nil, err
		}
	}
	if err := t.socks[iopubCh].SetOption(zmq4.OptionSubscribe, ""); err != nil {
		t.close()
		return nil, fmt.Errorf("cannot subscribe to its iopub channel: %w", err)
	}
	for ch, s := range t.socks {
		go t.read(ch, s)
	}
	return t, nil
}

// read passes on what one socket receives, checking each signature.
func (t *zmqTransport) read(ch string, s zmq4.Socket) {
	bad := 0
	for {
		msg, err := s.Recv()
		if err != nil {
			return
		}
		m, err := t.sig.decodeZMQ(msg.Frames, t.sp)
		if err != nil {
			if bad++; bad == 1 {
				log.Printf("kernel %s channel: %v", ch, err)
			}
			continue
		}
		cost := m.Size()
		for _, f := range msg.Frames {
			cost += int64(len(f))
		}
		if !t.k.pass(inbound{ch: ch, m: m, cost: cost}) {
			return
		}
	}
}

func (t *zmqTransport) send(ch string, m *Msg) error {
	frames, err := t.sig.encodeZMQ(m)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errors.New("the connection to the kernel is closed")
	}
	return t.socks[ch].SendMulti(zmq4.NewMsgFrom(frames...))
}

// interrupt sends SIGINT to the kernel's process, or, for a kernel whose
// spec asks for it, an interrupt_request on the control channel. From the
// fourth attempt on, a signalled kernel's whole group gets SIGINT too, for
// a cell waiting on a child.
func (t *zmqTransport) interrupt(attempt int) error {
	if t.mode == "message" {
		m, err := t.k.id.request("interrupt_request", struct{}{})
		if err != nil {
			return err
		}
		return t.send(controlCh, m)
	}
	if attempt >= 3 {
		return t.k.tree.SignalGroup(unix.SIGINT)
	}
	return proc.Signal(t.k.tree.Leader, unix.SIGINT)
}

func (t *zmqTransport) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.closed = true
	for _, s := range t.socks {
		s.Close()
	}
	t.cancel()
	t.sp.close()
}

// Heartbeat: a kernel echoes what it is sent on its heartbeat socket —
// ipykernel from a thread of its own, busy or not; IRkernel only between
// cells. One that stops echoing for heartbeatLost while no cell runs,
// its process lives and is not stopped, is wedged: it is ended, and the
// session told why. A kernel whose process ends is found by its reaper
// at once.
const (
	heartbeatEvery = 3 * time.Second
	heartbeatLost  = 30 * time.Second
)

func (t *zmqTransport) heartbeat(k *kernel) {
	var sock zmq4.Socket
	defer func() {
		if sock != nil {
			sock.Close()
		}
	}()
	last := time.Now()
	for {
		t.mu.Lock()
		closed := t.closed
		t.mu.Unlock()
		if closed {
			return
		}
		if sock == nil {
			sock = zmq4.NewReq(context.Background(), zmq4.WithDialerRetry(100*time.Millisecond), zmq4.WithDialerMaxRetries(3))
			if err := sock.Dial(t.sp.endpoint(t.conn.IP, t.conn.HBPort)); err != nil {
				sock.Close()
				sock = nil
			}
		}
		ok := false
		if sock != nil {
			answered := make(chan bool, 1)
			go func(s zmq4.Socket) {
				if s.Send(zmq4.NewMsgString("ping")) != nil {
					answered <- false
					return
				}
				_, err := s.Recv()
				answered <- err == nil
			}(sock)
			select {
			case ok = <-answered:
			case <-time.After(heartbeatEvery):
			}
			if !ok {
				sock.Close() // a REQ socket that missed its reply cannot ask again
				sock = nil
			}
		}
		k.mu.Lock()
		busy := k.cur != nil
		k.mu.Unlock()
		switch {
		case ok:
			last = time.Now()
			time.Sleep(heartbeatEvery)
		case busy, proc.Stopped(k.tree.Leader):
			last = time.Now()
			time.Sleep(heartbeatEvery)
		case time.Since(last) > heartbeatLost:
			log.Printf("kernel pid %d stopped answering its heartbeat for %s: ending it", k.tree.Leader.PID, heartbeatLost)
			k.mu.Lock()
			k.hbLost = true
			k.mu.Unlock()
			k.tree.Kill(time.Second)
			return
		default:
			time.Sleep(time.Second)
		}
	}
}

// hbCause says why a kernel that was ended for its heartbeat died.
func hbCause() string {
	return fmt.Sprintf("it stopped answering its heartbeat for %s while it ran no cell and its process lived, and was ended", heartbeatLost)
}
