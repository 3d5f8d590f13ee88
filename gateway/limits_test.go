package gateway_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// TestRequestsBounded: past Options.MaxRequests requests in flight, the
// gateway refuses the next one at once with a JSON-RPC error naming the
// bound, and serves again once one ends. Before, nothing bounded them:
// the go-sdk hands each call of a session a goroutine of its own, and a
// client could hold any number of upstream calls open.
func TestRequestsBounded(t *testing.T) {
	logs := &interop.LogBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, []config.Server{fixture(t, "fx")}, &host.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))},
		&gateway.Options{MaxRequests: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "d", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	slow, stop := context.WithCancel(ctx)
	done := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := cs.CallTool(slow, &mcp.CallToolParams{Name: "mcp_fx_slow", Arguments: map[string]any{"ms": 600000}})
			done <- err
		}()
	}
	wait.For(t, "the calls to reach the upstream", func() (string, bool) {
		s := logs.String()
		return s, strings.Count(s, "slow: started") >= 3
	})
	_, err = cs.ListTools(ctx, nil)
	if want := "3 requests in flight already, the bound ([gateway] max_requests)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a fourth request: %v; want an error saying %q", err, want)
	}
	stop()
	for range 3 {
		<-done
	}
	// The cancelled calls' requests end as their handlers return: the
	// next request is served once they have, bounded.
	wait.For(t, "a request served after the calls ended", func() (error, bool) {
		_, err := cs.ListTools(ctx, nil)
		return err, err == nil
	})
}

// TestSubscriptionsFollowSessions: the gateway subscribes upstream once per
// resource for the first session that subscribes, and unsubscribes with
// the last, whether that session unsubscribes or ends; one session holds at
// most MaxSessionSubscriptions. Before, a session that ended kept its
// subscriptions upstream for good, and a client could subscribe to any
// number of a template's URIs.
func TestSubscriptionsFollowSessions(t *testing.T) {
	logs := &interop.LogBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, []config.Server{fixture(t, "fx", "-subscribe")}, &host.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	session := func() *mcp.ClientSession {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := g.Server().Connect(ctx, st, nil); err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "d", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	uri := func(i int) string { return fmt.Sprintf("test://item/%d", i) }
	subscribe := func(cs *mcp.ClientSession, i int) error {
		return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri(i)})
	}
	// waitLog waits for n lines saying what, bounded.
	waitLog := func(what string, n int) {
		t.Helper()
		wait.For(t, fmt.Sprintf("%d × %q in the log", n, what), func() (string, bool) {
			s := logs.String()
			return s, strings.Count(s, what) >= n
		})
	}
	a, b := session(), session()
	for _, err := range []error{subscribe(a, 1), subscribe(a, 2), subscribe(b, 1), subscribe(a, 1)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	// a ends: item 2 is unsubscribed upstream, item 1 is b's still.
	a.Close()
	waitLog("testserver: unsubscribe "+uri(2), 1)
	// The fixture's lines come in order, and the host logs them as they
	// come: every subscription is logged by now, not always right after
	// it was answered.
	if n := strings.Count(logs.String(), "testserver: subscribe "); n != 2 {
		t.Errorf("%d upstream subscriptions, want 2 (item 1 once for both sessions, item 2):\n%s", n, logs)
	}
	if strings.Contains(logs.String(), "testserver: unsubscribe "+uri(1)) {
		t.Errorf("item 1 unsubscribed while b holds it:\n%s", logs)
	}
	// b ends: item 1 too.
	b.Close()
	waitLog("testserver: unsubscribe "+uri(1), 1)

	// One session holds at most MaxSessionSubscriptions.
	c := session()
	defer c.Close()
	for i := range gateway.MaxSessionSubscriptions {
		if err := subscribe(c, 100+i); err != nil {
			t.Fatalf("subscription %d: %v", i, err)
		}
	}
	err = subscribe(c, 99)
	if want := fmt.Sprintf("holds %d resource subscriptions already", gateway.MaxSessionSubscriptions); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("one subscription more: %v; want an error saying %q", err, want)
	}
	if err := subscribe(c, 100); err != nil {
		t.Errorf("a subscription the session holds, again: %v", err)
	}
}

// TestEndpointsShareSubscriptions: sessions of two endpoints that publish
// one server hold its resource subscriptions together: the upstream is
// unsubscribed with the last of them, whatever endpoint it came by.
func TestEndpointsShareSubscriptions(t *testing.T) {
	logs := &interop.LogBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := gateway.Start(ctx, []config.Server{fixture(t, "fx", "-subscribe")}, &host.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))},
		&gateway.Options{Endpoints: []gateway.Endpoint{{Path: "/a"}, {Path: "/b"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ts := httptest.NewServer(g.Handler(&gateway.HTTPOptions{Guard: guard.Options{Loopback: true}}))
	defer ts.Close()
	defer ts.CloseClientConnections()
	const uri = "test://item/1"
	var sessions []*mcp.ClientSession
	for _, p := range []string{"/a", "/b"} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "d", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + p}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("%s: subscribe: %v", p, err)
		}
		sessions = append(sessions, cs)
	}
	// The gateway unsubscribes upstream with the last session, before it
	// answers it: none after the first (a line the fixture writes then
	// might still be on its way: the check can pass wrongly, never fail).
	if err := sessions[0].Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "testserver: unsubscribe ") {
		t.Errorf("unsubscribed upstream while the other endpoint's session holds it:\n%s", logs)
	}
	if err := sessions[1].Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "testserver: unsubscribe "+uri) {
		if time.Now().After(deadline) {
			t.Fatalf("not unsubscribed upstream within 10 s of the last session's unsubscribe:\n%s", logs)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, bounded
	}
	// The fixture's lines come in order: every subscription is logged.
	if n := strings.Count(logs.String(), "testserver: subscribe "); n != 1 {
		t.Errorf("%d upstream subscriptions, want 1 for both endpoints' sessions:\n%s", n, logs)
	}
}
