package daemon_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
)

// TestRetryReachesTheReplicaHoldingTheCall: two replicas on one
// PostgreSQL, an upstream that speaks only 2025-11-25 and elicits in the
// middle of a call, and a stateless 2026-07-28 client whose first round
// reaches A and whose retry, with the answer, reaches B (as a balancer may
// send it): B forwards it to A, where the upstream call waits, and the
// client gets the call's result. The requestState is signed: altered, it
// is refused; naming a replica that has stopped, it is refused with an
// error saying so.
func TestRetryReachesTheReplicaHoldingTheCall(t *testing.T) {
	db := pgDatabase(t, "retries")
	cfg := &config.Config{Servers: []config.Server{fixture(t, "old", "-protocol-version", "2025-11-25")}}
	ra := run(t, cfg, openDB(t, db), nil)
	rb := run(t, cfg, openDB(t, db), nil)
	ra.awaitReady(t)
	rb.awaitReady(t)
	ctx := context.Background()
	// B's client is a browser page of B's own origin: the forward keeps
	// the request's Host, so A sees the same origin as B did.
	a, b := statelessClient(t, ra.url, ""), statelessClient(t, rb.url, rb.url)

	first := func() (*mcp.CallToolResult, string) {
		t.Helper()
		res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_old_elicit", Arguments: map[string]any{}})
		if err != nil || res.RequestState == "" || len(res.InputRequests) != 1 {
			t.Fatalf("first round on A: %+v, %v; want an input-required result", res, err)
		}
		for k := range res.InputRequests {
			return res, k
		}
		panic("unreachable")
	}
	retry := func(state, key string) (*mcp.CallToolResult, error) {
		return b.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_old_elicit", Arguments: map[string]any{}, RequestState: state,
			InputResponses: mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Across"}}}})
	}

	res, key := first()
	got, err := retry(res.RequestState, key)
	if err != nil || got.IsError || !strings.Contains(textOf(got), "Across") {
		t.Fatalf("the retry on B: %+v, %v; want A's call's result with the answer", got, err)
	}

	// Altered: one character of the signed part changed. Refused, and the
	// call it would name still waits for its real retry.
	res, key = first()
	i := strings.Index(res.RequestState, ".") + 3
	c := byte('A')
	if res.RequestState[i] == 'A' {
		c = 'B'
	}
	forged := res.RequestState[:i] + string(c) + res.RequestState[i+1:]
	if got, err := retry(forged, key); err == nil {
		t.Errorf("an altered requestState was taken: %+v", got)
	} else if !strings.Contains(err.Error(), "requestState") {
		t.Errorf("an altered requestState: %v, want a refusal naming requestState", err)
	}
	if got, err := retry(res.RequestState, key); err != nil || !strings.Contains(textOf(got), "Across") {
		t.Errorf("the retry after an altered one: %+v, %v", got, err)
	}

	// A stops while its call waits: B says so.
	res, key = first()
	a.Close()
	ra.shutdown(t)
	if got, err := retry(res.RequestState, key); err == nil || !strings.Contains(err.Error(), "has stopped") {
		t.Errorf("a retry for a replica that stopped: %+v, %v; want an error saying it has stopped", got, err)
	}
}

// TestRetryForwardedWithTheToken: with [gateway] auth_token, the retry
// that B forwards to A carries the client's Authorization header, which
// B's guard took off before any handler saw it: A authenticates the
// client as B did, and the client gets its call's result.
func TestRetryForwardedWithTheToken(t *testing.T) {
	db := pgDatabase(t, "retries_token")
	const token = "replica-token-5e0a7c"
	t.Setenv("SB_REPLICA_TOKEN", token)
	cfg := &config.Config{Servers: []config.Server{fixture(t, "old", "-protocol-version", "2025-11-25")}}
	cfg.Gateway.AuthToken = "{{env.SB_REPLICA_TOKEN}}"
	ra := run(t, cfg, openDB(t, db), nil)
	// Up before B starts: B's check for goroutines left counts A's as
	// they were then. That includes the session of the 2026-07-28 calls
	// A serves itself (gateway/fastcall.go), made by its first such call.
	ra.awaitReady(t)
	if _, err := statelessClientVia(t, ra.url, bearerRT{token}).CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_old_echo", Arguments: map[string]any{"text": "warm"}}); err != nil {
		t.Fatal(err)
	}
	rb := run(t, cfg, openDB(t, db), nil)
	// Before run's check for goroutines left: this test's own clients'.
	t.Cleanup(http.DefaultTransport.(*http.Transport).CloseIdleConnections)
	rb.awaitReady(t)
	ctx := context.Background()
	a, b := statelessClientVia(t, ra.url, bearerRT{token}), statelessClientVia(t, rb.url, bearerRT{token})
	res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_old_elicit", Arguments: map[string]any{}})
	if err != nil || res.RequestState == "" || len(res.InputRequests) != 1 {
		t.Fatalf("first round on A: %+v, %v; want an input-required result", res, err)
	}
	var key string
	for k := range res.InputRequests {
		key = k
	}
	got, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_old_elicit", Arguments: map[string]any{}, RequestState: res.RequestState,
		InputResponses: mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Across"}}}})
	if err != nil || got.IsError || !strings.Contains(textOf(got), "Across") {
		t.Fatalf("the retry on B: %+v, %v; want A's call's result with the answer", got, err)
	}
}

// statelessClient is a 2026-07-28 client of the gateway at url that
// handles input-required results itself (the test sends each round),
// sending origin as its Origin header when set.
func statelessClient(t *testing.T, url, origin string) *mcp.ClientSession {
	t.Helper()
	return statelessClientVia(t, url, originTransport{origin})
}

// statelessClientVia is statelessClient over rt.
func statelessClientVia(t *testing.T, url string, rt http.RoundTripper) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "stateless", Version: "1"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	hc := &http.Client{Transport: rt}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// textOf is a result's text blocks, joined; "" for nil.
func textOf(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// originTransport sets the Origin header of each request, when it has one.
type originTransport struct{ origin string }

func (o originTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if o.origin != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Origin", o.origin)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestRequestStateKeyFromSecrets: with [state] encryption_key, the key
// that signs requestStates comes from each replica's secrets, not from the
// database: two replicas given the same key verify each other's (B
// forwards A's call's retry), and a replica on the same database given
// another key refuses them, which it would not with the database's key;
// one given another key with A's among its encryption_key_fallbacks (a
// rotation) verifies them.
func TestRequestStateKeyFromSecrets(t *testing.T) {
	db := pgDatabase(t, "state_key")
	t.Setenv("SB_STATE_KEY", "request-state-test-key-0123456789abcdef")
	t.Setenv("SB_OTHER_KEY", "request-state-other-key-0123456789abcdef")
	cfg := &config.Config{Servers: []config.Server{fixture(t, "old", "-protocol-version", "2025-11-25")},
		State: config.State{EncryptionKey: "{{env.SB_STATE_KEY}}"}}
	other := *cfg
	other.State.EncryptionKey = "{{env.SB_OTHER_KEY}}"
	// D is rotating: the other key signs, A's verifies (a fallback).
	rotating := other
	rotating.State.EncryptionKeyFallbacks = []string{"{{env.SB_STATE_KEY}}"}
	ra := run(t, cfg, openDB(t, db), nil)
	rb := run(t, cfg, openDB(t, db), nil)
	rc := run(t, &other, openDB(t, db), nil)
	rd := run(t, &rotating, openDB(t, db), nil)
	for _, r := range []*running{ra, rb, rc, rd} {
		r.awaitReady(t)
	}
	ctx := context.Background()
	a, b, c := statelessClient(t, ra.url, ""), statelessClient(t, rb.url, rb.url), statelessClient(t, rc.url, rc.url)
	d := statelessClient(t, rd.url, rd.url)
	// A call held on A; its requestState retried on another replica.
	held := func() func(cs *mcp.ClientSession) (*mcp.CallToolResult, error) {
		t.Helper()
		res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_old_elicit", Arguments: map[string]any{}})
		if err != nil || res.RequestState == "" || len(res.InputRequests) != 1 {
			t.Fatalf("first round on A: %+v, %v; want an input-required result", res, err)
		}
		var key string
		for k := range res.InputRequests {
			key = k
		}
		return func(cs *mcp.ClientSession) (*mcp.CallToolResult, error) {
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_old_elicit", Arguments: map[string]any{}, RequestState: res.RequestState,
				InputResponses: mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Keyed"}}}})
		}
	}
	retry := held()
	if got, err := retry(c); err == nil || !strings.Contains(err.Error(), "requestState") {
		t.Errorf("a replica with another encryption_key: %+v, %v; want the requestState refused", got, err)
	}
	if got, err := retry(b); err != nil || !strings.Contains(textOf(got), "Keyed") {
		t.Errorf("the retry on B, which has A's key: %+v, %v; want A's call's result", got, err)
	}
	if got, err := held()(d); err != nil || !strings.Contains(textOf(got), "Keyed") {
		t.Errorf("the retry on D, whose encryption_key_fallbacks has A's key: %+v, %v; want A's call's result", got, err)
	}
	// Stopped here, every replica's calls and sessions over, for each
	// one's leak check.
	for _, cs := range []*mcp.ClientSession{a, b, c, d} {
		cs.Close()
	}
	for _, r := range []*running{rd, rc, rb, ra} {
		r.shutdown(t)
	}
}
