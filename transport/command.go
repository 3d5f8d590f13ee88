package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultTerminateGrace is how long Close waits after each step of stopping a
// child (closing stdin, then SIGTERM) before escalating to the next.
const DefaultTerminateGrace = 2 * time.Second

const (
	// killWait bounds the wait for exit after SIGKILL. SIGKILL cannot be
	// ignored, so only a process stuck in the kernel (uninterruptible I/O)
	// outlives it; Close reports that rather than hanging forever.
	killWait = 10 * time.Second

	// stderrDrain bounds how long Close keeps reading stderr after the child
	// has exited, to capture its last words. Normally stderr reaches EOF at
	// once (the whole process group is dead); the bound protects Close from a
	// descendant that left the group and still holds the pipe.
	stderrDrain = 500 * time.Millisecond

	// stderrChunk is the copy buffer for stderr: the only memory we spend on
	// it, however much the child writes.
	stderrChunk = 32 << 10
)

// Command is an [mcp.Transport] that runs a stdio MCP server as a child
// process and talks newline-delimited JSON to it over stdin/stdout.
//
// The child lives until the connection (or [Command.Close]) is closed, not
// until the context passed to Connect is done: that context only bounds the
// start. Closing stops the child and everything it started; see
// [Command.Close] and, for what "everything" means on each system,
// [Isolation].
//
// A Command may be connected once. Its exported fields must not change after
// Connect.
type Command struct {
	// Path is the program. A name without a slash is looked up in the PATH of
	// Env (or, if Env has no PATH, in the host's PATH).
	Path string
	Args []string
	// Env is the child's whole environment. It is never merged with the
	// host's environment, which holds secrets; nil means an empty
	// environment. Use [MinimalEnv] for the usual variables.
	Env []string
	// Dir is the child's working directory; empty means the host's.
	Dir string
	// Stderr receives the child's stderr; nil discards it. It is written from
	// a goroutine of ours, in chunks of at most 32 KiB, and should not block:
	// while it blocks, so does a child writing to stderr. Errors from it are
	// ignored (stderr keeps being drained and discarded) so that a failing
	// writer never stalls the child.
	Stderr io.Writer
	// MaxMessageBytes bounds one JSON-RPC message (one line) from the child;
	// zero or negative means [DefaultMaxMessageBytes]. A longer line, or
	// endless output without a newline, fails the connection with an error
	// ([ErrMessageTooLarge]) instead of growing the host's memory.
	MaxMessageBytes int
	// SkippedLine receives each line of the child's stdout that is not a
	// JSON-RPC message (a start-up banner, a stray print; see "Stdout" in
	// the package doc), without its line ending; such lines are skipped,
	// and nil drops them silently. It is called on the connection's
	// reading goroutine and must not block nor keep line, which is valid
	// during the call only and may be up to MaxMessageBytes long.
	SkippedLine func(line []byte)
	// RefusedMessage receives each message from the child that the
	// protocol does not allow (a *[RefusedError]: a repeated member name,
	// bytes that are not UTF-8, a batch where none may be; see "Refused
	// messages" in the package doc). The request such a message answers
	// fails with an error answer ([CodeRefusedMessage]); anything else in
	// it is dropped; the connection stays up. It is called on the
	// connection's reading goroutine and must not block; nil drops them
	// silently.
	RefusedMessage func(err error)
	// TerminateGrace is how long Close waits for the child to exit after
	// closing its stdin, and again after SIGTERM, before escalating; zero or
	// negative means [DefaultTerminateGrace].
	TerminateGrace time.Duration
	// InstallGrace, when positive, is how long Close waits after SIGTERM
	// for a child that has not read any of its input yet — a package
	// runner such as npx still fetching and installing the program that
	// will — before SIGKILL; zero means TerminateGrace, as for any child.
	// npm rolls an interrupted install back on SIGTERM once the step it is
	// in ends (or, as the init of a PID namespace, lets it finish), while
	// SIGKILL mid-install leaves a half-written package in its cache that
	// fails every later start. Closing stdin means nothing to such a child,
	// so SIGTERM is sent at once. See [Command.AwaitingReader].
	InstallGrace time.Duration
	// NoPIDNamespace keeps the child in the host's PID namespace on Linux,
	// for a program that must see its own process ID as the host does or
	// run set-user-ID programs. Its descendants are then contained as
	// [IsolationProcessGroup] says. Elsewhere it changes nothing.
	NoPIDNamespace bool

	mu      sync.Mutex
	started bool
	exited  chan struct{} // made lazily; closed when the child has been reaped
	proc    *proc
	conn    mcp.Connection
}

// Connect starts the child and returns the connection to it. It does not
// start the child if ctx is already done. Errors name the command.
//
// Closing the returned connection stops the child, as [Command.Close] does.
func (c *Command) Connect(ctx context.Context) (mcp.Connection, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("transport: not starting %q: %w", c.Path, err)
	}
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return nil, fmt.Errorf("transport: command %q already connected", c.Path)
	}
	c.started = true
	exited := c.exitedLocked()
	c.mu.Unlock()

	p, err := startProc(c, exited)
	if err != nil {
		return nil, err
	}
	max := c.MaxMessageBytes
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	// messageLines finds the lines that are messages, and lineConn reads
	// them (what the SDK's IOTransport does, decoding each once). Closing
	// the connection closes its Writer, which stops the child.
	lines := newMessageLines(procStdout{p}, max, c.SkippedLine)
	lines.refused, lines.batches = c.RefusedMessage, new(atomic.Bool)
	var conn mcp.Connection = newLineConn(lines, procStdin{p})
	conn = &versionWatch{Connection: conn, batches: lines.batches}
	c.mu.Lock()
	c.proc, c.conn = p, conn
	c.mu.Unlock()
	return conn, nil
}

// Close closes the connection, stopping the child the way the MCP
// specification describes: close its stdin, wait up to TerminateGrace for it
// to exit, send SIGTERM to its process group, wait TerminateGrace again, then
// send SIGKILL to the group and wait for the child to exit. (The init of a
// PID namespace receives only the signals it handles: such a child without
// a SIGTERM handler gets SIGKILL at the SIGTERM step, which is what SIGTERM
// would have done to it anywhere else.)
//
// When Close returns, the child has been reaped, what it started has been
// killed (as its [Isolation] allows: its PID namespace, else its process
// group and the descendants found when Close began), and every goroutine the
// Command started has finished (or is about to, having nothing left to do).
// Close returns nil when the child was stopped, however it died; use
// [Command.ExitErr] for how it died. It returns an error only if the child
// survived SIGKILL.
//
// Close is idempotent and safe to call concurrently, with or instead of
// closing the connection. Before Connect it does nothing.
func (c *Command) Close() error {
	c.mu.Lock()
	conn := c.conn
	c.mu.Unlock()
	if conn == nil {
		return nil
	}
	return conn.Close()
}

// Exited returns a channel that is closed once the child has exited and been
// reaped, whether it died by itself or was stopped by Close. It may be called
// before Connect; if the child never starts, the channel is never closed.
func (c *Command) Exited() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exitedLocked()
}

func (c *Command) exitedLocked() chan struct{} {
	if c.exited == nil {
		c.exited = make(chan struct{})
	}
	return c.exited
}

// ExitErr reports how the child died, once [Command.Exited] is closed: nil
// for exit status 0, otherwise the *exec.ExitError (exit status or signal).
// Before that it returns nil.
func (c *Command) ExitErr() error {
	p := c.exitedProc()
	if p == nil {
		return nil
	}
	return p.waitErr
}

// ProcessState returns the child's state once [Command.Exited] is closed,
// and nil before.
func (c *Command) ProcessState() *os.ProcessState {
	p := c.exitedProc()
	if p == nil {
		return nil
	}
	return p.state
}

// Pid returns the child's process ID as the host sees it (which is also its
// process group ID), or 0 before Connect.
func (c *Command) Pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return 0
	}
	return c.proc.pid
}

// AwaitingReader reports whether bytes were written to the child's stdin
// and none of them has been read yet: the program meant to read them is
// not running yet (a package runner such as npx is still fetching it) or
// has not begun to read. Once the child has read anything it is false for
// good; after Close it is what it was when the stop began. known is false
// where the system cannot tell: only Linux can (FIONREAD on the pipe).
func (c *Command) AwaitingReader() (awaiting, known bool) {
	c.mu.Lock()
	p := c.proc
	c.mu.Unlock()
	if p == nil {
		return false, pipeUnreadKnown
	}
	return p.awaitingReader()
}

// Isolation reports how the started child and its descendants are
// contained, and why a stronger containment the system offers was refused
// (nil when none was). Before Connect it returns [IsolationNone], nil.
func (c *Command) Isolation() (Isolation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return IsolationNone, nil
	}
	return c.proc.iso, c.proc.isoRefused
}

// Isolation is how a [Command]'s child and what it starts are contained,
// which decides what stopping it can promise.
type Isolation int

const (
	// IsolationNone: only the child itself is stopped (a system without
	// process groups), or it has not started.
	IsolationNone Isolation = iota
	// IsolationProcessGroup: the child leads its own process group, which
	// is signalled at each step of stopping it and killed before it is
	// reaped, also when it exits by itself. On Linux, in addition, the
	// child is killed when the host process dies (even by SIGKILL), and
	// Close kills the descendants that left the group (setsid) and were
	// found when Close began. A descendant that left the group and was
	// orphaned before that, or whose parent died first, can outlive it.
	IsolationProcessGroup
	// IsolationPIDNamespace (Linux): the child is the init of a PID
	// namespace of its own (inside a user namespace of its own when the
	// host is not root). When it dies, however it dies, the kernel kills
	// every process in the namespace: nothing it started can outlive it,
	// setsid and double forks included. It is killed when the host process
	// dies (even by SIGKILL), so then nothing outlives the host either. It
	// sees itself as PID 1, and orphans in the namespace become its
	// children: those it does not reap stay zombies until it exits. Its
	// /proc is still the host's: it can read the environment of every
	// process of the same user through /proc/PID/environ, other servers'
	// secrets included.
	IsolationPIDNamespace
	// IsolationPrivateProc (Linux): IsolationPIDNamespace, in a mount
	// namespace of its own whose /proc is a procfs of the child's PID
	// namespace: the child and what it starts see only their own
	// processes, not the host's nor other servers' (their command lines,
	// environments, open files). The host's /proc is unmounted in the
	// child's mount namespace where the kernel allows it (when the host is
	// root outside a user namespace); where it does not, it stays hidden
	// under the new one, and the child loses CAP_SYS_ADMIN (which it then
	// only had inside a user namespace) so that it cannot unmount what
	// hides it. Mounts the child makes do not propagate to the host.
	IsolationPrivateProc
)

func (i Isolation) String() string {
	switch i {
	case IsolationProcessGroup:
		return "process group"
	case IsolationPIDNamespace:
		return "PID namespace"
	case IsolationPrivateProc:
		return "PID namespace, private /proc"
	}
	return "none"
}

func (c *Command) exitedProc() *proc {
	c.mu.Lock()
	p := c.proc
	c.mu.Unlock()
	if p == nil {
		return nil
	}
	select {
	case <-p.exited:
		return p
	default:
		return nil
	}
}

// proc is a running child: the pipes we hold and its lifecycle.
type proc struct {
	name       string
	pid        int
	cmd        *exec.Cmd
	iso        Isolation
	isoRefused error  // why a stronger isolation was refused
	release    func() // called once the child is reaped (see startChild)
	grace      time.Duration
	stdin      *os.File // write end
	stdout     *os.File // read end
	stderr     *os.File // read end

	installGrace time.Duration
	// What has been written to stdin, and whether the child has read any
	// of it (see awaitingReader).
	written   atomic.Int64
	readBegun atomic.Bool
	// stopping is set, with awaitingAtStop, when the stop begins and stdin
	// is about to close: the pipe cannot be asked after that.
	stopMu         sync.Mutex
	stopping       bool
	awaitingAtStop bool

	exited     chan struct{} // closed after waitErr and state are set
	waitErr    error
	state      *os.ProcessState
	stderrDone chan struct{}

	stopOnce sync.Once
	stopErr  error
}

// started is a child startChild started, and how.
type started struct {
	cmd     *exec.Cmd
	iso     Isolation
	refused error  // why a stronger isolation was refused
	release func() // to call once the child is reaped
}

func startProc(c *Command, exited chan struct{}) (_ *proc, err error) {
	path, err := lookPath(c.Path, c.Env, c.Dir)
	if err != nil {
		var nf *NotFoundError
		if errors.As(err, &nf) {
			return nil, err // it names the program, and says all there is
		}
		return nil, fmt.Errorf("transport: starting %q: %w", c.Path, err)
	}

	// Our own pipes rather than exec's: *os.File ends start no copying
	// goroutines inside exec, so Wait never waits on a descendant holding a
	// pipe, and we decide when our ends close.
	var files []*os.File
	defer func() {
		if err != nil {
			for _, f := range files {
				f.Close()
			}
		}
	}()
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, fmt.Errorf("transport: starting %q: %w", c.Path, err)
	}
	outR, outW, err := pipe()
	if err != nil {
		return nil, fmt.Errorf("transport: starting %q: %w", c.Path, err)
	}
	errR, errW, err := pipe()
	if err != nil {
		return nil, fmt.Errorf("transport: starting %q: %w", c.Path, err)
	}
	// A fresh exec.Cmd for each attempt: startChild may try more than one
	// way to start the child, and an exec.Cmd starts at most once.
	newCmd := func() *exec.Cmd {
		// Not exec.CommandContext: the child's lifetime is the
		// connection's, not that of the context of the call that started it.
		cmd := exec.Command(path, c.Args...)
		cmd.Env = c.Env
		if cmd.Env == nil {
			cmd.Env = []string{} // nil would mean the host's environment
		}
		cmd.Dir = c.Dir
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
		return cmd
	}
	st, err := startChild(newCmd, !c.NoPIDNamespace)
	if err != nil {
		return nil, fmt.Errorf("transport: starting %q: %w", c.Path, err)
	}
	cmd := st.cmd
	// The child has its copies; ours of the child's ends would keep the
	// pipes open (no EOF on stdout when the child dies).
	inR.Close()
	outW.Close()
	errW.Close()

	grace := c.TerminateGrace
	if grace <= 0 {
		grace = DefaultTerminateGrace
	}
	p := &proc{
		name:         c.Path,
		pid:          cmd.Process.Pid,
		cmd:          cmd,
		iso:          st.iso,
		isoRefused:   st.refused,
		release:      st.release,
		grace:        grace,
		stdin:        inW,
		stdout:       outR,
		stderr:       errR,
		exited:       exited,
		stderrDone:   make(chan struct{}),
		installGrace: c.InstallGrace,
	}
	go p.wait()
	go p.copyStderr(c.Stderr)
	return p, nil
}

// wait reaps the child. Before reaping it kills the child's process group:
// a child that exits by itself may leave descendants behind, and while the
// unreaped child exists its process group ID cannot be reused, so the
// signal cannot reach a stranger.
//
// In a PID namespace of its own, the kernel has already killed every
// process in it when the child has exited.
func (p *proc) wait() {
	waitExitedNoReap(p.pid)
	signalGroup(p.cmd.Process, syscall.SIGKILL)
	err := p.cmd.Wait()
	afterReap(p.cmd.Process)
	p.release()
	p.waitErr, p.state = err, p.cmd.ProcessState
	close(p.exited)
}

func (p *proc) copyStderr(w io.Writer) {
	defer close(p.stderrDone)
	defer p.stderr.Close()
	if w == nil {
		w = io.Discard
	}
	buf := make([]byte, stderrChunk)
	for {
		n, err := p.stderr.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				w = io.Discard // keep draining: a blocked pipe would stall the child
			}
		}
		if err != nil {
			return
		}
	}
}

// stop runs the shutdown escalation once; see Command.Close.
func (p *proc) stop() error {
	p.stopOnce.Do(func() { p.stopErr = p.doStop() })
	return p.stopErr
}

func (p *proc) doStop() error {
	var err error
	// Found now, while the child lives and they are still its descendants,
	// so that those that left its process group can be killed once it is
	// dead (only where no PID namespace does it for us).
	strays := p.descendants()
	awaiting, _ := p.awaitingReader()
	p.stopMu.Lock()
	p.stopping, p.awaitingAtStop = true, awaiting
	p.stopMu.Unlock()
	p.stdin.Close() // the spec's first step: the server sees EOF and exits
	installing := awaiting && p.installGrace > 0
	switch {
	case installing:
		// A package runner still installing reads no stdin: ask it to
		// stop now, and give it time to finish or undo the install.
		p.terminate()
		if !p.waitExit(p.installGrace) {
			err = p.kill()
		}
	case !p.waitExit(p.grace):
		p.terminate()
		if !p.waitExit(p.grace) {
			err = p.kill()
		}
	}
	strays.kill()
	// Closing our read end unblocks the SDK's reader goroutine even if a
	// descendant that escaped the process group still holds the pipe.
	p.stdout.Close()
	p.stderr.SetReadDeadline(time.Now().Add(stderrDrain))
	<-p.stderrDone
	return err
}

// kill is the last step of stopping the child: SIGKILL to its group, and
// the wait for it to exit.
func (p *proc) kill() error {
	signalGroup(p.cmd.Process, syscall.SIGKILL)
	if !p.waitExit(killWait) {
		return fmt.Errorf("transport: %q (pid %d) did not exit %v after SIGKILL", p.name, p.pid, killWait)
	}
	return nil
}

// awaitingReader is Command.AwaitingReader.
func (p *proc) awaitingReader() (awaiting, known bool) {
	if !pipeUnreadKnown {
		return false, false
	}
	if p.readBegun.Load() {
		return false, true
	}
	p.stopMu.Lock()
	defer p.stopMu.Unlock()
	if p.stopping {
		return p.awaitingAtStop, true
	}
	// Written is counted after each write returns: read it first, so that
	// bytes of a write in progress only make the pipe hold more.
	written := p.written.Load()
	if written == 0 {
		return false, true
	}
	unread, ok := pipeUnread(p.stdin)
	if !ok {
		return false, false
	}
	if unread < written {
		p.readBegun.Store(true)
		return false, true
	}
	return true, true
}

// waitExit reports whether the child exited within d.
func (p *proc) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// procStdout is the connection's reader. Its Close does nothing: the
// connection's Writer (procStdin) closes everything, in order.
type procStdout struct{ p *proc }

func (r procStdout) Read(b []byte) (int, error) { return r.p.stdout.Read(b) }
func (r procStdout) Close() error               { return nil }

// procStdin is the connection's writer; closing it stops the child.
type procStdin struct{ p *proc }

func (w procStdin) Write(b []byte) (int, error) {
	n, err := w.p.stdin.Write(b)
	w.p.written.Add(int64(n))
	return n, err
}
func (w procStdin) Close() error { return w.p.stop() }

// lookPath resolves a program name without a slash in the PATH the child
// will have, falling back to the host's PATH if env has none. A program
// that does not exist is a [*NotFoundError].
func lookPath(name string, env []string, dir string) (string, error) {
	if name == "" {
		return "", errors.New("empty command")
	}
	if strings.ContainsRune(name, os.PathSeparator) || strings.Contains(name, "/") {
		f := name
		if !filepath.IsAbs(f) && dir != "" {
			f = filepath.Join(dir, f) // where exec looks for it
		}
		if _, err := os.Stat(f); errors.Is(err, fs.ErrNotExist) {
			return "", &NotFoundError{Program: name}
		}
		return name, nil
	}
	path, ok := envLookup(env, "PATH")
	if !ok {
		path = os.Getenv("PATH")
	}
	dirs := 0
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue // relative PATH entries would depend on Dir; exec refuses them too
		}
		dirs++
		f := filepath.Join(d, name)
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return f, nil
		}
	}
	return "", &NotFoundError{Program: name, Searched: dirs}
}

// A NotFoundError is a program that cannot be started because it does not
// exist: no executable of that name in any folder of the child's PATH, or
// no file at the path given. Starting it again will not help until it is
// installed. It matches [exec.ErrNotFound] and [fs.ErrNotExist]. Its text
// does not quote the PATH, which is long and says nothing a user needs.
type NotFoundError struct {
	Program  string // as given
	Searched int    // the folders of PATH searched; 0 for a path
}

func (e *NotFoundError) Error() string {
	if e.Searched > 0 || !strings.Contains(e.Program, "/") {
		return fmt.Sprintf("%q not found in PATH (%d folders searched)", e.Program, e.Searched)
	}
	return fmt.Sprintf("%s: no such file", e.Program)
}

// Is reports whether target is exec.ErrNotFound or fs.ErrNotExist.
func (e *NotFoundError) Is(target error) bool {
	return target == exec.ErrNotFound || target == fs.ErrNotExist
}

func envLookup(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- { // the last one wins, as in exec
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// minimalEnvKeys are the host variables a child usually needs to run at all
// (find programs, its home and temp dirs, its user, locale and time zone).
// Nothing else is passed on purpose: the host's environment holds API keys.
var minimalEnvKeys = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TERM",
	"LANG", "LANGUAGE", "TZ",
}

// MinimalEnv returns an environment for a child: the host's PATH, HOME,
// USER, LOGNAME, SHELL, TMPDIR, TERM, LANG, LANGUAGE, LC_* (LC_ALL,
// LC_CTYPE, ...) and TZ where set, and nothing else from the host; then extra
// on top, overriding. The result is sorted by name.
func MinimalEnv(extra map[string]string) []string {
	m := make(map[string]string)
	for _, k := range minimalEnvKeys {
		if v, ok := os.LookupEnv(k); ok {
			m[k] = v
		}
	}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "LC_") {
			m[k] = v
		}
	}
	for k, v := range extra {
		m[k] = v
	}
	env := make([]string, 0, len(m))
	for k, v := range m {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}

// TailBuffer is an io.Writer that keeps only the last N bytes written to it,
// for showing the end of a child's stderr in an error. It is safe for
// concurrent use. Its first line may be cut.
type TailBuffer struct {
	mu  sync.Mutex
	n   int
	buf []byte
}

// NewTailBuffer returns a TailBuffer keeping the last n bytes.
func NewTailBuffer(n int) *TailBuffer {
	if n < 0 {
		n = 0
	}
	return &TailBuffer{n: n, buf: make([]byte, 0, n)}
}

// Write keeps the tail of p; it never fails.
func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	written := len(p)
	if len(p) >= t.n {
		t.buf = append(t.buf[:0], p[len(p)-t.n:]...)
		return written, nil
	}
	if drop := len(t.buf) + len(p) - t.n; drop > 0 {
		t.buf = t.buf[:copy(t.buf, t.buf[drop:])]
	}
	t.buf = append(t.buf, p...)
	return written, nil
}

// String returns the bytes kept.
func (t *TailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
