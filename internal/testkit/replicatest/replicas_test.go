package replicatest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// TestReplicas: two `switchboard serve` replicas on one PostgreSQL behind
// HAProxy configured by examples/haproxy/haproxy.cfg (issue 18 §2, §3).
// Clients of both protocol generations call tools through the balancer; a
// server added on one replica is served by the other; a 2025-11-25 session
// whose replica dies is answered 404 by the other one, and the client's new
// session works. A named endpoint (issue 26) is served through the
// balancer as /mcp is, and one added on one replica by both.
func TestReplicas(t *testing.T) {
	c := newCluster(t, clusterOptions{config: opsEndpoint, env: []string{"SB_OPS_TOKEN=" + opsToken}})
	c.startReplicas(t, 2)
	lb := balancer(t, c.replicas...)
	ctx := context.Background()

	t.Run("both generations", func(t *testing.T) {
		// A 2025-11-25 session lives on the replica that created it: every
		// call of it goes there (the other would answer 404), though the
		// balancer takes turns for everything else.
		cs := connect(t, lb.URL, "2025-11-25", nil)
		var holder string
		for i := range 6 {
			got, err := c.whereCalled(ctx, cs)
			if err != nil {
				t.Fatalf("2025-11-25 call %d through the balancer: %v", i+1, err)
			}
			if i == 0 {
				holder = got
			} else if got != holder {
				t.Errorf("2025-11-25 call %d answered by %s, the session's first by %s", i+1, got, holder)
			}
		}
		// 2026-07-28 requests are stateless: the balancer takes turns,
		// and both replicas answer calls of one client.
		cs26 := connect(t, lb.URL, "2026-07-28", nil)
		seen := map[string]int{}
		for i := range 6 {
			got, err := c.whereCalled(ctx, cs26)
			if err != nil {
				t.Fatalf("2026-07-28 call %d through the balancer: %v", i+1, err)
			}
			seen[got]++
		}
		if len(seen) != 2 {
			t.Errorf("2026-07-28 calls answered by %v; want both replicas", seen)
		}
	})

	t.Run("server added on one", func(t *testing.T) {
		a, b := c.replicas[0], c.replicas[1]
		body := fmt.Sprintf(`{"id":"late","command":%q,"args":["-tool-name","late_tool"]}`, c.fixture)
		if status, answer := apiCall(t, "POST", a.url+"/api/v1/servers", body); status != http.StatusCreated {
			t.Fatalf("POST /api/v1/servers on %s: %d %s", a.name, status, answer)
		}
		// A client of the balancer whose session B holds.
		var cs *mcp.ClientSession
		for range 4 {
			s := connect(t, lb.URL, "2025-11-25", nil)
			if where, err := c.whereCalled(ctx, s); err != nil {
				t.Fatal(err)
			} else if where == b.name {
				cs = s
				break
			}
		}
		if cs == nil {
			t.Fatalf("four sessions through the balancer, none on %s", b.name)
		}
		// B learns of the server through the database (LISTEN/NOTIFY)
		// and starts it: its tool appears; no event of B's reaches this
		// client before it lists again.
		wait.For(t, fmt.Sprintf("the tool of a server added on %s listed by %s", a.name, b.name), func() (string, bool) {
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("%s's output:\n%s", b.name, b.out), slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == "mcp_late_late_tool" })
		})
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_late_late_tool", Arguments: map[string]any{}})
		if err != nil || res.IsError || len(res.Content) == 0 || res.Content[0].(*mcp.TextContent).Text != "called late_tool" {
			t.Fatalf("calling the added server's tool on %s: %+v, %v", b.name, res, err)
		}
		if where, err := c.whereCalled(ctx, cs); err != nil || where != b.name {
			t.Errorf("the session moved: %q, %v", where, err)
		}
	})

	t.Run("named endpoint", func(t *testing.T) {
		// Its view is its own on every replica, in both generations, and
		// the server added on A above is in none of it; its token opens it
		// alone.
		ops := &recorder{keep: true, token: opsToken, inner: &http.Transport{}}
		want := []string{"mcp_fx_echo", "mcp_fx_env"}
		for _, version := range []string{"2025-11-25", "2026-07-28"} {
			cs := connectTo(t, lb.URL, "/e/ops/mcp", version, ops)
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("%s tools/list of /e/ops/mcp: %v", version, err)
			}
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, want) {
				t.Errorf("%s: /e/ops/mcp lists %v through the balancer, want %v", version, names, want)
			}
			seen := map[string]int{}
			for i := range 6 {
				got, err := c.whereCalled(ctx, cs)
				if err != nil {
					t.Fatalf("%s call %d of /e/ops/mcp: %v", version, i+1, err)
				}
				seen[got]++
			}
			if version == "2025-11-25" && len(seen) != 1 || version == "2026-07-28" && len(seen) != 2 {
				t.Errorf("%s calls of /e/ops/mcp answered by %v; want one replica for a session, both when stateless", version, seen)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_fx_add", Arguments: map[string]any{"a": 1, "b": 2}}); err == nil ||
				!strings.Contains(err.Error(), "mcp_fx_add") {
				t.Errorf("%s: mcp_fx_add, outside /e/ops/mcp's tools, called through it: %v", version, err)
			}
		}
		if status := initialize(t, lb.URL+"/mcp", opsToken); status != http.StatusForbidden {
			t.Errorf("the ops endpoint's token on /mcp through the balancer: %d, want 403", status)
		}

		// An endpoint added on A is served by B too.
		a := c.replicas[0]
		if status, answer := apiCall(t, "POST", a.url+"/api/v1/endpoints", `{"name":"late-ep","servers":["fx"],"tools":["fx_env"]}`); status != http.StatusCreated {
			t.Fatalf("POST /api/v1/endpoints on %s: %d %s", a.name, status, answer)
		}
		for _, r := range c.replicas {
			wait.For(t, fmt.Sprintf("/e/late-ep/mcp served by %s", r.name), func() (string, bool) {
				status := initialize(t, r.url+"/e/late-ep/mcp", token)
				return fmt.Sprintf("last answer %d; %s's output:\n%s", status, r.name, r.out), status == http.StatusOK
			})
		}
		cs := connectTo(t, lb.URL, "/e/late-ep/mcp", "2026-07-28", nil)
		seen := map[string]int{}
		for i := range 6 {
			got, err := c.whereCalled(ctx, cs)
			if err != nil {
				t.Fatalf("call %d of /e/late-ep/mcp: %v", i+1, err)
			}
			seen[got]++
		}
		if len(seen) != 2 {
			t.Errorf("2026-07-28 calls of an endpoint added on %s answered by %v; want both replicas", a.name, seen)
		}
	})

	t.Run("pin approved on one", func(t *testing.T) {
		// Each replica runs its own child of a server under pin =
		// "first-use": both trust the first definitions (one first use
		// in the database). The rug pull in each child holds weather on
		// each replica; approved on A, B hears it (NOTIFY) and offers it.
		a, b := c.replicas[0], c.replicas[1]
		body := fmt.Sprintf(`{"id":"rp","command":%q,"args":["-rug-pull"],"pin":"first-use"}`, c.fixture)
		if status, answer := apiCall(t, "POST", a.url+"/api/v1/servers", body); status != http.StatusCreated {
			t.Fatalf("POST /api/v1/servers on %s: %d %s", a.name, status, answer)
		}
		for _, r := range c.replicas {
			wait.For(t, "weather offered by "+r.name, func() (string, bool) {
				status, answer, err := apiDo("GET", r.url+"/api/v1/tools/mcp_rp_weather", "")
				return fmt.Sprint(status, " ", string(answer), err), status == http.StatusOK
			})
			if status, answer := apiCall(t, "POST", r.url+"/api/v1/tools/mcp_rp_rug_pull/call", `{}`); status != http.StatusOK {
				t.Fatalf("rug_pull on %s: %d %s", r.name, status, answer)
			}
		}
		var digest string
		for _, r := range c.replicas {
			wait.For(t, "weather held on "+r.name, func() (string, bool) {
				status, answer := apiCall(t, "POST", r.url+"/api/v1/tools/mcp_rp_weather/call", `{}`)
				return fmt.Sprint(status, " ", string(answer)), status == http.StatusConflict && strings.Contains(string(answer), "tool_held")
			})
		}
		_, answer := apiCall(t, "GET", b.url+"/api/v1/tool-changes?server=rp", "")
		var changes struct {
			Items []struct{ Tool, Digest string } `json:"items"`
		}
		if err := json.Unmarshal(answer, &changes); err != nil || len(changes.Items) != 1 || changes.Items[0].Tool != "weather" {
			t.Fatalf("tool changes on %s: %v %s", b.name, err, answer)
		}
		digest = changes.Items[0].Digest
		if status, answer := apiCall(t, "POST", a.url+"/api/v1/tool-changes/approve", fmt.Sprintf(`{"server":"rp","tool":"weather","digest":%q}`, digest)); status != http.StatusOK {
			t.Fatalf("approve on %s: %d %s", a.name, status, answer)
		}
		wait.For(t, fmt.Sprintf("weather approved on %s offered by %s", a.name, b.name), func() (string, bool) {
			status, answer := apiCall(t, "GET", b.url+"/api/v1/tools/mcp_rp_weather", "")
			return fmt.Sprintf("%d %s; %s's output:\n%s", status, answer, b.name, b.out), status == http.StatusOK && strings.Contains(string(answer), "aws/credentials")
		})
	})

	t.Run("session of a dead replica", func(t *testing.T) {
		rec := newRecorder()
		cs := connect(t, lb.URL, "2025-11-25", rec)
		where, err := c.whereCalled(ctx, cs)
		if err != nil {
			t.Fatal(err)
		}
		holder := c.byName(t, where)
		survivor := c.other(holder)
		sid := cs.ID()
		if sid == "" {
			t.Fatal("a 2025-11-25 session without Mcp-Session-Id")
		}
		// The survivor never had the session: sent straight to it, the
		// session's request is answered 404.
		if status := postWithSession(t, survivor.url, sid); status != http.StatusNotFound {
			t.Errorf("a request of %s's session sent straight to %s: %d, want 404", holder.name, survivor.name, status)
		}

		holder.kill(t)
		before := len(rec.exchanges())
		call := func() error {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_fx_echo", Arguments: map[string]any{"text": "after the kill"}})
			return err
		}
		// The go-sdk client keeps its session after a connection closed
		// without an answer (ErrRejected): the call after it is the one
		// answered 404.
		err = afterDeath(t, call)
		if !errors.Is(err, mcp.ErrSessionMissing) {
			t.Errorf("the next call of a session whose replica died: %v; want %v", err, mcp.ErrSessionMissing)
		}
		// What the client got for its session's requests since the kill:
		// 404s only (from the survivor: the other replica is gone).
		var statuses []int
		for _, x := range rec.exchanges()[before:] {
			if x.session == sid {
				statuses = append(statuses, x.status)
			}
		}
		if len(statuses) == 0 || slices.ContainsFunc(statuses, func(s int) bool { return s != http.StatusNotFound }) {
			t.Errorf("the session's requests after the kill were answered %v; want 404s", statuses)
		}
		// The client starts again: a new session, on the survivor.
		cs2 := connect(t, lb.URL, "2025-11-25", nil)
		if where, err := c.whereCalled(ctx, cs2); err != nil || where != survivor.name {
			t.Errorf("a new session after the kill: answered by %q, %v; want %s", where, err, survivor.name)
		}
	})
}

// replicatedWorkflow notes the replica it runs on (a call that the fixture
// logs), waits at a gate for a person, then makes a second logged call.
const replicatedWorkflow = `id: replicated
description: Notes where it runs, waits for a person, then echoes
steps:
  - id: where
    tool: mcp_fx_env
    arguments: {name: HOME}
  - id: confirm
    needs: [where]
    gate:
      message: "Go on?"
      schema:
        type: object
        properties:
          go: {type: boolean}
        required: [go]
      timeout: 1h
      on_timeout: fail
  - id: after
    needs: [confirm]
    tool: mcp_fx_echo
    arguments: {text: after the gate}
`

// TestWorkflowSurvivesReplica: a workflow run started through the
// balancer is waiting at its gate when its replica is killed (SIGKILL);
// the gate is answered through the balancer, and the other replica adopts
// the run and finishes it, no tool step called twice (the fixture logs
// every call of either replica into one file).
func TestWorkflowSurvivesReplica(t *testing.T) {
	c := startCluster(t, 2, map[string]string{"replicated.yaml": replicatedWorkflow})
	lb := balancer(t, c.replicas...)

	status, answer := apiCall(t, "POST", lb.URL+"/api/v1/workflows/replicated/runs", `{"inputs":{}}`)
	if status != http.StatusCreated {
		t.Fatalf("starting a run through the balancer: %d %s", status, answer)
	}
	var run struct{ ID string }
	if err := json.Unmarshal(answer, &run); err != nil || run.ID == "" {
		t.Fatalf("the started run %s: %v", answer, err)
	}
	evs := follow(t, lb.URL, run.ID, 0, func(ev event) bool { return ev.Type == "gate:waiting" })
	var runner *replica
	for _, ev := range evs {
		if ev.Type == "step:completed" && ev.Step == "where" {
			if name := c.nameIn(string(ev.Result)); name != "" {
				runner = c.byName(t, name)
			}
		}
	}
	if runner == nil {
		t.Fatalf("no step:completed of where naming a replica in %+v", evs)
	}
	survivor := c.other(runner)
	runner.kill(t)
	killed := time.Now()

	// Through the balancer, so on the survivor: the gate is answered
	// there while the run still belongs to the dead replica.
	err := afterDeath(t, func() (err error) {
		status, answer, err = apiDo("POST", lb.URL+"/api/v1/runs/"+run.ID+"/answer", `{"gate":"confirm","answer":{"action":"accept","content":{"go":true}}}`)
		return err
	})
	if err != nil {
		t.Fatalf("answering the gate through the balancer after %s died: %v", runner.name, err)
	}
	if status != http.StatusOK {
		t.Fatalf("answering the gate through the balancer after %s died: %d %s", runner.name, status, answer)
	}
	rest := follow(t, lb.URL, run.ID, evs[len(evs)-1].Seq, func(ev event) bool { return ev.terminal() })
	if last := rest[len(rest)-1]; last.Type != "run:completed" {
		t.Fatalf("the run ended with %+v; %s's output:\n%s", last, survivor.name, survivor.out)
	}
	t.Logf("%s killed at the gate; the run completed on %s %v later", runner.name, survivor.name, time.Since(killed).Round(time.Millisecond))
	c.checkEachStepOnce(t)
}

// checkEachStepOnce checks that the fixture logged each tool step of
// replicatedWorkflow once, whichever replica made the call.
func (c *cluster) checkEachStepOnce(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(c.callLog)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		calls[l]++
	}
	want := map[string]int{`env {"name":"HOME"}`: 1, `echo {"text":"after the gate"}`: 1}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("the fixture's calls: %v; want each step's once: %v", calls, want)
	}
}

// event is a workflow run's event as the API's SSE stream gives it.
type event struct {
	Type   string          `json:"type"`
	Seq    int64           `json:"seq"`
	Step   string          `json:"step"`
	Result json.RawMessage `json:"result"`
}

func (ev event) terminal() bool {
	return ev.Type == "run:completed" || ev.Type == "run:failed" || ev.Type == "run:cancelled"
}

// followTimeout bounds a wait on a run's events: a run adopted by another
// replica resumes once the dead replica's executor lock has been seen free
// for workflow.AdoptGrace (10 s), at the next look for pending runs
// (daemon.AdoptInterval, every 5 s): 11 to 20 s after its replica's death,
// measured.
const followTimeout = 90 * time.Second

// follow reads the run's events after seq from base's SSE stream until one
// satisfies until, and returns them.
func follow(t *testing.T, base, run string, after int64, until func(event) bool) []event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), followTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/runs/"+run+"/events?after="+strconv.FormatInt(after, 10), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET the run's events: %d %s", resp.StatusCode, b)
	}
	var evs []event
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev event
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("an event %q: %v", data, err)
		}
		evs = append(evs, ev)
		if until(ev) {
			return evs
		}
	}
	// Where the run is, as the replica sees it, for the failure to say.
	_, state, _ := apiDo("GET", base+"/api/v1/runs/"+run, "")
	t.Fatalf("the run's event stream ended (%v) before the awaited event; got %+v; the run on %s: %s", sc.Err(), evs, base, state)
	return nil
}

// apiCall sends a management API request with the token and the CSRF
// header, and returns the status and the body.
func apiCall(t *testing.T, method, url, body string) (int, []byte) {
	t.Helper()
	status, b, err := apiDo(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return status, b
}

// apiDo is apiCall returning its error.
func apiDo(method, url, body string) (int, []byte, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Switchboard-CSRF", "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// opsEndpoint is TestReplicas' named endpoint, with a token of its own.
const opsEndpoint = `
[[endpoints]]
name = "ops"
servers = ["fx"]
tools = ["fx_env", "fx_echo"]
auth_token = "{{env.SB_OPS_TOKEN}}"
`

const opsToken = "replicatest-ops-endpoint-token"

// initialize sends a 2025-11-25 initialize to an MCP path with a bearer
// token, and returns the answer's status.
func initialize(t *testing.T, url, bearer string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"replicatest","version":"1"}}}`
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// postWithSession sends a tools/list of session sid straight to a
// replica, and returns the answer's status.
func postWithSession(t *testing.T, base, sid string) int {
	t.Helper()
	req, err := http.NewRequest("POST", base+"/mcp", bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestGateAnsweredOnOtherReplica: a run waiting at its gate on a live
// replica is resumed there by an answer given on the other replica (the
// answer travels through the shared database, not through the process
// that runs the run), and each of its steps runs once.
func TestGateAnsweredOnOtherReplica(t *testing.T) {
	c := startCluster(t, 2, map[string]string{"replicated.yaml": replicatedWorkflow})
	runner, other := c.replicas[0], c.replicas[1]
	status, answer := apiCall(t, "POST", runner.url+"/api/v1/workflows/replicated/runs", `{"inputs":{}}`)
	if status != http.StatusCreated {
		t.Fatalf("starting a run on %s: %d %s", runner.name, status, answer)
	}
	var run struct{ ID string }
	if err := json.Unmarshal(answer, &run); err != nil || run.ID == "" {
		t.Fatalf("the started run %s: %v", answer, err)
	}
	evs := follow(t, runner.url, run.ID, 0, func(ev event) bool { return ev.Type == "gate:waiting" })
	for _, ev := range evs {
		if ev.Type == "step:completed" && ev.Step == "where" && c.nameIn(string(ev.Result)) != runner.name {
			t.Fatalf("where ran on %q, want %s, which the run was started on", c.nameIn(string(ev.Result)), runner.name)
		}
	}
	status, answer = apiCall(t, "POST", other.url+"/api/v1/runs/"+run.ID+"/answer", `{"gate":"confirm","answer":{"action":"accept","content":{"go":true}}}`)
	if status != http.StatusOK {
		t.Fatalf("answering %s's gate on %s: %d %s", runner.name, other.name, status, answer)
	}
	// Followed on the runner: it resumes the run itself.
	rest := follow(t, runner.url, run.ID, evs[len(evs)-1].Seq, func(ev event) bool { return ev.terminal() })
	if last := rest[len(rest)-1]; last.Type != "run:completed" {
		t.Fatalf("the run ended with %+v; %s's output:\n%s", last, runner.name, runner.out)
	}
	c.checkEachStepOnce(t)
	select {
	case <-runner.exited:
		t.Errorf("%s exited during the test:\n%s", runner.name, runner.out)
	default:
	}
}

// afterDeath makes a request through the balancer just after a replica
// died, the way a client that retries does: once more if the first
// attempt's connection was closed without an answer, and only then.
//
// HAProxy may not yet have read the end of its idle keep-alive connection
// to the dead replica when the request arrives on a client connection that
// carried an earlier one. It then sends the request there, reads nothing,
// and closes the client's connection without an answer: HAProxy's way of
// asking a client to retry a keep-alive request ("abort_keep_alive" in its
// http_ana.c). The dead replica read nothing, so the retry is safe; it
// meets a refused connection, and HAProxy sends it to a live replica.
func afterDeath(t *testing.T, do func() error) error {
	t.Helper()
	err := do()
	if err != nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)) {
		t.Logf("a request just after a replica's death met a connection HAProxy closed without an answer (%v); sending it again", err)
		err = do()
	}
	return err
}

// TestRollingStop: a replica with [gateway] shutdown_drain is stopped
// (SIGTERM, as systemd and container runtimes do) while a 2026-07-28
// client keeps four calls in flight through the balancer: no call fails,
// before, during or after the stop (the drain, its 503s on /readyz and
// HAProxy's checks; then the shutdown); the other replica answers them
// all once the stopped one has gone.
func TestRollingStop(t *testing.T) {
	c := newCluster(t, clusterOptions{gateway: `shutdown_drain = "5s"`})
	c.startReplicas(t, 2)
	lb := balancer(t, c.replicas...)
	ctx := context.Background()
	cs := connect(t, lb.URL, "2026-07-28", nil)
	stopping, survivor := c.replicas[0], c.replicas[1]

	var (
		mu       sync.Mutex
		failures []string
		answered = map[string]int{} // by replica, after the stop ended
		stopped  bool
		done     = make(chan struct{})
		wg       sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				where, err := c.whereCalled(ctx, cs)
				mu.Lock()
				if err != nil {
					failures = append(failures, err.Error())
				} else if stopped {
					answered[where]++
				}
				mu.Unlock()
			}
		})
	}
	start := time.Now()
	stopping.stop(t)
	mu.Lock()
	stopped = true
	mu.Unlock()
	t.Logf("%s stopped in %v", stopping.name, time.Since(start).Round(time.Millisecond))
	// Calls go on until the survivor has answered 50 after the stop.
	stopCalls := sync.OnceFunc(func() { close(done); wg.Wait() })
	defer stopCalls()
	wait.For(t, fmt.Sprintf("%s to answer 50 calls after the stop", survivor.name), func() (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprintf("answered %v, %d failed", answered, len(failures)), answered[survivor.name] >= 50
	})
	stopCalls()
	if len(failures) > 0 {
		t.Errorf("%d calls failed through the balancer while %s stopped; the first: %s", len(failures), stopping.name, failures[0])
	}
	if answered[survivor.name] < 50 || answered[stopping.name] != 0 {
		t.Errorf("calls answered after the stop: %v; want 50 or more by %s alone", answered, survivor.name)
	}
}
