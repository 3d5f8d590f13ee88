package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/api"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/store"
	"github.com/switchboardmcp/switchboard/workflow"
)

// gated asks before it echoes, with the tool of the server "a".
const gated = `id: gated
description: Asks before echoing
inputs:
  text: {type: string, required: true}
outputs:
  said: "{{ .steps.say.result }}"
steps:
  - id: ok
    gate:
      message: "Echo {{ .inputs.text }}?"
      schema:
        type: object
        properties:
          approve: {type: boolean}
        required: [approve]
      on_decline: skip_rest
  - id: say
    needs: [ok]
    if: "{{ .steps.ok.result.approve }}"
    tool: mcp_a_echo
    arguments: {text: "{{ .inputs.text }}"}
`

func startWorkflows(t *testing.T) *apiT {
	t.Helper()
	wf, err := workflow.Parse("gated.yaml", []byte(gated))
	if err != nil {
		t.Fatal(err)
	}
	return startAPIWith(t, func(o *daemon.Options) { o.Workflows = []*workflow.Workflow{wf} })
}

// sseStream is an open event stream.
type sseStream struct {
	t    testing.TB
	resp *http.Response
	sc   *bufio.Scanner
}

// openSSE opens path as an event stream; it ends with the test.
func (a *apiT) openSSE(path string, hdr ...string) *sseStream {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	a.t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", a.url+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := a.client.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	a.t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		a.t.Fatalf("GET %s: %d %q", path, resp.StatusCode, ct)
	}
	return &sseStream{t: a.t, resp: resp, sc: bufio.NewScanner(resp.Body)}
}

// sseEvent is one event of a stream.
type sseEvent struct{ event, id, data string }

// next returns the next event; ok false when the stream ended.
func (s *sseStream) next() (ev sseEvent, ok bool) {
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case line == "":
			if ev.event != "" {
				return ev, true
			}
		case strings.HasPrefix(line, "event: "):
			ev.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		}
	}
	return ev, false
}

// waitFor reads events until one of type event ("": any) whose data
// holds sub.
func (s *sseStream) waitFor(event, sub string) sseEvent {
	s.t.Helper()
	for {
		ev, ok := s.next()
		if !ok {
			s.t.Fatalf("the stream ended before %s %s (%v)", event, sub, s.sc.Err())
		}
		if (event == "" || ev.event == event) && strings.Contains(ev.data, sub) {
			return ev
		}
	}
}

// TestRuns: a run started, waiting on its gate (seen on the run's event
// stream and on /api/v1/events), a bad answer refused, the gate answered,
// the run completed with its events; a run cancelled; unknown workflows
// and runs are 404s.
func TestRuns(t *testing.T) {
	a := startWorkflows(t)
	all := a.openSSE("/api/v1/events")

	code, _, body := a.do("GET", "/api/v1/workflows", "")
	if code != 200 || !strings.Contains(string(body), `"id":"gated"`) || !strings.Contains(string(body), `"steps":["ok","say"]`) {
		t.Errorf("GET workflows: %d %s", code, body)
	}
	code, _, body = a.do("GET", "/api/v1/workflows/gated", "")
	if code != 200 || !strings.Contains(string(body), `"input_schema":{`) {
		t.Errorf("GET workflows/gated: %d %s", code, body)
	}

	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		field                    string
	}{
		{"no such workflow", "GET", "/api/v1/workflows/nosuch", "", 404, ""},
		{"start: no such workflow", "POST", "/api/v1/workflows/nosuch/runs", `{}`, 404, ""},
		{"start: wrong input type", "POST", "/api/v1/workflows/gated/runs", `{"inputs":{"text":5}}`, 422, "inputs.text"},
		{"start: unknown field", "POST", "/api/v1/workflows/gated/runs", `{"input":{}}`, 400, "input"},
		{"start: a server it does not have", "POST", "/api/v1/workflows/gated/runs", `{"inputs":{"text":"x"},"mcp_servers":["nope"],"tools":[]}`, 422, ""},
		{"start: a tool no server offers", "POST", "/api/v1/workflows/gated/runs", `{"inputs":{"text":"x"},"tools":["mcp_a_nope"]}`, 422, ""},
		{"no such run", "GET", "/api/v1/runs/nosuch", "", 404, ""},
		{"events: no such run", "GET", "/api/v1/runs/nosuch/events", "", 404, ""},
		{"cancel: no such run", "POST", "/api/v1/runs/nosuch/cancel", "", 404, ""},
	} {
		code, h, body := a.do(tc.method, tc.path, tc.body)
		a.wantProblem(tc.name, tc.status, tc.field, code, h, body)
	}

	code, h, body := a.do("POST", "/api/v1/workflows/gated/runs", `{"inputs":{"text":"hi"},"run_id":"r1"}`)
	if code != 201 || h.Get("Location") != "/api/v1/runs/r1" {
		t.Fatalf("start r1: %d %v %s", code, h, body)
	}
	run := a.openSSE("/api/v1/runs/r1/events")
	run.waitFor("gate:waiting", `"step":"ok"`)
	all.waitFor("gate:waiting", `"run_id":"r1"`)

	code, h, body = a.do("POST", "/api/v1/runs/r1/answer", `{"gate":"ok","answer":{"action":"accept","content":{"approve":"yes"}}}`)
	a.wantProblem("an answer against the gate's schema", 422, "answer.content.approve", code, h, body)
	code, h, body = a.do("POST", "/api/v1/runs/r1/answer", `{"gate":"nosuch","answer":{"action":"accept"}}`)
	a.wantProblem("a gate not waiting", 409, "gate", code, h, body)
	code, h, body = a.do("POST", "/api/v1/runs/r1/answer", `{"gate":"ok","answer":{"action":"maybe"}}`)
	a.wantProblem("a bad action", 422, "answer.action", code, h, body)
	code, _, body = a.do("POST", "/api/v1/runs/r1/answer", `{"gate":"ok","answer":{"action":"accept","content":{"approve":true}}}`)
	if code != 200 {
		t.Fatalf("answer: %d %s", code, body)
	}
	run.waitFor("run:completed", `"said":"hi"`)
	if ev, ok := run.next(); ok {
		t.Errorf("the run's stream goes on after its end: %v", ev)
	}
	all.waitFor("run:completed", `"run_id":"r1"`)

	code, _, body = a.do("GET", "/api/v1/runs/r1", "")
	var got struct {
		State  string `json:"state"`
		Events []struct {
			Type string `json:"type"`
		} `json:"events"`
	}
	if code != 200 || json.Unmarshal(body, &got) != nil || got.State != "completed" || len(got.Events) == 0 || got.Events[len(got.Events)-1].Type != "run:completed" {
		t.Errorf("GET runs/r1: %d %s", code, body)
	}
	// A client that reconnects gets what came after what it saw.
	again := a.openSSE("/api/v1/runs/r1/events", "Last-Event-ID", "1")
	if ev, ok := again.next(); !ok || ev.id != "2" {
		t.Errorf("after Last-Event-ID 1: %+v %v", ev, ok)
	}

	// Cancelled while it waits.
	if code, _, body := a.do("POST", "/api/v1/workflows/gated/runs", `{"inputs":{"text":"c"},"run_id":"r2"}`); code != 201 {
		t.Fatalf("start r2: %d %s", code, body)
	}
	all.waitFor("gate:waiting", `"run_id":"r2"`)
	code, _, body = a.do("POST", "/api/v1/runs/r2/cancel", "")
	if code != 200 || !strings.Contains(string(body), `"state":"cancelled"`) {
		t.Errorf("cancel r2: %d %s", code, body)
	}
	all.waitFor("run:cancelled", `"run_id":"r2"`)
	code, _, body = a.do("GET", "/api/v1/runs?workflow=gated&limit=1", "")
	if code != 200 || !strings.Contains(string(body), `"id":"r2"`) || !strings.Contains(string(body), `"next_cursor"`) {
		t.Errorf("GET runs: %d %s", code, body)
	}
}

// quick echoes at once: a run of it starts and ends well within a poll
// period.
const quick = `id: quick
steps:
  - id: say
    tool: mcp_a_echo
    arguments: {text: "hi"}
`

// TestRunEventsAtOnce: runs that start and end at once, more of them than
// a poll of the newest runs lists, each show all their events on
// /api/v1/events, in order, with their sequence numbers: the engine's own
// hook feeds the stream, not a poll.
func TestRunEventsAtOnce(t *testing.T) {
	wf, err := workflow.Parse("quick.yaml", []byte(quick))
	if err != nil {
		t.Fatal(err)
	}
	a := startAPIWith(t, func(o *daemon.Options) { o.Workflows = []*workflow.Workflow{wf} })
	all := a.openSSE("/api/v1/events")
	const n = 25 // more than the poll lists (runPollLimit)
	want := map[string]bool{}
	for range n {
		code, _, body := a.do("POST", "/api/v1/workflows/quick/runs", `{}`)
		var st workflow.RunStatus
		if code != 201 || json.Unmarshal(body, &st) != nil {
			t.Fatalf("POST workflows/quick/runs: %d %s", code, body)
		}
		want[st.ID] = true
	}
	got := map[string][]workflow.Event{}
	for ended := 0; ended < n; {
		ev, ok := all.next()
		if !ok {
			t.Fatalf("the stream ended with %d of %d runs ended on it (%v)", ended, n, all.sc.Err())
		}
		if !strings.Contains(ev.event, ":") || strings.HasPrefix(ev.event, "server:") || strings.HasPrefix(ev.event, "catalog:") {
			continue
		}
		var we workflow.Event
		if err := json.Unmarshal([]byte(ev.data), &we); err != nil {
			t.Fatalf("%s: %v: %s", ev.event, err, ev.data)
		}
		if !want[we.RunID] {
			t.Fatalf("an event of a run not started here: %s", ev.data)
		}
		got[we.RunID] = append(got[we.RunID], we)
		if we.Type.Terminal() {
			ended++
		}
	}
	wantTypes := []workflow.EventType{workflow.EventRunStarted, workflow.EventStepStarted, workflow.EventStepCompleted, workflow.EventRunCompleted}
	for id := range want {
		evs := got[id]
		if len(evs) != len(wantTypes) {
			t.Errorf("run %s: %d events on the stream, want %d: %+v", id, len(evs), len(wantTypes), evs)
			continue
		}
		for i, ev := range evs {
			if ev.Type != wantTypes[i] || ev.Seq != int64(i+1) || ev.Workflow != "quick" {
				t.Errorf("run %s: event %d = %s seq %d workflow %q, want %s seq %d workflow quick", id, i, ev.Type, ev.Seq, ev.Workflow, wantTypes[i], i+1)
			}
		}
	}
}

// TestRunEventsOtherProcess: a run another engine on the same database
// executes (a CLI command's, a replica's) shows its events on
// /api/v1/events too, from the store, found by the poll.
func TestRunEventsOtherProcess(t *testing.T) {
	wf, err := workflow.Parse("quick.yaml", []byte(quick))
	if err != nil {
		t.Fatal(err)
	}
	var cfg *config.Config
	a := startAPIWith(t, func(o *daemon.Options) {
		o.Workflows = []*workflow.Workflow{wf}
		cfg = o.Config
	})
	all := a.openSSE("/api/v1/events")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	other, err := daemon.OpenWorkflows(ctx, &daemon.WorkflowOptions{Config: cfg, Workflows: []*workflow.Workflow{wf}, Kind: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if other.Executor.ID == a.d.Workflows().Executor.ID {
		t.Fatalf("both engines are executor %s", other.Executor.ID)
	}
	if err := other.Launch(ctx, a.d.Host(), false); err != nil {
		t.Fatal(err)
	}
	id, err := other.Engine.Start(ctx, "quick", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var types []workflow.EventType
	for {
		ev := all.waitFor("", "") // any event
		var we workflow.Event
		if json.Unmarshal([]byte(ev.data), &we) != nil || we.RunID != id {
			continue
		}
		types = append(types, we.Type)
		if we.Type.Terminal() {
			break
		}
	}
	want := []workflow.EventType{workflow.EventRunStarted, workflow.EventStepStarted, workflow.EventStepCompleted, workflow.EventRunCompleted}
	if !slices.Equal(types, want) {
		t.Errorf("the other engine's run on the stream: %v, want %v", types, want)
	}
}

// TestNoWorkflows: a daemon without workflows lists none (an empty page,
// as for agents), and a workflow or run asked for by id is a 404.
func TestNoWorkflows(t *testing.T) {
	a := startAPI(t)
	for _, path := range []string{"/api/v1/workflows", "/api/v1/runs"} {
		if code, _, body := a.do("GET", path, ""); code != 200 || strings.TrimSpace(string(body)) != `{"items":[]}` {
			t.Errorf("GET %s: %d %s, want an empty page", path, code, body)
		}
	}
	code, h, body := a.do("GET", "/api/v1/workflows/x", "")
	a.wantProblem("a workflow", 404, "", code, h, body)
	code, h, body = a.do("POST", "/api/v1/workflows/x/runs", `{}`)
	a.wantProblem("a run started", 404, "", code, h, body)
}

// TestGateAnsweredOnce: answers to one gate sent at the same instant get
// one 200; every other answer is a 409 problem saying the gate was
// answered already, naming gate. Starting a run id again with other
// inputs is a 409 naming run_id. Before, every answer got 200, and the
// second start 201 with the first run.
func TestGateAnsweredOnce(t *testing.T) {
	a := startWorkflows(t)
	code, _, body := a.do("POST", "/api/v1/workflows/gated/runs", `{"inputs":{"text":"hi"},"run_id":"r1"}`)
	if code != 201 {
		t.Fatalf("start r1: %d %s", code, body)
	}
	code, h, body := a.do("POST", "/api/v1/workflows/gated/runs", `{"inputs":{"text":"other"},"run_id":"r1"}`)
	a.wantProblem("the run id again with other inputs", 409, "run_id", code, h, body)
	a.openSSE("/api/v1/runs/r1/events").waitFor("gate:waiting", `"step":"ok"`)

	const n = 6
	type answer struct {
		code int
		h    http.Header
		body []byte
	}
	answers := make([]answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			req, _ := http.NewRequest("POST", a.url+"/api/v1/runs/r1/answer", strings.NewReader(`{"gate":"ok","answer":{"action":"accept","content":{"approve":true}}}`))
			req.Header.Set(api.CSRFHeader, "1")
			req.Header.Set("Content-Type", "application/json")
			resp, err := a.client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			answers[i] = answer{resp.StatusCode, resp.Header, b}
		})
	}
	close(start)
	wg.Wait()
	ok := 0
	for i, an := range answers {
		a.all = append(a.all, an.body)
		if an.code == 200 {
			ok++
			continue
		}
		a.wantProblem("answer "+strconv.Itoa(i), 409, "gate", an.code, an.h, an.body)
		if !strings.Contains(string(an.body), "answered already") {
			t.Errorf("answer %d: %s, want it told the gate was answered already", i, an.body)
		}
	}
	if ok != 1 {
		t.Errorf("%d answers got 200, want 1", ok)
	}
}

// once calls c, which is not idempotent, between a and d.
const once = `id: once
outputs:
  said: "{{ .steps.d.result }}"
steps:
  - id: a
    tool: mcp_a_echo
    arguments: {text: a}
  - id: c
    needs: [a]
    tool: mcp_a_echo
    arguments: {text: c}
    on_error: continue
    default: skipped
  - id: d
    needs: [c]
    tool: mcp_a_echo
    arguments: {text: "d {{ .steps.c.result }}"}
`

// interruptedDB returns a state database where run r1 of wf is
// interrupted at its step c: an engine ran it until c's attempt was
// recorded as started and was closed there, so that the next engine on
// the database (the daemon's, which adopts the run) may not call c again.
// The fixture server "a" logs its calls to callLog.
func interruptedDB(t *testing.T, wf *workflow.Workflow) (db, callLog string) {
	t.Helper()
	dir := t.TempDir()
	db, callLog = filepath.Join(dir, "s.db"), filepath.Join(dir, "calls.log")
	ctx := context.Background()
	h, err := host.New([]config.Server{{ID: "a", Transport: config.TransportStdio, Command: interop.Build(t, fixturePkg), Args: []string{"-call-log", callLog}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	reached := make(chan struct{})
	e, err := workflow.New(ctx, &workflow.EngineOptions{Database: db, Host: h, Workflows: map[string]*workflow.Workflow{wf.ID: wf},
		StepContext: func(ctx context.Context, ev workflow.Event) context.Context {
			if ev.Step == "c" {
				close(reached)
				<-ctx.Done()
			}
			return ctx
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Start(ctx, wf.ID, nil, &workflow.StartOptions{RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reached:
	case <-time.After(30 * time.Second):
		t.Fatal("step c never started")
	}
	return db, callLog
}

// TestResolveStep: a run interrupted at c (not idempotent, its attempt
// in flight when its process stopped) is adopted by the daemon and shown
// interrupted, not called again; resolutions that are invalid, of a step
// the run is not interrupted at, or of no run are refused (422, 409,
// 404); of two resolutions at once one is taken (200) and the other told
// it lost (409); the run then goes the winner's way, and c is resolved
// once.
func TestResolveStep(t *testing.T) {
	wf, err := workflow.Parse("once.yaml", []byte(once))
	if err != nil {
		t.Fatal(err)
	}
	db, callLog := interruptedDB(t, wf)
	a := startAPIWith(t, func(o *daemon.Options) {
		o.Workflows = []*workflow.Workflow{wf}
		o.Config.State.Database = db
		o.Config.Servers[0].Args = []string{"-call-log", callLog}
		st, err := store.Open(context.Background(), db, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		o.Store = st
	})
	run := a.openSSE("/api/v1/runs/r1/events")
	run.waitFor("step:interrupted", `"step":"c"`)
	code, _, body := a.do("GET", "/api/v1/runs/r1", "")
	var st struct {
		State       string `json:"state"`
		Interrupted struct {
			Step    string `json:"step"`
			Attempt int    `json:"attempt"`
		} `json:"interrupted"`
	}
	if code != 200 || json.Unmarshal(body, &st) != nil || st.State != "interrupted" || st.Interrupted.Step != "c" || st.Interrupted.Attempt != 1 {
		t.Fatalf("GET runs/r1: %d %s, want interrupted at c's attempt 1", code, body)
	}
	for _, tc := range []struct {
		name, path, body string
		status           int
		field            string
	}{
		{"a bad action", "/api/v1/runs/r1/resolve", `{"step":"c","action":"maybe"}`, 422, "action"},
		{"no step", "/api/v1/runs/r1/resolve", `{"action":"retry"}`, 422, "step"},
		{"a step not interrupted", "/api/v1/runs/r1/resolve", `{"step":"a","action":"retry"}`, 409, "step"},
		{"no such run", "/api/v1/runs/nosuch/resolve", `{"step":"c","action":"retry"}`, 404, ""},
	} {
		code, h, body := a.do("POST", tc.path, tc.body)
		a.wantProblem(tc.name, tc.status, tc.field, code, h, body)
	}

	// Two at once: one wins.
	hows := []string{"retry", "skip"}
	codes := make([]int, len(hows))
	bodies := make([][]byte, len(hows))
	var wg sync.WaitGroup
	for i, how := range hows {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", a.url+"/api/v1/runs/r1/resolve", strings.NewReader(`{"step":"c","action":"`+how+`"}`))
			req.Header.Set(api.CSRFHeader, "1")
			req.Header.Set("Content-Type", "application/json")
			resp, err := a.client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			codes[i] = resp.StatusCode
			bodies[i], _ = io.ReadAll(resp.Body)
		})
	}
	wg.Wait()
	won := slices.Index(codes, 200)
	if won < 0 || codes[1-won] != 409 || !strings.Contains(string(bodies[1-won]), "resolved already ("+hows[won]+")") {
		t.Fatalf("two resolutions at once: %v %q, want one 200 and one 409 naming the winner", codes, bodies)
	}
	ev := run.waitFor("run:completed", "")
	want := map[string]string{"retry": `"said":"d c"`, "skip": `"said":"d skipped"`}[hows[won]]
	if !strings.Contains(ev.data, want) {
		t.Errorf("run:completed %s, want %s", ev.data, want)
	}
	code, h, body := a.do("POST", "/api/v1/runs/r1/resolve", `{"step":"c","action":"fail"}`)
	a.wantProblem("resolved again after the end", 409, "step", code, h, body)
	b, err := os.ReadFile(callLog)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), `echo {"text":"c"}`); n != map[string]int{"retry": 1, "skip": 0}[hows[won]] {
		t.Errorf("c called %d times after %s: %s", n, hows[won], b)
	}
}

// TestBuiltinServerAsDocumented: a daemon whose published workflows are a
// built-in server answers every request about its servers and tools as
// its OpenAPI document says (recordAPI checks each answer against it):
// before, GET /api/v1/servers answered origin "builtin", which the
// document's enum did not have.
func TestBuiltinServerAsDocumented(t *testing.T) {
	wf, err := workflow.Parse("gated.yaml", []byte(gated))
	if err != nil {
		t.Fatal(err)
	}
	a := startAPIWith(t, func(o *daemon.Options) {
		o.Workflows = []*workflow.Workflow{wf}
		o.Config.Gateway.Workflows = []string{"gated"}
	})
	bin, _ := json.Marshal(interop.Build(t, fixturePkg))
	if code, _, body := a.do("POST", "/api/v1/servers", `{"id":"off","command":`+string(bin)+`}`); code != 201 {
		t.Fatalf("POST a server: %d %s", code, body)
	}
	if code, _, body := a.do("POST", "/api/v1/servers/off/disable", ""); code != 200 {
		t.Fatalf("disable it: %d %s", code, body)
	}
	code, _, body := a.do("GET", "/api/v1/servers", "")
	if code != 200 || !strings.Contains(string(body), `"id":"workflows","origin":"builtin"`) {
		t.Fatalf("GET servers: %d %s; want the built-in server listed", code, body)
	}
	for _, path := range []string{
		"/api/v1/servers/workflows", "/api/v1/servers/a", "/api/v1/servers/off",
		"/api/v1/tools", "/api/v1/tools?server=workflows", "/api/v1/tools/workflow_gated",
		"/api/v1/resources", "/api/v1/resources/templates", "/api/v1/prompts", "/api/v1/workflows",
	} {
		if code, _, body := a.do("GET", path, ""); code != 200 {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
	}
	for _, path := range []string{"/api/v1/servers/workflows/disable", "/api/v1/servers/workflows/restart"} {
		code, h, body := a.do("POST", path, "")
		a.wantProblem("POST "+path, http.StatusConflict, "", code, h, body)
	}
	code, h, body := a.do("DELETE", "/api/v1/servers/workflows", "")
	a.wantProblem("DELETE the built-in server", http.StatusConflict, "", code, h, body)
}
