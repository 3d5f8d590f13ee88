package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/store"
	"github.com/switchboardmcp/switchboard/ui"
	"github.com/switchboardmcp/switchboard/workflow"
)

// gated asks before it echoes, with the tool of the server "a".
const gated = `id: gated
description: Asks before echoing
inputs:
  text: {type: string, required: true}
  times: {type: integer}
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
          note: {type: string, maxLength: 5}
        required: [approve]
      on_decline: skip_rest
  - id: say
    needs: [ok]
    if: "{{ .steps.ok.result.approve }}"
    tool: mcp_a_echo
    arguments: {text: "{{ .inputs.text }}"}
`

// serveGated serves the fixture as "a" and the workflow gated.
func serveGated(t *testing.T) *served {
	t.Helper()
	wf, err := workflow.Parse("gated.yaml", []byte(gated))
	if err != nil {
		t.Fatal(err)
	}
	return serveWith(t, func(o *daemon.Options) { o.Workflows = []*workflow.Workflow{wf} },
		config.Server{ID: "a", Transport: config.TransportStdio, Command: buildFixture(t)})
}

// labelled returns the form's input id of each field, by its label.
func labelled(t *testing.T, body string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`<label for="(arg-\d+)">([^ <]+)`).FindAllStringSubmatch(body, -1) {
		out[m[2]] = m[1]
	}
	return out
}

// TestRuns: a workflow started from the form its input schema makes (a
// missing input refused next to its field, nothing started), its run
// listed, its timeline showing the gate waiting with a form from the
// gate's schema; an answer its schema refuses shown next to the field;
// the gate answered and the run completed, its timeline showing each
// step.
func TestRuns(t *testing.T) {
	s := serveGated(t)
	csrf := []string{ui.CSRFHeader, "1"}
	status, _, body := s.do("GET", "/workflows/gated", nil)
	f := labelled(t, body)
	if status != http.StatusOK || f["text"] == "" || f["times"] == "" || !strings.Contains(body, `id="start-form"`) {
		t.Fatalf("GET /workflows/gated: %d, fields %v\n%s", status, f, body)
	}
	status, _, body = s.do("POST", "/workflows/gated/start", url.Values{f["times"]: {"two"}}, csrf...)
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, `id="`+f["text"]+`-err" class="error">required`) ||
		!strings.Contains(body, `id="`+f["times"]+`-err" class="error">not a number`) {
		t.Errorf("start without text: %d\n%s", status, body)
	}
	wfs := s.d.Workflows()
	if runs, _ := wfs.Engine.Runs(context.Background(), nil); len(runs) != 0 {
		t.Errorf("a refused start started %d runs", len(runs))
	}
	status, hdr, body := s.do("POST", "/workflows/gated/start", url.Values{f["text"]: {"hi there"}, f["times"]: {"2"}}, append(csrf, "HX-Request", "true")...)
	loc := hdr.Get("HX-Redirect")
	if status != http.StatusNoContent || !strings.HasPrefix(loc, "/runs/") {
		t.Fatalf("start: %d HX-Redirect %q\n%s", status, loc, body)
	}
	id := strings.TrimPrefix(loc, "/runs/")
	_, _, body = s.do("GET", "/runs", nil)
	if !strings.Contains(body, `href="/runs/`+id+`"`) {
		t.Errorf("the run is not listed:\n%s", body)
	}

	// The gate waits: its form is on the run's page.
	// Polling the page: the engine has no event for a waiting gate here.
	body = wait.For(t, "the gate's form", func() (string, bool) {
		_, _, body := s.do("GET", "/runs/"+id, nil)
		return body, strings.Contains(body, `id="gate-form"`)
	})
	g := labelled(t, body)
	if g["approve"] == "" || g["note"] == "" || !strings.Contains(body, "Echo hi there?") || !strings.Contains(body, "gate:waiting") {
		t.Fatalf("the gate's form: fields %v\n%s", g, body)
	}
	// Nothing new: the poll answers 204 and swaps nothing.
	seq := regexp.MustCompile(`live\?seq=(\d+)&amp;state=waiting`).FindStringSubmatch(body)
	if seq == nil {
		t.Fatalf("no poll of the run:\n%s", body)
	}
	if status, _, _ := s.do("GET", "/runs/"+id+"/live?seq="+seq[1]+"&state=waiting", nil); status != http.StatusNoContent {
		t.Errorf("the poll with nothing new: %d, want 204", status)
	}
	// The gate's schema refuses a note of 6 characters: next to note.
	answer := "/runs/" + id + "/answer?gate=ok&action=accept"
	status, _, body = s.do("POST", answer, url.Values{g["approve"]: {"true"}, g["note"]: {"toolong"}}, csrf...)
	if status != http.StatusUnprocessableEntity || !regexp.MustCompile(`id="`+g["note"]+`-err" class="error">[^<]+`).MatchString(body) {
		t.Errorf("a note too long: %d\n%s", status, body)
	}
	if st, _ := wfs.Engine.Get(context.Background(), id); st.State != workflow.RunWaiting {
		t.Errorf("after a refused answer the run is %s", st.State)
	}
	status, _, body = s.do("POST", answer, url.Values{g["approve"]: {"true"}, g["note"]: {"fine"}}, csrf...)
	if status != http.StatusOK {
		t.Fatalf("answering the gate: %d\n%s", status, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := wfs.Engine.Wait(ctx, id)
	if err != nil || st.State != workflow.RunCompleted {
		t.Fatalf("the run: %v %v", st, err)
	}
	_, _, body = s.do("GET", "/runs/"+id, nil)
	for _, want := range []string{"run:completed", "gate:answered", "<code>say</code>", "hi there", `class="state run-completed"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the completed run's page has no %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, `hx-trigger="every 1s"`) {
		t.Error("an ended run's page still polls")
	}
	// Answered already: refused.
	if status, _, _ := s.do("POST", answer, url.Values{g["approve"]: {"true"}}, csrf...); status != http.StatusConflict {
		t.Errorf("a second answer: %d, want 409", status)
	}
}

// TestGateAnsweredOnce: people answering one gate from their pages at the
// same instant: one answer is taken (200), every other page is told the
// gate was answered already (409). Before, every page said its answer was
// taken.
func TestGateAnsweredOnce(t *testing.T) {
	s := serveGated(t)
	csrf := []string{ui.CSRFHeader, "1"}
	wfs := s.d.Workflows()
	id, err := wfs.Engine.Start(context.Background(), "gated", map[string]any{"text": "hi"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Polling the page: the engine has no event for a waiting gate here.
	g := labelled(t, wait.For(t, "the gate's form", func() (string, bool) {
		_, _, body := s.do("GET", "/runs/"+id, nil)
		return body, strings.Contains(body, `id="gate-form"`)
	}))
	const n = 6
	statuses := make([]int, n)
	bodies := make([]string, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			statuses[i], _, bodies[i] = s.do("POST", "/runs/"+id+"/answer?gate=ok&action=accept", url.Values{g["approve"]: {"true"}}, csrf...)
		})
	}
	close(start)
	wg.Wait()
	taken := 0
	for i := range n {
		switch {
		case statuses[i] == http.StatusOK:
			taken++
		case statuses[i] != http.StatusConflict || !strings.Contains(bodies[i], "answered already"):
			t.Errorf("answer %d: %d, want 409 saying the gate was answered already:\n%s", i, statuses[i], bodies[i])
		}
	}
	if taken != 1 {
		t.Errorf("%d pages were told their answer was taken, want 1", taken)
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

// TestResolveInterrupted: a run interrupted at c (an engine stopped with
// c's attempt started; the daemon adopts the run) shows on its page which
// step, and buttons to retry it, skip it or fail the run; a resolution of
// a step the run is not interrupted at is refused (409) and said on the
// page; skip takes c's default and the run completes, c never called; a
// second resolution is refused.
func TestResolveInterrupted(t *testing.T) {
	wf, err := workflow.Parse("once.yaml", []byte(once))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db, callLog := filepath.Join(dir, "s.db"), filepath.Join(dir, "calls.log")
	fx := config.Server{ID: "a", Transport: config.TransportStdio, Command: buildFixture(t), Args: []string{"-call-log", callLog}}
	interrupt(t, db, fx, wf, "c")
	s := serveWith(t, func(o *daemon.Options) {
		o.Workflows = []*workflow.Workflow{wf}
		o.Config.State.Database = db
		st, err := store.Open(context.Background(), db, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		o.Store = st
	}, fx)
	csrf := []string{ui.CSRFHeader, "1"}
	// Polling the page: adoption has no event here.
	body := wait.For(t, "the run to show interrupted", func() (string, bool) {
		_, _, body := s.do("GET", "/runs/r1", nil)
		return body, strings.Contains(body, `id="resolve-form"`)
	})
	for _, want := range []string{"Interrupted at step <code>c</code> (attempt 1)", `id="resolve-retry"`, `id="resolve-skip"`, `id="resolve-fail"`,
		`class="state run-interrupted"`, "step:interrupted"} {
		if !strings.Contains(body, want) {
			t.Errorf("the interrupted run's page has no %q:\n%s", want, body)
		}
	}
	if _, _, list := s.do("GET", "/runs", nil); !strings.Contains(list, `class="state run-interrupted"`) {
		t.Errorf("the runs page does not show r1 interrupted:\n%s", list)
	}
	if status, _, _ := s.do("POST", "/runs/r1/resolve?step=c&action=maybe", url.Values{}, csrf...); status != http.StatusBadRequest {
		t.Errorf("a bad action: %d, want 400", status)
	}
	status, _, body := s.do("POST", "/runs/r1/resolve?step=a&action=retry", url.Values{}, csrf...)
	if status != http.StatusConflict || !strings.Contains(body, "not interrupted") || !strings.Contains(body, `id="resolve-form"`) {
		t.Errorf("a step not interrupted: %d\n%s", status, body)
	}
	// As a browser without script sends it: the button's name and value.
	status, _, body = s.do("POST", "/runs/r1/resolve?step=c", url.Values{"action": {"skip"}}, csrf...)
	if status != http.StatusOK {
		t.Fatalf("skip: %d\n%s", status, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := s.d.Workflows().Engine.Wait(ctx, "r1")
	if err != nil || st.State != workflow.RunCompleted || st.Outputs["said"] != "d skipped" {
		t.Fatalf("the run: %+v %v", st, err)
	}
	_, _, body = s.do("GET", "/runs/r1", nil)
	if !strings.Contains(body, "step:resolved") || !strings.Contains(body, "— skip") || strings.Contains(body, `id="resolve-form"`) {
		t.Errorf("the resolved run's page:\n%s", body)
	}
	if status, _, _ := s.do("POST", "/runs/r1/resolve?step=c&action=retry", url.Values{}, csrf...); status != http.StatusConflict {
		t.Errorf("a second resolution: %d, want 409", status)
	}
	if b, _ := os.ReadFile(callLog); strings.Contains(string(b), `echo {"text":"c"}`) {
		t.Errorf("c was called: %s", b)
	}
}

// interrupt leaves run r1 of wf interrupted at step in the state
// database db: an engine (with server fx) runs it until the step's attempt
// is recorded as started, and is closed there.
func interrupt(t *testing.T, db string, fx config.Server, wf *workflow.Workflow, step string) {
	t.Helper()
	ctx := context.Background()
	h, err := host.New([]config.Server{fx}, nil)
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
			if ev.Step == step {
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
		t.Fatalf("step %s never started", step)
	}
}
