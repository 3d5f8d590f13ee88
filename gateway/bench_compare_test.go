package gateway_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/transport"
)

// The protocol generations BenchmarkCompare's clients speak.
const (
	protoSession   = "2025-11-25" // sessions (Mcp-Session-Id)
	protoStateless = "2026-07-28" // stateless, each request whole
)

// defaultCompareRounds is how many slices BenchmarkCompare cuts each
// path's calls into, taken in turn, unless GATEWAY_BENCH_COMPARE_ROUNDS
// says otherwise: more than benchRounds, as it has more paths and runs
// longer, so that a change of the machine's load meets every path, and
// its ratios are medians over the rounds.
const defaultCompareRounds = 20

// compareRounds returns GATEWAY_BENCH_COMPARE_ROUNDS, or its default.
func compareRounds(b *testing.B) int {
	v := os.Getenv("GATEWAY_BENCH_COMPARE_ROUNDS")
	if v == "" {
		return defaultCompareRounds
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 10000 {
		b.Fatalf("GATEWAY_BENCH_COMPARE_ROUNDS=%q: want a number of rounds from 1 to 10000", v)
	}
	return n
}

// comparePath is one row of BenchmarkCompare's table: a procPath whose
// name is its metric prefix, the table's label for it, and the protocol
// version its client speaks.
type comparePath struct {
	procPath
	label    string
	protocol string
}

// BenchmarkCompare is issue 31's side-by-side table: in one run, with
// every server in its own process and the paths taking turns in 20 slices
// (GATEWAY_BENCH_COMPARE_ROUNDS sets their number; the measurement is
// BenchmarkSeparateProcesses', measureProcPaths), sequentially and with 16
// calls in flight, a go-sdk v1.8.0 client calls the fixture server's echo
// tool
//
//   - direct: over stdio (2025-11-25);
//   - sdkproxy: through the plainest go-sdk gateway (TestSDKProxyHelper),
//     with 2025-11-25 sessions, and sdkproxy-2026: the same serving
//     2026-07-28 statelessly, calling the fixture at 2026-07-28;
//   - through one `switchboard serve` (the real binary, at its default
//     GOGC) over the fixture, with a named endpoint "bench" publishing it:
//     mcp (/mcp, 2025-11-25 sessions), mcp-2026 (/mcp, 2026-07-28
//     stateless), ws (/ws, WebSocket, 2025-11-25), named and named-2026
//     (/e/bench/mcp, both generations);
//   - supergateway (npm supergateway, --stateful: one fixture child per
//     session; its default, stateless, starts a child for every POST) and
//     mcp-proxy (punkpeye's, --server stream) over the same fixture, with
//     2025-11-25 sessions. Both need Node (interop.NodeGateways installs
//     them, pinned, into the test cache); without it their rows are left
//     out and the benchmark logs why.
//
// Per path it reports calls/s (the median over its slices), p50 and p99,
// and the CPU time per call of the server process (srv: the gateway's own
// process; direct's server is the fixture) and of the upstream fixture
// behind it, from /proc/PID/stat. A ratio of two paths is the median over
// the rounds of their calls/s in that round (two slices run one after the
// other), so that a burst of load on a shared machine, which falls on one
// slice, moves it little. With GATEWAY_BENCH_COMPARE_TABLE=FILE it appends
// to FILE a markdown table of both modes with the ratios and targets of
// issue 31: /mcp ≥ 1.3× sdkproxy (of the same generation) and ≥ 1.5×
// supergateway, /ws ≥ 1.6× sdkproxy, a named endpoint within 5 % of /mcp
// (≥ 0.95× its calls/s). Linux only.
// scripts/bench-compare.sh runs it and records the machine's load:
//
//	GATEWAY_BENCH_COMPARE_TABLE=/tmp/t.md go test ./gateway -run '^$' -bench Compare -benchtime 3000x
func BenchmarkCompare(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc/PID/stat")
	}
	rounds := compareRounds(b)
	fixture := interop.Build(b, fixturePkg)
	switchboard := interop.Build(b, "github.com/switchboardmcp/switchboard/cmd/switchboard")
	env := benchChildEnv(b)
	var paths []comparePath
	add := func(p procPath, name, label, protocol string) {
		p.name = name
		paths = append(paths, comparePath{procPath: p, label: label, protocol: protocol})
	}
	add(benchDirectProc(b, fixture, env, protoSession), "direct", "direct (stdio)", protoSession)
	add(benchSDKProxyProc(b, fixture, env, protoSession), "sdkproxy", "sdkproxy (plain go-sdk gateway)", protoSession)
	add(benchSDKProxyProc(b, fixture, env, protoStateless), "sdkproxy-2026", "sdkproxy (plain go-sdk gateway)", protoStateless)
	paths = append(paths, benchSwitchboardPaths(b, switchboard, fixture, env)...)
	nodeNote := ""
	if sg, mp, err := interop.NodeGateways(b.Logf); err != nil {
		nodeNote = fmt.Sprintf("supergateway and mcp-proxy left out: %v", err)
		b.Log(nodeNote)
	} else {
		paths = append(paths, benchNodeGatewayPaths(b, sg, mp, fixture)...)
		out, err := exec.Command(sg[0], "--version").Output()
		if err != nil {
			b.Fatalf("%s --version: %v", sg[0], err)
		}
		nodeNote = fmt.Sprintf("supergateway and mcp-proxy on Node %s.", strings.TrimSpace(string(out)))
	}
	// Server CPU: each path's first pid; the rest are its upstream.
	for i := range paths {
		p := &paths[i]
		p.pidLabels = make([]string, len(p.pids))
		for j := range p.pids {
			p.pidLabels[j] = either(j == 0, "srv", "upstream")
		}
	}
	ps := make([]procPath, len(paths))
	for i, p := range paths {
		ps[i] = p.procPath
	}
	type modeResult struct {
		mode      string
		calls     int
		load0     string
		load1     string
		measures  map[string]procMeasure
		completed bool
	}
	var results []modeResult
	for _, conc := range []int{1, benchConcurrency} {
		mode := "seq"
		if conc > 1 {
			mode = fmt.Sprintf("c%d", conc)
		}
		b.Run(mode, func(b *testing.B) {
			r := modeResult{mode: mode, calls: b.N, load0: loadAvg(), measures: map[string]procMeasure{}}
			for _, m := range measureProcPaths(b, ps, conc, rounds) {
				r.measures[m.path.name] = m
			}
			r.load1 = loadAvg()
			r.completed = b.N >= rounds // not the go command's first run, b.N = 1
			for _, p := range paths {
				m := r.measures[p.name]
				b.ReportMetric(medianRate(m), p.name+"-calls/s")
				b.ReportMetric(float64(m.p50.Microseconds()), p.name+"-p50-µs")
				b.ReportMetric(float64(m.p99.Microseconds()), p.name+"-p99-µs")
				b.ReportMetric(m.cpu["srv"], p.name+"-srv-cpu-µs")
				if up, ok := m.cpu["upstream"]; ok {
					b.ReportMetric(up, p.name+"-upstream-cpu-µs")
				}
			}
			for _, t := range compareTargets(r.measures) {
				if t.ok != nil {
					b.ReportMetric(t.ratio, t.metric)
				}
			}
			if r.completed {
				results = slices.DeleteFunc(results, func(x modeResult) bool { return x.mode == mode })
				results = append(results, r)
			}
		})
	}
	file := os.Getenv("GATEWAY_BENCH_COMPARE_TABLE")
	if file == "" || len(results) == 0 {
		return
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Calls per path in %d interleaved slices (in an order shuffled each round); calls/s is the median over the slices, a ratio the median (quartiles in the target column) of the two paths' calls/s in each round. Load average (1, 5, 15 min) before → after:", rounds)
	for _, r := range results {
		fmt.Fprintf(&sb, " %s, %d calls: %s → %s;", r.mode, r.calls, r.load0, r.load1)
	}
	sb.WriteString("\n\n")
	if nodeNote != "" {
		sb.WriteString(nodeNote + "\n\n")
	}
	sb.WriteString("| path | protocol | mode | calls/s | p50 | p99 | server CPU µs/call | upstream CPU µs/call | × sdkproxy | × supergateway | target |\n")
	sb.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, p := range paths {
		for _, r := range results {
			m := r.measures[p.name]
			up := "–"
			if v, ok := m.cpu["upstream"]; ok {
				up = fmt.Sprintf("%.0f", v)
			}
			xs, xsg := "–", "–"
			if base, ok := r.measures[sdkproxyOf(p.protocol)]; ok {
				if q := pairedRatio(m, base); q.ok {
					xs = fmt.Sprintf("%.2f", q.med)
				}
			}
			if sg, ok := r.measures["supergateway"]; ok {
				if q := pairedRatio(m, sg); q.ok {
					xsg = fmt.Sprintf("%.2f", q.med)
				}
			}
			var targets []string
			for _, t := range compareTargets(r.measures) {
				if t.path == p.name {
					targets = append(targets, t.String())
				}
			}
			fmt.Fprintf(&sb, "| %s | %s | %s | %.0f | %s | %s | %.0f | %s | %s | %s | %s |\n",
				p.label, p.protocol, r.mode, medianRate(m), fmtDur(m.p50), fmtDur(m.p99), m.cpu["srv"], up, xs, xsg,
				either(len(targets) > 0, strings.Join(targets, "; "), "–"))
		}
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.WriteString(sb.String() + "\n"); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// benchSwitchboardPaths starts `switchboard serve` over the fixture with a
// named endpoint "bench" publishing it, and connects a client for each of
// its paths in BenchmarkCompare: /mcp in both generations, /ws, and the
// named endpoint in both generations. They share the gateway process and
// its upstream fixtures (one per generation), whose CPU time each path's
// slices count.
func benchSwitchboardPaths(b *testing.B, switchboard, fixture string, env []string) []comparePath {
	config := "[[mcp_servers]]\nid = \"fx\"\ncommand = " + quoteTOML(fixture) + "\n\n" +
		"[[endpoints]]\nname = \"bench\"\nservers = [\"fx\"]\n"
	url, pid := startServe(b, switchboard, config, env)
	base := strings.TrimSuffix(url, "/mcp")
	const tool = "mcp_fx_echo"
	connect := []struct {
		name, label, protocol string
		cs                    func() *mcp.ClientSession
	}{
		{"mcp", "switchboard /mcp", protoSession, func() *mcp.ClientSession { return benchHTTPClientAt(b, url, protoSession) }},
		{"mcp-2026", "switchboard /mcp", protoStateless, func() *mcp.ClientSession { return benchHTTPClientAt(b, url, protoStateless) }},
		{"ws", "switchboard /ws", protoSession, func() *mcp.ClientSession { return benchWSClient(b, base+"/ws", protoSession) }},
		{"named", "switchboard /e/bench/mcp (named)", protoSession, func() *mcp.ClientSession {
			return benchHTTPClientAt(b, base+"/e/bench/mcp", protoSession)
		}},
		{"named-2026", "switchboard /e/bench/mcp (named)", protoStateless, func() *mcp.ClientSession {
			return benchHTTPClientAt(b, base+"/e/bench/mcp", protoStateless)
		}},
	}
	var paths []comparePath
	for _, c := range connect {
		cs := c.cs()
		warmUp(b, cs, tool)
		paths = append(paths, comparePath{procPath: procPath{name: c.name, cs: cs, tool: tool}, label: c.label, protocol: c.protocol})
	}
	up := childrenOf(b, pid)
	if len(up) != 2 {
		b.Fatalf("switchboard serve has %d child processes, want 2 (the fixture on a connection of each generation)", len(up))
	}
	for i := range paths {
		paths[i].pids = append([]int{pid}, up...)
	}
	return paths
}

// benchWSClient connects a go-sdk client over WebSocket (the repository's
// transport.WebSocket) at protocol version protocol.
func benchWSClient(b *testing.B, url, protocol string) *mcp.ClientSession {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &transport.WebSocket{URL: url}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

var (
	// supergatewayListening matches supergateway's "Listening on port N".
	supergatewayListening = regexp.MustCompile(`Listening on port (\d+)`)
	// mcpProxyListening matches mcp-proxy's "starting server on port N".
	mcpProxyListening = regexp.MustCompile(`starting server on port (\d+)`)
)

// benchNodeGatewayPaths starts supergateway and mcp-proxy (command lines
// from interop.NodeGateways) over the fixture server on 127.0.0.1 and
// connects a client with 2025-11-25 sessions to each. A path's pids are
// the gateway's Node process, then its descendants (the fixture children
// they started for the session, and any shell in between).
func benchNodeGatewayPaths(b *testing.B, supergateway, mcpProxy []string, fixture string) []comparePath {
	env := interop.NodeEnv(supergateway[0])
	peers := []struct {
		name, label string
		listening   *regexp.Regexp
		argv        func(port string) []string
	}{
		{"supergateway", "supergateway " + interop.SupergatewayVersion, supergatewayListening, func(port string) []string {
			// --stdio is run by a shell.
			return slices.Concat(supergateway, []string{"--stdio", "'" + fixture + "'",
				"--outputTransport", "streamableHttp", "--stateful", "--port", port})
		}},
		{"mcp-proxy", "mcp-proxy " + interop.MCPProxyVersion, mcpProxyListening, func(port string) []string {
			return slices.Concat(mcpProxy, []string{"--host", "127.0.0.1", "--port", port, "--server", "stream", "--", fixture})
		}},
	}
	var paths []comparePath
	for _, p := range peers {
		port, pid := interop.StartHTTPPeerProcess(b, p.name, p.listening, func(port int) ([]string, []string) {
			return p.argv(strconv.Itoa(port)), env
		})
		cs := benchHTTPClientAt(b, "http://127.0.0.1:"+strconv.Itoa(port)+"/mcp", protoSession)
		warmUp(b, cs, "echo")
		pids := append([]int{pid}, descendantsOf(pid)...)
		if len(pids) < 2 {
			b.Fatalf("%s has no child process after its first calls; want the fixture", p.name)
		}
		paths = append(paths, comparePath{procPath: procPath{name: p.name, cs: cs, tool: "echo", pids: pids}, label: p.label, protocol: protoSession})
	}
	return paths
}

// descendantsOf returns the pids of pid's children, their children, and
// so on.
func descendantsOf(pid int) []int {
	var out []int
	for kid := range interop.Children(pid) {
		out = append(out, kid)
		out = append(out, descendantsOf(kid)...)
	}
	return out
}

// compareTarget is one of issue 31's targets, on one path of one mode.
type compareTarget struct {
	path   string // the path it is about
	what   string // "≥ 1.3× sdkproxy"
	metric string // its ratio's metric name
	// ratio is the median over the rounds of the path's calls/s over the
	// reference's in the same round; q1 and q3 its quartiles.
	ratio, q1, q3 float64
	ok            *bool // nil when the reference was not measured
}

func (t compareTarget) String() string {
	switch {
	case t.ok == nil:
		return t.what + ": not measured"
	case *t.ok:
		return fmt.Sprintf("%s (%.2f×; %.2f–%.2f): met", t.what, t.ratio, t.q1, t.q3)
	default:
		return fmt.Sprintf("%s (%.2f×; %.2f–%.2f): **not met**", t.what, t.ratio, t.q1, t.q3)
	}
}

// medianRate is the median of a path's calls/s over its slices: a slice
// that a burst of the machine's load (or a stalled call) slowed weighs no
// more than any other.
func medianRate(m procMeasure) float64 {
	_, med, _ := quartiles(m.rates)
	return med
}

// ratioQuartiles are the quartiles of a path's per-round throughput ratio.
type ratioQuartiles struct {
	q1, med, q3 float64
	ok          bool // false: no round measured both paths
}

// pairedRatio is the median and quartiles, over the rounds, of p's calls/s
// over ref's in the same round: each ratio compares two slices run one
// after the other, under about the same load.
func pairedRatio(p, ref procMeasure) ratioQuartiles {
	var rs []float64
	for r := range min(len(p.rates), len(ref.rates)) {
		if p.rates[r] > 0 && ref.rates[r] > 0 {
			rs = append(rs, p.rates[r]/ref.rates[r])
		}
	}
	if len(rs) == 0 {
		return ratioQuartiles{}
	}
	q1, med, q3 := quartiles(rs)
	return ratioQuartiles{q1: q1, med: med, q3: q3, ok: true}
}

// quartiles returns the first quartile, the median and the third quartile
// of xs (nearest rank; zeros when xs is empty).
func quartiles(xs []float64) (q1, med, q3 float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := slices.Sorted(slices.Values(xs))
	at := func(q float64) float64 { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return at(0.25), at(0.5), at(0.75)
}

// compareTargets evaluates issue 31's targets on one mode's measures:
// /mcp at ≥ 1.3× sdkproxy of its generation and ≥ 1.5× supergateway; /ws
// at ≥ 1.6× sdkproxy; a named endpoint within 5 % of /mcp's calls/s (at
// least 0.95× of it) in the same generation.
func compareTargets(ms map[string]procMeasure) []compareTarget {
	target := func(path, ref, what string, floor float64) compareTarget {
		t := compareTarget{path: path, what: what, metric: path + "/" + ref}
		p, okP := ms[path]
		r, okR := ms[ref]
		if q := pairedRatio(p, r); okP && okR && q.ok {
			t.ratio, t.q1, t.q3 = q.med, q.q1, q.q3
			met := t.ratio >= floor
			t.ok = &met
		}
		return t
	}
	return []compareTarget{
		target("mcp", "sdkproxy", "≥ 1.3× sdkproxy", 1.3),
		target("mcp", "supergateway", "≥ 1.5× supergateway", 1.5),
		target("mcp-2026", "sdkproxy-2026", "≥ 1.3× sdkproxy", 1.3),
		target("mcp-2026", "supergateway", "≥ 1.5× supergateway", 1.5),
		target("ws", "sdkproxy", "≥ 1.6× sdkproxy", 1.6),
		target("named", "mcp", "within 5 % of /mcp", 0.95),
		target("named-2026", "mcp-2026", "within 5 % of /mcp", 0.95),
	}
}

// sdkproxyOf names the sdkproxy path of protocol's generation.
func sdkproxyOf(protocol string) string {
	if protocol >= protoStateless {
		return "sdkproxy-2026"
	}
	return "sdkproxy"
}

// loadAvg returns the 1, 5 and 15 minute load averages, from /proc/loadavg.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(data))
	if err != nil || len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// fmtDur prints d in µs below a millisecond, else in ms.
func fmtDur(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%d µs", d.Microseconds())
	}
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// either returns a if cond, else b.
func either(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}
