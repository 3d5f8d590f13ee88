package gateway_test

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// BenchmarkSeparateProcesses is BenchmarkToolsCall with every server in its
// own process, as in a deployment:
//
//   - direct: a go-sdk client over stdio to the fixture server (a child);
//   - gateway: a go-sdk client over Streamable HTTP to the real binary,
//     `switchboard --config CFG serve --listen 127.0.0.1:0`, started as a
//     child without GOGC in its environment (so the binary's own default,
//     400, applies), which calls the fixture server over stdio;
//   - gohttp: a go-sdk client over Streamable HTTP to a go-sdk server that
//     serves the same tool itself (this test binary, re-run as
//     TestGoHTTPServerHelper), the floor of the HTTP hop;
//   - sdkproxy: a go-sdk client over Streamable HTTP to the plainest
//     gateway the go-sdk allows (this test binary, re-run as
//     TestSDKProxyHelper, at the gateway's GOGC of 400): a go-sdk server
//     whose echo tool hands its arguments, unvalidated, to a go-sdk client
//     session over stdio to the fixture server, and its result back. It
//     is what the gateway's composition costs with no code of its own.
//
// Run it with
//
//	go test ./gateway -run '^$' -bench SeparateProcesses -benchtime 3000x -count 3
//
// The paths take turns in ten slices, as in BenchmarkToolsCall (in an
// order shuffled each round: measureProcPaths). Besides
// calls/s, p50 and p99 per path and the ratios of issue 3 §5 (and
// sdkproxy/direct and gw/sdkproxy), it reports the
// CPU time per call of each server process (utime+stime from /proc/PID/stat,
// read around each slice): gw-cpu-µs is the gateway's own process, the part
// Switchboard's code controls; gw-upstream-cpu-µs the fixture behind it;
// direct-srv-cpu-µs and gohttp-srv-cpu-µs the servers of the other paths;
// *-client-cpu-µs the benchmark's process (the clients) on each path.
// Linux only (it reads /proc).
//
// GATEWAY_BENCH_FLOOR_GOGC, if set, is the gohttp server's GOGC (default:
// Go's, 100); the fixture servers always run with Go's default.
func BenchmarkSeparateProcesses(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc/PID/stat")
	}
	fixture := interop.Build(b, fixturePkg)
	switchboard := interop.Build(b, "github.com/switchboardmcp/switchboard/cmd/switchboard")
	for _, conc := range []int{1, benchConcurrency} {
		mode := "seq"
		if conc > 1 {
			mode = fmt.Sprintf("c%d", conc)
		}
		b.Run(mode, func(b *testing.B) {
			env := benchChildEnv(b)
			paths := []procPath{
				benchDirectProc(b, fixture, env, benchProtocol),
				benchGatewayProc(b, switchboard, fixture, env),
				benchGoHTTPProc(b, env),
				benchSDKProxyProc(b, fixture, env, benchProtocol),
			}
			st := map[string]callStats{}
			for _, m := range measureProcPaths(b, paths, conc, benchRounds) {
				st[m.path.name] = m.callStats
				b.ReportMetric(m.perSec, m.path.name+"-calls/s")
				b.ReportMetric(float64(m.p50.Microseconds()), m.path.name+"-p50-µs")
				b.ReportMetric(float64(m.p99.Microseconds()), m.path.name+"-p99-µs")
				for label, cpu := range m.cpu {
					b.ReportMetric(cpu, label+"-cpu-µs")
				}
				b.ReportMetric(m.clientCPU, m.path.name+"-client-cpu-µs")
			}
			b.ReportMetric(st["gateway"].perSec/st["direct"].perSec, "gw/direct")
			b.ReportMetric(float64(st["gateway"].p50)/float64(st["gohttp"].p50), "gw-p50/gohttp-p50")
			b.ReportMetric(st["sdkproxy"].perSec/st["direct"].perSec, "sdkproxy/direct")
			b.ReportMetric(float64(st["sdkproxy"].p50)/float64(st["gohttp"].p50), "sdkproxy-p50/gohttp-p50")
			b.ReportMetric(st["gateway"].perSec/st["sdkproxy"].perSec, "gw/sdkproxy")
		})
	}
}

// procPath is one way of calling the trivial tool, with the server
// processes whose CPU time it measures.
type procPath struct {
	name      string
	cs        *mcp.ClientSession
	tool      string
	pids      []int
	pidLabels []string // metric prefixes, one per pid
}

// procMeasure is what measureProcPaths measured on one path.
type procMeasure struct {
	path procPath
	callStats
	calls int
	// cpu is the CPU time per call, µs, of the path's server processes,
	// summed per label of path.pidLabels; clientCPU that of this process
	// (the clients) while the path's calls ran.
	cpu       map[string]float64
	clientCPU float64
	// rates is the calls/s of each slice, by round.
	rates []float64
}

// measureProcPaths makes b.N calls on each path, conc at a time, in rounds
// slices taken in turn, in an order shuffled anew each round (the same for
// every run: a fixed seed), so that no path always follows the same other
// (a path run right after another on the same server process finds it
// warm). It reads the CPU time of every path's server processes and of
// this process around each slice. It resets the benchmark's timer first
// and stops it at the end.
func measureProcPaths(b *testing.B, paths []procPath, conc, rounds int) []procMeasure {
	runs := make([]callRun, len(paths))
	srvTicks := make([][]int64, len(paths)) // per path, per pid
	clientTicks := make([]int64, len(paths))
	rates := make([][]float64, len(paths)) // per path, per round
	for i := range paths {
		srvTicks[i] = make([]int64, len(paths[i].pids))
		rates[i] = make([]float64, rounds)
	}
	self := os.Getpid()
	shuffle := rand.New(rand.NewPCG(31, 3))
	b.ResetTimer()
	for r := range rounds {
		n := b.N/rounds + boolInt(r < b.N%rounds)
		for _, i := range shuffle.Perm(len(paths)) {
			p := paths[i]
			before := cpuTicksOf(b, p.pids)
			c0 := cpuTicks(b, self)
			lat, elapsed, err := tryCalls(p.cs, p.tool, conc, n)
			if err != nil {
				b.Fatalf("%s, slice %d: %v", p.name, r+1, err)
			}
			runs[i].add(lat, elapsed)
			if elapsed > 0 {
				rates[i][r] = float64(n) / elapsed.Seconds()
			}
			c1 := cpuTicks(b, self)
			after := cpuTicksOf(b, p.pids)
			for j := range p.pids {
				srvTicks[i][j] += after[j] - before[j]
			}
			clientTicks[i] += c1 - c0
		}
	}
	b.StopTimer()
	out := make([]procMeasure, len(paths))
	for i, p := range paths {
		calls := len(runs[i].lat)
		m := procMeasure{path: p, callStats: runs[i].stats(), calls: calls, cpu: map[string]float64{},
			clientCPU: ticksPerCall(clientTicks[i], calls), rates: rates[i]}
		perLabel := map[string]int64{}
		for j, label := range p.pidLabels {
			perLabel[label] += srvTicks[i][j]
		}
		for label, ticks := range perLabel {
			m.cpu[label] = ticksPerCall(ticks, calls)
		}
		out[i] = m
	}
	return out
}

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat: 100
// on every Linux architecture Go supports.
const clockTicks = 100

func ticksPerCall(ticks int64, calls int) float64 {
	if calls == 0 {
		return 0
	}
	return float64(ticks) * (1e6 / clockTicks) / float64(calls)
}

// benchChildEnv is the environment of the benchmark's server processes: no
// GOGC (nor anything else of the benchmark's environment but PATH), HOME and
// the XDG directories in a temporary directory, secrets in a file there.
func benchChildEnv(b *testing.B) []string {
	dir := b.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"TMPDIR=" + os.TempDir(),
		"SWITCHBOARD_SECRETS_BACKEND=file",
	}
	for _, x := range []string{"CONFIG", "DATA", "STATE", "CACHE"} {
		d := filepath.Join(dir, strings.ToLower(x))
		if err := os.Mkdir(d, 0o700); err != nil {
			b.Fatal(err)
		}
		env = append(env, "XDG_"+x+"_HOME="+d)
	}
	return env
}

// benchDirectProc starts the fixture server and connects to it over stdio
// at protocol version protocol.
func benchDirectProc(b *testing.B, fixture string, env []string, protocol string) procPath {
	cmd := exec.Command(fixture)
	cmd.Env = env
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	warmUp(b, cs, "echo")
	return procPath{name: "direct", cs: cs, tool: "echo", pids: []int{cmd.Process.Pid}, pidLabels: []string{"direct-srv"}}
}

// benchGatewayProc starts `switchboard serve` over the fixture server as a
// child process and connects to it.
func benchGatewayProc(b *testing.B, switchboard, fixture string, env []string) procPath {
	url, pid := startServe(b, switchboard, "[[mcp_servers]]\nid = \"fx\"\ncommand = "+quoteTOML(fixture)+"\n", env)
	cs := benchHTTPClient(b, url)
	warmUp(b, cs, "mcp_fx_echo")
	up := childrenOf(b, pid)
	want := 1 // the fixture
	if benchProtocol >= "2026-07-28" {
		want = 2 // and the fixture on the connection of that generation
	}
	if len(up) != want {
		b.Fatalf("switchboard serve has %d child processes, want %d", len(up), want)
	}
	// The upstream children's CPU is reported together.
	p := procPath{name: "gateway", cs: cs, tool: "mcp_fx_echo",
		pids: []int{pid}, pidLabels: []string{"gw"}}
	for _, pid := range up {
		p.pids = append(p.pids, pid)
		p.pidLabels = append(p.pidLabels, "gw-upstream")
	}
	return p
}

// startServe starts the real binary, `switchboard --config CFG serve
// --listen 127.0.0.1:0`, with config as CFG, as a child process with
// environment env, and returns the URL of its /mcp (read from its first
// stderr line) and its pid. At the end of the benchmark it is stopped
// with SIGTERM, which it must survive with status 0.
func startServe(b *testing.B, switchboard, config string, env []string) (url string, pid int) {
	dir := b.TempDir()
	cfg := filepath.Join(dir, "switchboard.toml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(switchboard, "--config", cfg, "serve", "--listen", "127.0.0.1:0")
	cmd.Env = env
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, stderr)
		exited <- cmd.Wait() // after the pipe is drained, as Wait requires
	}()
	b.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				b.Errorf("switchboard serve: %v", err)
			}
		case <-time.After(15 * time.Second): // bounds a hung shutdown
			cmd.Process.Kill()
			<-exited
			b.Errorf("switchboard serve did not exit within 15s of SIGTERM")
		}
	})
	var first string
	select {
	case first = <-lines:
	case <-time.After(time.Minute): // bounds a hung start
		b.Fatal("switchboard serve printed nothing in a minute")
	}
	const prefix = "switchboard: serving MCP at "
	url, _, _ = strings.Cut(strings.TrimPrefix(first, prefix), " ")
	if !strings.HasPrefix(first, prefix) || !strings.HasPrefix(url, "http://") {
		b.Fatalf("switchboard serve: first stderr line %q, want %q…", first, prefix)
	}
	return url, cmd.Process.Pid
}

// benchGoHTTPProc runs this test binary as TestGoHTTPServerHelper, a go-sdk
// server serving echo over Streamable HTTP, and connects to it.
func benchGoHTTPProc(b *testing.B, env []string) procPath {
	cmd := exec.Command(os.Args[0], "-test.run=^TestGoHTTPServerHelper$", "-test.bench=^$", "-test.count=1")
	cmd.Env = append(env, "GATEWAY_BENCH_GOHTTP=1")
	if g := os.Getenv("GATEWAY_BENCH_FLOOR_GOGC"); g != "" {
		cmd.Env = append(cmd.Env, "GOGC="+g)
	}
	cs := benchHTTPClient(b, startHelper(b, cmd, "gohttp server helper"))
	warmUp(b, cs, "echo")
	return procPath{name: "gohttp", cs: cs, tool: "echo", pids: []int{cmd.Process.Pid}, pidLabels: []string{"gohttp-srv"}}
}

// benchSDKProxyProc runs this test binary as TestSDKProxyHelper over the
// fixture server, and connects to it at protocol version protocol. For
// 2026-07-28 the helper serves statelessly (the go-sdk serves that
// generation only so) and calls the fixture at 2026-07-28 too, as the
// gateway does for such clients.
func benchSDKProxyProc(b *testing.B, fixture string, env []string, protocol string) procPath {
	cmd := exec.Command(os.Args[0], "-test.run=^TestSDKProxyHelper$", "-test.bench=^$", "-test.count=1")
	cmd.Env = append(env, "GATEWAY_BENCH_SDKPROXY="+fixture, "GOGC=400")
	if protocol >= "2026-07-28" {
		cmd.Env = append(cmd.Env, "GATEWAY_BENCH_SDKPROXY_PROTOCOL="+protocol)
	}
	cs := benchHTTPClientAt(b, startHelper(b, cmd, "sdkproxy helper"), protocol)
	warmUp(b, cs, "echo")
	up := childrenOf(b, cmd.Process.Pid)
	if len(up) != 1 {
		b.Fatalf("the sdkproxy helper has %d child processes, want 1 (the fixture)", len(up))
	}
	return procPath{name: "sdkproxy", cs: cs, tool: "echo", pids: []int{cmd.Process.Pid, up[0]}, pidLabels: []string{"sdkproxy", "sdkproxy-upstream"}}
}

// startHelper starts a helper process that prints "serving URL" on stdout
// and serves until its stdin closes, and returns the URL.
func startHelper(b *testing.B, cmd *exec.Cmd, what string) string {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			b.Errorf("%s: %v", what, err)
		}
	})
	sc := bufio.NewScanner(stdout)
	var url string
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "serving "); ok {
			url = u
			break
		}
	}
	if url == "" {
		b.Fatalf("%s did not say where it serves", what)
	}
	go io.Copy(io.Discard, stdout)
	return url
}

// TestGoHTTPServerHelper is BenchmarkSeparateProcesses' gohttp server: the
// echo tool of benchGoServer on 127.0.0.1, until stdin closes. It does
// nothing in an ordinary test run.
func TestGoHTTPServerHelper(t *testing.T) {
	if os.Getenv("GATEWAY_BENCH_GOHTTP") == "" {
		t.Skip("only BenchmarkSeparateProcesses' child process")
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "gohttp", Version: "0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	serveUntilStdinCloses(t, s, nil)
}

// TestSDKProxyHelper is BenchmarkSeparateProcesses' sdkproxy: a go-sdk
// server on 127.0.0.1 whose echo tool forwards each call as it came to the
// fixture server (the command in GATEWAY_BENCH_SDKPROXY) through a go-sdk
// client over stdio, until stdin closes. With
// GATEWAY_BENCH_SDKPROXY_PROTOCOL=2026-07-28 it serves statelessly and
// calls the fixture at that version; otherwise it serves sessions and
// calls the fixture at 2025-11-25. GATEWAY_BENCH_SDKPROXY_STATELESS set
// makes it serve statelessly whatever the version (as the go-sdk requires
// to serve 2026-07-28 clients; scripts/bench-idle-sessions.sh). It does
// nothing in an ordinary test run.
func TestSDKProxyHelper(t *testing.T) {
	fixture := os.Getenv("GATEWAY_BENCH_SDKPROXY")
	if fixture == "" {
		t.Skip("only BenchmarkSeparateProcesses' child process")
	}
	protocol := cmp.Or(os.Getenv("GATEWAY_BENCH_SDKPROXY_PROTOCOL"), "2025-11-25")
	cmd := exec.Command(fixture)
	// Go's default GOGC for the fixture, as behind the gateway, and none
	// of the helper's GODEBUG (such as gctrace=1, which
	// scripts/bench-idle-sessions.sh reads from the helper's stderr).
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "GOGC=") || strings.HasPrefix(kv, "GODEBUG=")
	})
	c := mcp.NewClient(&mcp.Implementation{Name: "sdkproxy", Version: "0"}, nil)
	up, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	s := mcp.NewServer(&mcp.Implementation{Name: "sdkproxy", Version: "0"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return up.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: req.Params.Arguments})
	})
	stateless := protocol >= "2026-07-28" || os.Getenv("GATEWAY_BENCH_SDKPROXY_STATELESS") != ""
	serveUntilStdinCloses(t, s, &mcp.StreamableHTTPOptions{Stateless: stateless})
}

// serveUntilStdinCloses serves s over Streamable HTTP (with opts) on a free
// loopback port, says where on stdout ("serving URL"), and stops when stdin
// closes: the protocol of a benchmark helper process (see startHelper).
func serveUntilStdinCloses(t *testing.T, s *mcp.Server, opts *mcp.StreamableHTTPOptions) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts)}
	go srv.Serve(ln)
	fmt.Printf("serving http://%s/mcp\n", ln.Addr())
	io.Copy(io.Discard, os.Stdin)
	srv.Close()
}

// cpuTicks returns utime+stime of process pid, in clock ticks.
func cpuTicks(b *testing.B, pid int) int64 {
	f := procStat(b, pid)
	u, err1 := strconv.ParseInt(f[11], 10, 64) // field 14, utime
	s, err2 := strconv.ParseInt(f[12], 10, 64) // field 15, stime
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: utime %q, stime %q", pid, f[11], f[12])
	}
	return u + s
}

func cpuTicksOf(b *testing.B, pids []int) []int64 {
	t := make([]int64, len(pids))
	for i, pid := range pids {
		t[i] = cpuTicks(b, pid)
	}
	return t
}

// procStat returns the fields of /proc/PID/stat after the command name: the
// first is field 3 (state).
func procStat(b *testing.B, pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	i := strings.LastIndexByte(string(data), ')')
	f := strings.Fields(string(data[i+1:]))
	if i < 0 || len(f) < 13 {
		b.Fatalf("/proc/%d/stat: %q", pid, data)
	}
	return f
}

// childrenOf returns the pids of the processes whose parent is pid.
func childrenOf(b *testing.B, pid int) []int {
	var kids []int
	for p := range interop.Children(pid) {
		kids = append(kids, p)
	}
	return kids
}
