package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// What issue 26 asks of named endpoints, measured side by side in one run
// (docs/performance.md, "Named endpoints"):
//
//	go test ./gateway -run '^$' -bench 'NamedEndpoint|EndpointsMemory' -benchtime 3000x

// endpointRounds is how many slices BenchmarkNamedEndpoint cuts each
// path's calls into, taken in turn.
const endpointRounds = 40

// BenchmarkNamedEndpoint calls tools/list and tools/call (echo of a short
// text) through /mcp and through a named endpoint of the same gateway
// (/e/code/mcp, publishing the same server), sequentially and with 16 in
// flight. Each path authenticates as it would in production: the owner's
// token on /mcp, the endpoint's own token on /e/code/mcp (the guard tries
// the owner's first, so the named path pays one more comparison). The two
// paths take turns in slices of b.N/10, as in BenchmarkToolsCall, and
// "named/mcp" is the ratio of their throughput (1.00 = the same cost).
func BenchmarkNamedEndpoint(b *testing.B) {
	bin := interop.Build(b, fixturePkg)
	const owner, codeToken = "bench-owner-token", "bench-code-token"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := namedEndpoint("code", []string{"fx"})
	code.AuthToken = codeToken
	g, err := gateway.Start(ctx, []config.Server{{ID: "fx", Transport: config.TransportStdio, Command: bin}}, nil,
		&gateway.Options{Endpoints: []gateway.Endpoint{{}, code}})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(g.Handler(&gateway.HTTPOptions{Guard: guard.Options{Loopback: true, AuthToken: owner}}))
	b.Cleanup(func() {
		ts.CloseClientConnections()
		g.Close()
		ts.Close()
	})
	paths := []struct{ name, url, token string }{
		{"mcp", ts.URL + "/mcp", owner},
		{"named", ts.URL + "/e/code/mcp", codeToken},
	}
	ops := []struct {
		name string
		do   func(*mcp.ClientSession) error
	}{
		{"tools_list", func(cs *mcp.ClientSession) error {
			_, err := cs.ListTools(context.Background(), nil)
			return err
		}},
		{"tools_call", func(cs *mcp.ClientSession) error {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_fx_echo", Arguments: map[string]any{"text": "hello"}})
			if err == nil && res.IsError {
				err = fmt.Errorf("tool error: %v", res.Content)
			}
			return err
		}},
	}
	for _, op := range ops {
		for _, conc := range []int{1, benchConcurrency} {
			mode := "seq"
			if conc > 1 {
				mode = fmt.Sprintf("c%d", conc)
			}
			b.Run(op.name+"/"+mode, func(b *testing.B) {
				sessions := make([]*mcp.ClientSession, len(paths))
				for i, p := range paths {
					sessions[i] = benchBearerClient(b, p.url, p.token)
					for range 20 { // warm up
						if err := op.do(sessions[i]); err != nil {
							b.Fatal(err)
						}
					}
				}
				runs := make([]callRun, len(paths))
				b.ResetTimer()
				for r := range endpointRounds {
					n := b.N/endpointRounds + boolInt(r < b.N%endpointRounds)
					for k := range paths {
						i := (k + r) % len(paths) // each path first in every other round
						runs[i].add(runOps(b, sessions[i], op.do, conc, n))
					}
				}
				b.StopTimer()
				st := map[string]callStats{}
				for i, p := range paths {
					st[p.name] = runs[i].stats()
					b.ReportMetric(st[p.name].perSec, p.name+"-ops/s")
					b.ReportMetric(float64(st[p.name].p50.Microseconds()), p.name+"-p50-µs")
				}
				b.ReportMetric(st["named"].perSec/st["mcp"].perSec, "named/mcp")
				b.ReportMetric(float64(st["named"].p50)/float64(st["mcp"].p50), "named-p50/mcp-p50")
			})
		}
	}
}

// benchBearerClient is benchHTTPClient with a bearer token.
func benchBearerClient(b *testing.B, url, token string) *mcp.ClientSession {
	tr := &http.Transport{MaxIdleConnsPerHost: 2 * benchConcurrency}
	hc := &http.Client{Transport: bearerTransport{token, tr}}
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: benchProtocol})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cs.Close()
		tr.CloseIdleConnections()
	})
	return cs
}

type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(r)
}

// runOps runs do n times on cs, conc at a time, and times each.
func runOps(b *testing.B, cs *mcp.ClientSession, do func(*mcp.ClientSession) error, conc, n int) ([]time.Duration, time.Duration) {
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	start := time.Now()
	for range conc {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				t0 := time.Now()
				err := do(cs)
				lat[i] = time.Since(t0)
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	return lat, elapsed
}

// The shape BenchmarkEndpointsMemory measures: endpoints over servers,
// each server offering its 12 tools and toolsPerServer more, each
// endpoint publishing serversPerEndpoint of them.
const (
	memServers         = 20
	memEndpoints       = 100
	toolsPerServer     = 20
	serversPerEndpoint = 5
)

// BenchmarkEndpointsMemory measures what named endpoints cost in memory:
// over one started host of 20 servers (stdio children, whose memory is
// theirs), a gateway with /mcp alone is built and mounted on a guard, then
// one with /mcp and 100 named endpoints (each with its own token and 5 of
// the servers: 160 tools each); the heap in use is read after a GC
// before and after each. "endpoints-MB" is what the 100 endpoints add,
// the second gateway's heap less the first's. The figure is taken once
// per run of the function, whatever b.N.
func BenchmarkEndpointsMemory(b *testing.B) {
	bin := interop.Build(b, fixturePkg)
	var servers []config.Server
	for i := range memServers {
		servers = append(servers, config.Server{ID: fmt.Sprintf("s%02d", i), Transport: config.TransportStdio, Command: bin,
			Args: []string{"-tools", fmt.Sprint(toolsPerServer)}})
	}
	h, err := host.New(servers, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		b.Fatal(err)
	}
	named := make([]gateway.Endpoint, 0, memEndpoints+1)
	named = append(named, gateway.Endpoint{})
	for i := range memEndpoints {
		var ids []string
		for j := range serversPerEndpoint {
			ids = append(ids, servers[(i+j)%memServers].ID)
		}
		e := namedEndpoint(fmt.Sprintf("ep%03d", i), ids)
		e.AuthToken = fmt.Sprintf("token-of-ep%03d", i)
		named = append(named, e)
	}
	build := func(eps []gateway.Endpoint) (*gateway.Gateway, http.Handler) {
		g, err := gateway.New(h, &gateway.Options{Endpoints: eps})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { g.Close() })
		return g, g.Handler(&gateway.HTTPOptions{Guard: guard.Options{Loopback: true, AuthToken: "owner"}})
	}
	m0 := memNow()
	_, h1 := build(nil)
	m1 := memNow()
	_, h2 := build(named)
	m2 := memNow()
	one := float64(int64(m1.heap) - int64(m0.heap))
	all := float64(int64(m2.heap) - int64(m1.heap))
	tools, err := listTools(h2, "/e/ep000/mcp", "token-of-ep000")
	if err != nil {
		b.Fatal(err)
	}
	runtime.KeepAlive(h1)
	for range b.N { // the figure is the same whatever b.N
	}
	b.ReportMetric(one/(1<<20), "mcp-alone-MB")
	b.ReportMetric(all/(1<<20), "mcp+100-MB")
	b.ReportMetric((all-one)/(1<<20), "endpoints-MB")
	b.ReportMetric((all-one)/memEndpoints/1024, "KiB/endpoint")
	b.ReportMetric(float64(tools), "tools/endpoint")
}

// listTools counts the tools the endpoint at path of the gateway hd serves
// lists.
func listTools(hd http.Handler, path, token string) (int, error) {
	ts := httptest.NewServer(hd)
	defer ts.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + path,
		HTTPClient: &http.Client{Transport: bearerTransport{token, http.DefaultTransport}}}, nil)
	if err != nil {
		return 0, err
	}
	defer cs.Close()
	n := 0
	for _, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}
