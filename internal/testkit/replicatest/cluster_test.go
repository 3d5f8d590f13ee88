package replicatest

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/testhaproxy"
	"github.com/switchboardmcp/switchboard/internal/testkit/testpg"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// The replicas' names. Each replica has a HOME of its own, which its
// fixture server inherits: the env tool's answer for HOME says which
// replica served a call. (Not a variable set in the server's env table
// from an {{env.X}} placeholder: its value is redacted, as a secret's.)
var names = []string{"alpha", "bravo"}

// token is the gateway's bearer token ([gateway] auth_token), which every
// request through the balancer carries: the balancer passes it through.
const token = "replicatest-token"

// startTimeout bounds a replica's start (its first line, then /readyz):
// a loaded machine takes seconds, a replica that never serves must not
// hold the test.
const startTimeout = 90 * time.Second

// stopTimeout bounds a replica's shutdown after SIGTERM.
const stopTimeout = 30 * time.Second

// cluster is PostgreSQL, replicas of `switchboard serve` on it, and the
// files they share.
type cluster struct {
	bin, fixture string
	dir          string // the replicas' working folder: switchboard.toml, workflows/
	callLog      string // the fixture's -call-log: a line per tools/call, every replica's
	env          []string
	serveArgs    []string // more arguments of every replica's serve
	replicas     []*replica
}

type replica struct {
	name   string
	home   string // its HOME, which the fixture server's env tool answers
	url    string // http://127.0.0.1:PORT
	cmd    *exec.Cmd
	exited chan struct{}
	out    *interop.LogBuffer // its stderr, for the failure messages
}

// startCluster starts PostgreSQL and n replicas of switchboard serve on one
// database of it, each on a loopback port of its own, with workflows (file
// name to YAML) in their workflows folder, and waits until every replica's
// /readyz answers 200.
func startCluster(t testing.TB, n int, workflows map[string]string) *cluster {
	t.Helper()
	c := newCluster(t, clusterOptions{workflows: workflows})
	c.startReplicas(t, n)
	return c
}

// clusterOptions are what a test adds to the replicas' set-up.
type clusterOptions struct {
	workflows map[string]string // file name to YAML, in the workflows folder
	state     string            // more keys of the [state] table
	gateway   string            // more keys of the [gateway] table
	config    string            // TOML appended to switchboard.toml
	env       []string          // more environment of every replica (and login)
	serveArgs []string          // more arguments of every replica's serve ("-v")
}

// newCluster starts PostgreSQL and writes the replicas' configuration,
// starting no replica.
func newCluster(t testing.TB, o clusterOptions) *cluster {
	t.Helper()
	c := &cluster{
		bin:       interop.Build(t, "github.com/switchboardmcp/switchboard/cmd/switchboard"),
		fixture:   interop.Build(t, "github.com/switchboardmcp/switchboard/internal/testkit/testserver"),
		dir:       t.TempDir(),
		env:       o.env,
		serveArgs: o.serveArgs,
	}
	c.callLog = filepath.Join(c.dir, "calls.log")
	db := database(t, "switchboard")
	cfg := fmt.Sprintf(`[state]
database = %q
%s
[gateway]
auth_token = "{{env.SB_TOKEN}}"
%s
[[mcp_servers]]
id = "fx"
command = %q
args = ["-call-log", %q]
`, db, o.state, o.gateway, c.fixture, c.callLog)
	write(t, filepath.Join(c.dir, "switchboard.toml"), cfg+o.config)
	if len(o.workflows) > 0 {
		if err := os.Mkdir(filepath.Join(c.dir, "workflows"), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, body := range o.workflows {
			write(t, filepath.Join(c.dir, "workflows", name), body)
		}
	}
	return c
}

// startReplicas starts n replicas and waits until each is ready.
func (c *cluster) startReplicas(t testing.TB, n int) {
	t.Helper()
	for i := range n {
		c.replicas = append(c.replicas, c.start(t, names[i]))
	}
	for _, r := range c.replicas {
		r.awaitReady(t)
	}
}

// command is the switchboard binary run with args in the replicas' folder
// and configuration, with a home of its own (a machine of its own).
func (c *cluster) command(t testing.TB, args ...string) (*exec.Cmd, string) {
	home := t.TempDir()
	cmd := exec.Command(c.bin, append([]string{"--config", filepath.Join(c.dir, "switchboard.toml")}, args...)...)
	cmd.Dir = c.dir
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TMPDIR=" + os.TempDir(),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"XDG_CACHE_HOME=" + filepath.Join(home, "cache"),
		"XDG_RUNTIME_DIR=" + filepath.Join(home, "run"),
		"SWITCHBOARD_SECRETS_BACKEND=env",
		"SB_TOKEN=" + token,
	}, c.env...)
	return cmd, home
}

// start starts one replica and returns once it says where it serves.
func (c *cluster) start(t testing.TB, name string) *replica {
	t.Helper()
	cmd, home := c.command(t, append([]string{"serve", "--listen", "127.0.0.1:0"}, c.serveArgs...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := interop.StartWithTest(cmd); err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, home: home, cmd: cmd, exited: make(chan struct{}), out: new(interop.LogBuffer)}
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		once := false
		for sc.Scan() {
			if !once {
				first <- sc.Text()
				once = true
			}
			fmt.Fprintln(r.out, sc.Text())
		}
		if !once {
			close(first)
		}
		io.Copy(io.Discard, stderr)
		cmd.Wait() // after the pipe is drained, as Wait requires
		close(r.exited)
	}()
	t.Cleanup(func() {
		r.stop(t)
		if t.Failed() {
			t.Logf("replica %s's output:\n%s", name, r.out)
		}
	})
	var line string
	select {
	case line = <-first:
	case <-time.After(startTimeout):
		t.Fatalf("replica %s printed nothing in %v", name, startTimeout)
	}
	// "switchboard: serving MCP at http://127.0.0.1:PORT/mcp (…)"
	const prefix = "switchboard: serving MCP at "
	u, _, _ := strings.Cut(strings.TrimPrefix(line, prefix), " ")
	if !strings.HasPrefix(line, prefix) || !strings.HasSuffix(u, "/mcp") {
		<-r.exited
		t.Fatalf("replica %s: first line %q, want %q…; its output:\n%s", name, line, prefix, r.out)
	}
	r.url = strings.TrimSuffix(u, "/mcp")
	return r
}

// awaitReady polls the replica's /readyz until it answers 200 (a balancer
// does the same; no event says when every server is up and the database
// answers).
func (r *replica) awaitReady(t testing.TB) {
	t.Helper()
	wait.Within(t, startTimeout, "replica "+r.name+" to be ready", func() (string, bool) {
		resp, err := http.Get(r.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return "", true
			}
		}
		select {
		case <-r.exited:
			t.Fatalf("replica %s exited before it was ready; its output:\n%s", r.name, r.out)
		default:
		}
		return fmt.Sprintf("%v; its output:\n%s", err, r.out), false
	})
}

// kill kills the replica with SIGKILL, as a machine dies, and waits until
// it is gone.
func (r *replica) kill(t testing.TB) {
	t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("killing replica %s: %v", r.name, err)
	}
	<-r.exited
}

// stop stops the replica the way systemd does (SIGTERM), then kills it if
// it lingers. A replica already gone is left alone.
func (r *replica) stop(t testing.TB) {
	select {
	case <-r.exited:
		return
	default:
	}
	r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(stopTimeout):
		r.cmd.Process.Kill()
		<-r.exited
		t.Errorf("replica %s did not stop within %v of SIGTERM; killed. Its output:\n%s", r.name, stopTimeout, r.out)
	}
}

// byName returns the replica called name.
func (c *cluster) byName(t testing.TB, name string) *replica {
	t.Helper()
	for _, r := range c.replicas {
		if r.name == name {
			return r
		}
	}
	t.Fatalf("no replica %q", name)
	return nil
}

// nameIn returns the name of the replica whose HOME s holds, or "".
func (c *cluster) nameIn(s string) string {
	for _, r := range c.replicas {
		if strings.Contains(s, r.home) {
			return r.name
		}
	}
	return ""
}

// other returns the replica that is not r (of two).
func (c *cluster) other(r *replica) *replica {
	for _, o := range c.replicas {
		if o != r {
			return o
		}
	}
	return nil
}

// balancer starts HAProxy with examples/haproxy/haproxy.cfg in front of
// replicas.
func balancer(t testing.TB, replicas ...*replica) *testhaproxy.HAProxy {
	t.Helper()
	var addrs []string
	for _, r := range replicas {
		addrs = append(addrs, strings.TrimPrefix(r.url, "http://"))
	}
	return testhaproxy.Start(t, shippedConfig(t, addrs))
}

// shippedConfig is examples/haproxy/haproxy.cfg with its frontend bound to
// testhaproxy's socket and one server line per address, each a copy of
// the file's first server line with its address changed: the only changes.
func shippedConfig(t testing.TB, addrs []string) string {
	t.Helper()
	b, err := os.ReadFile("../../../examples/haproxy/haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	bindRE := regexp.MustCompile(`^(\s*)bind\s+\S+(.*)$`)
	serverRE := regexp.MustCompile(`^(\s*)server\s+\S+\s+\S+(.*)$`)
	var out []string
	binds, servers := 0, 0
	for _, l := range strings.Split(string(b), "\n") {
		if m := bindRE.FindStringSubmatch(l); m != nil {
			binds++
			out = append(out, m[1]+"bind fd@"+strconv.Itoa(testhaproxy.ListenFD)+m[2])
			continue
		}
		if m := serverRE.FindStringSubmatch(l); m != nil {
			if servers++; servers == 1 {
				for i, a := range addrs {
					out = append(out, fmt.Sprintf("%sserver replica%d %s%s", m[1], i+1, a, m[2]))
				}
			}
			continue
		}
		out = append(out, l)
	}
	if binds != 1 || servers == 0 {
		t.Fatalf("examples/haproxy/haproxy.cfg has %d bind and %d server lines; want one bind and some servers", binds, servers)
	}
	return strings.Join(out, "\n")
}

// database starts PostgreSQL and returns the URL of a new database on it
// (on its Unix socket: testpg opens no TCP port).
func database(t testing.TB, name string) string {
	t.Helper()
	return testpg.CreateDatabase(t, testpg.Start(t), name)
}

// recorder sends the bearer token with every request, and records each
// answer's status with the Mcp-Session-Id the request carried.
type recorder struct {
	keep  bool   // record exchanges (not in a benchmark)
	token string // the bearer token sent; the gateway's when empty
	mu    sync.Mutex
	seen  []exchange
	inner http.RoundTripper
}

type exchange struct {
	method, session string
	status          int
}

func (rec *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+cmp.Or(rec.token, token))
	resp, err := rec.inner.RoundTrip(r)
	if err == nil && rec.keep {
		rec.mu.Lock()
		rec.seen = append(rec.seen, exchange{r.Method, r.Header.Get("Mcp-Session-Id"), resp.StatusCode})
		rec.mu.Unlock()
	}
	return resp, err
}

func (rec *recorder) exchanges() []exchange {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]exchange(nil), rec.seen...)
}

func newRecorder() *recorder {
	return &recorder{keep: true, inner: &http.Transport{MaxIdleConnsPerHost: 64}}
}

// connect connects an MCP client of protocol version to base's /mcp.
func connect(t testing.TB, base, version string, rec *recorder) *mcp.ClientSession {
	t.Helper()
	return connectTo(t, base, "/mcp", version, rec)
}

// connectTo connects an MCP client of protocol version to base's path
// (an endpoint's MCP path).
func connectTo(t testing.TB, base, path, version string, rec *recorder) *mcp.ClientSession {
	t.Helper()
	if rec == nil {
		rec = newRecorder()
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "replicatest", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + path, HTTPClient: &http.Client{Transport: rec}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting a %s client to %s%s: %v", version, base, path, err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("a %s client negotiated %s", version, got)
	}
	return cs
}

// whereCalled calls the fixture's env tool for HOME: the name of the
// replica that served the call.
func (c *cluster) whereCalled(ctx context.Context, cs *mcp.ClientSession) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_fx_env", Arguments: map[string]any{"name": "HOME"}})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) == 0 {
		return "", fmt.Errorf("env: %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", errors.New("env: no text")
	}
	if name := c.nameIn(tc.Text); name != "" {
		return name, nil
	}
	return "", fmt.Errorf("env HOME = %q: no replica's", tc.Text)
}

func write(t testing.TB, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
