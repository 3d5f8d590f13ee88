package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/llm/llmtest"
)

// A megabyte of tool description went to the LLM provider whole, and
// terminal escapes and invisible characters with it (issue 11 §3): the
// model gets the tools as the host cleaned and bounded them.
func TestModelGetsCleanTools(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fx := config.Server{ID: "hs", Command: interop.Build(t, "github.com/switchboardmcp/switchboard/internal/testkit/testserver"),
		Args: []string{"-hostile-text", "-description-bytes", "1048576"}}
	h, err := host.Start(ctx, []config.Server{fx}, nil)
	if err != nil {
		t.Fatalf("host.Start: %v", err)
	}
	defer h.Close()
	f := llmtest.NewOpenAI(t)
	f.Script(llmtest.Turn{Text: "Nothing to do."})
	p, err := llm.New(f.Config())
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{ID: "clean", Model: "fake:test-model", MaxSteps: 2, System: "You read tools."}
	evs := collect(t, ctx, &RunOptions{Agent: a, Host: h, Provider: p, Prompt: "Hi.", Tools: []string{"mcp_hs_hostile", "mcp_hs_long"}})
	if l := last(evs); l.Type != EventRunCompleted {
		t.Fatalf("last event %+v, want run:completed", l)
	}
	reqs := f.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the fake got %d requests, want 1", len(reqs))
	}
	var body struct {
		Tools []struct {
			Function struct {
				Name        string `json:"name"`
				Description string `json:"description"`
				Parameters  any    `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := reqs[0].Decode(&body); err != nil {
		t.Fatal(err)
	}
	if len(body.Tools) != 2 {
		t.Fatalf("the model was offered %d tools, want 2", len(body.Tools))
	}
	for _, tl := range body.Tools {
		fn := tl.Function
		if len(fn.Description) > config.DefaultMaxDescriptionBytes {
			t.Errorf("%s: a %d-byte description reached the model", fn.Name, len(fn.Description))
		}
		for _, r := range fn.Description {
			if r != '\n' && r != '\t' && (unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)) {
				t.Errorf("%s: the description the model got holds %U: %q", fn.Name, r, fn.Description)
				break
			}
		}
		if fn.Name == "mcp_hs_hostile" && !strings.HasPrefix(fn.Description, "Adds numbers. red docs") {
			t.Errorf("hostile's description = %q", fn.Description)
		}
	}
}

// A tool's result reached the model with terminal escapes and invisible
// characters (tag characters that spell instructions no person sees, bidi
// controls, zero-width characters) (issue 23 §4): the model gets the text
// clean, as the host cleans what servers declare, newlines kept; the
// agent's event says the same.
func TestModelGetsCleanResults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fx := config.Server{ID: "hs", Command: interop.Build(t, "github.com/switchboardmcp/switchboard/internal/testkit/testserver"),
		Args: []string{"-hostile-text"}}
	h, err := host.Start(ctx, []config.Server{fx}, nil)
	if err != nil {
		t.Fatalf("host.Start: %v", err)
	}
	defer h.Close()
	f := llmtest.NewOpenAI(t)
	f.Script(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "call_h", Name: "mcp_hs_hostile_result", Arguments: json.RawMessage(`{}`)}}},
		llmtest.Turn{Text: "Done."},
	)
	p, err := llm.New(f.Config())
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{ID: "clean", Model: "fake:test-model", MaxSteps: 3, System: "You read results."}
	evs := collect(t, ctx, &RunOptions{Agent: a, Host: h, Provider: p, Prompt: "Hi.", Tools: []string{"mcp_hs_hostile_result"}})
	if l := last(evs); l.Type != EventRunCompleted {
		t.Fatalf("last event %+v, want run:completed", l)
	}
	reqs := f.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the fake got %d requests, want 2", len(reqs))
	}
	var body map[string]any
	if err := reqs[1].Decode(&body); err != nil {
		t.Fatal(err)
	}
	got := ""
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		if m, _ := m.(map[string]any); m["role"] == "tool" {
			got = flatten(m["content"])
		}
	}
	ev := toolResults(evs)["call_h"]
	if ev == nil {
		t.Fatalf("no agent:tool_result event for call_h")
	}
	for what, text := range map[string]string{"the model's tool message": got, "the tool_result event": ev.Output} {
		if !strings.Contains(text, "Adds numbers. red docs  evil zerowidth") || !strings.Contains(text, "end\nline2") {
			t.Errorf("%s = %q, want the result's visible text, lines kept", what, text)
		}
		for _, r := range text {
			if r != '\n' && r != '\t' && (unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)) {
				t.Errorf("%s holds %U: %q", what, r, text)
				break
			}
		}
	}
}
