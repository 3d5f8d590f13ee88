package agent

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/interop"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/llm/llmtest"
)

// A megabyte of tool description went to the LLM provider whole, and
// terminal escapes and invisible characters with it (issue 11 §3): the
// model gets the tools as the host cleaned and bounded them.
func TestModelGetsCleanTools(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fx := config.Server{ID: "hs", Command: interop.Build(t, "github.com/switchboardmcp/switchboard/internal/testserver"),
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
