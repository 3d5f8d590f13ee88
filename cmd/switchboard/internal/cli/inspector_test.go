package cli_test

// A real MCP client, the inspector's CLI, lists and calls a published
// workflow through `switchboard serve`: over stdio, as Claude Desktop
// starts it, and over Streamable HTTP.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// workflowConfig writes a configuration that publishes the workflow hello
// (one echo by the fixture) and returns its path.
func workflowConfig(t *testing.T, dir string) string {
	t.Helper()
	wf := `id: hello
description: Echoes its text
inputs:
  text: {type: string, required: true, description: What to echo}
outputs:
  said: "{{ .steps.one.result }}"
steps:
  - id: one
    tool: mcp_fx_echo
    arguments: {text: "{{ .inputs.text }}"}
`
	if err := os.WriteFile(filepath.Join(dir, "hello.yaml"), []byte(wf), 0o644); err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return writeConfig(t, dir, `workflows = ["hello.yaml"]

[state]
database = `+q(filepath.Join(dir, "state.db"))+`

[gateway]
workflows = ["hello"]

[[mcp_servers]]
id = "fx"
command = `+q(interop.Build(t, fixturePkg))+`
`)
}

// inspectWorkflow runs the inspector's CLI (its arguments before, then the
// method, then after) to list the tools and call workflow_hello, and checks
// the tool's schemas as published and the call's structuredContent.
func inspectWorkflow(t *testing.T, before, after []string) {
	t.Helper()
	run := func(method ...string) []byte {
		t.Helper()
		argv := append(interop.InspectorCLI(t), "--cli")
		argv = append(append(append(argv, before...), method...), after...)
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = interop.Env(t)
		cmd.Dir = t.TempDir()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%q: %v\nstdout:\n%s\nstderr:\n%s", argv, err, out, stderr.String())
		}
		if i := strings.IndexByte(string(out), '{'); i > 0 {
			out = out[i:] // a deprecation banner may come first
		}
		return out
	}
	var list struct {
		Tools []struct {
			Name         string
			InputSchema  map[string]any
			OutputSchema map[string]any
		}
	}
	if out := run("--method", "tools/list"); json.Unmarshal(out, &list) != nil {
		t.Fatalf("inspector tools/list: not JSON:\n%s", out)
	}
	var names []string
	found := false
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if tl.Name != "workflow_hello" {
			continue
		}
		found = true
		in := map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": false,
			"properties": map[string]any{"text": map[string]any{"type": "string", "description": "What to echo"}},
			"required":   []any{"text"}}
		if !sameJSON(tl.InputSchema, in) {
			t.Errorf("workflow_hello inputSchema = %v, want %v", tl.InputSchema, in)
		}
		if props, _ := tl.OutputSchema["properties"].(map[string]any); tl.OutputSchema["type"] != "object" || props["said"] == nil {
			t.Errorf("workflow_hello outputSchema = %v, want an object with said", tl.OutputSchema)
		}
	}
	if !found {
		t.Fatalf("inspector tools/list = %v, want workflow_hello among them", names)
	}
	var res struct {
		Content           []struct{ Type, Text string }
		StructuredContent map[string]any
		IsError           bool
	}
	// --tool-arg takes every value up to the next option: --method ends it.
	out := run("--tool-name", "workflow_hello", "--tool-arg", "text=hi there", "--method", "tools/call")
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("inspector tools/call: not JSON: %v\n%s", err, out)
	}
	if want := map[string]any{"said": "hi there"}; res.IsError || !reflect.DeepEqual(res.StructuredContent, want) {
		t.Errorf("inspector tools/call workflow_hello = %s, want structuredContent %v", out, want)
	}
}

// sameJSON compares two values as JSON sees them.
func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var x, y any
	json.Unmarshal(ja, &x)
	json.Unmarshal(jb, &y)
	return reflect.DeepEqual(x, y)
}

// TestInspectorWorkflowStdio: the inspector starts `switchboard serve
// --stdio` and calls the published workflow through it.
func TestInspectorWorkflowStdio(t *testing.T) {
	dir := isolate(t)
	cfg := workflowConfig(t, dir)
	bin := interop.Build(t, "github.com/switchboardmcp/switchboard/cmd/switchboard")
	// After "--": the inspector has a --config option of its own.
	inspectWorkflow(t, nil, []string{"--", bin, "--config", cfg, "serve", "--stdio"})
}

// TestInspectorWorkflowHTTP: the inspector calls the published workflow
// through `switchboard serve` over Streamable HTTP.
func TestInspectorWorkflowHTTP(t *testing.T) {
	dir := isolate(t)
	cfg := workflowConfig(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	base, code, stderr := startServe(t, ctx, "--config", cfg, "serve", "--listen", "127.0.0.1:0")
	t.Cleanup(cancel) // before startServe's own cleanup, which waits for serve to end
	inspectWorkflow(t, []string{base + "/mcp", "--transport", "http"}, nil)
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("serve exited %d:\n%s", c, stderr())
	}
}
