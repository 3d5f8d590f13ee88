package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/llm"
)

func TestTransform(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", ``, `{"type":"object","properties":{}}`},
		{"null", `null`, `{"type":"object","properties":{}}`},
		{"true", `true`, `{"type":"object","properties":{}}`},
		{"false", `false`, `{"type":"object","properties":{},"additionalProperties":false}`},
		{"missing type and properties", `{"description":"d"}`, `{"type":"object","properties":{},"description":"d"}`},
		{"missing type", `{"properties":{"a":{"type":"string"}}}`, `{"type":"object","properties":{"a":{"type":"string"}}}`},
		{"type list", `{"type":["object","null"],"properties":{}}`, `{"type":"object","properties":{}}`},
		{"drop $schema and $id",
			`{"$schema":"http://json-schema.org/draft-07/schema#","$id":"urn:x","type":"object","properties":{"$id":{"type":"string"}}}`,
			`{"type":"object","properties":{"$id":{"type":"string"}}}`},
		{"$ref chain",
			`{"type":"object","properties":{"p":{"$ref":"#/$defs/A"}},"$defs":{"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/definitions/C"}},"definitions":{"C":{"type":"integer","minimum":1}}}`,
			`{"type":"object","properties":{"p":{"type":"integer","minimum":1}}}`},
		{"$ref with siblings",
			`{"type":"object","properties":{"p":{"$ref":"#/$defs/S","description":"the p"}},"$defs":{"S":{"type":"string","description":"a string"}}}`,
			`{"type":"object","properties":{"p":{"type":"string","description":"the p"}}}`},
		{"$ref with clashing sibling",
			`{"type":"object","properties":{"p":{"$ref":"#/$defs/S","maxLength":3}},"$defs":{"S":{"type":"string","maxLength":9}}}`,
			`{"type":"object","properties":{"p":{"allOf":[{"type":"string","maxLength":9},{"maxLength":3}]}}}`},
		{"escaped pointer",
			`{"type":"object","properties":{"p":{"$ref":"#/$defs/a~1b%20c"}},"$defs":{"a/b c":{"type":"boolean"}}}`,
			`{"type":"object","properties":{"p":{"type":"boolean"}}}`},
		{"pointer into properties",
			`{"type":"object","properties":{"a":{"type":"string","enum":["x"]},"b":{"$ref":"#/properties/a"}}}`,
			`{"type":"object","properties":{"a":{"type":"string","enum":["x"]},"b":{"type":"string","enum":["x"]}}}`},
		{"remote and dangling refs",
			`{"type":"object","properties":{"r":{"$ref":"https://example.com/s.json"},"d":{"$ref":"#/$defs/nope"},"n":{"$ref":"#anchor"}}}`,
			`{"type":"object","properties":{"r":{},"d":{},"n":{}}}`},
		{"self cycle",
			`{"type":"object","properties":{"node":{"$ref":"#/$defs/N"}},"$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}}}}}`,
			`{"type":"object","properties":{"node":{"type":"object","properties":{"next":{"type":"object","properties":{"next":{}}}}}}}`},
		{"mutual cycle",
			`{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"type":"array","items":{"$ref":"#/$defs/B"}},"B":{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}}}}}`,
			`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"a":{}}}}}}}}}`},
		{"root recursion",
			`{"type":"object","properties":{"child":{"$ref":"#"}}}`,
			`{"type":"object","properties":{"child":{"type":"object","properties":{"child":{"type":"object","properties":{"child":{}}}}}}}`},
		{"oneOf root",
			`{"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"string"}},"required":["kind","x"]},{"type":"object","properties":{"kind":{"const":"b"},"y":{"type":"number"}},"required":["kind","y"]}]}`,
			`{"type":"object","properties":{"kind":{"anyOf":[{"const":"a"},{"const":"b"}]},"x":{"type":"string"},"y":{"type":"number"}},"required":["kind"]}`},
		{"anyOf root with refs and a non-object branch",
			`{"anyOf":[{"$ref":"#/$defs/A"},{"type":"string"}],"$defs":{"A":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}}`,
			`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`},
		{"allOf root",
			`{"allOf":[{"properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"string"}},"required":["b"]}],"description":"both"}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a","b"],"description":"both"}`},
		{"root enum, not, if dropped",
			`{"type":"object","properties":{},"not":{"required":["x"]},"if":{},"then":{},"enum":[{}]}`,
			`{"type":"object","properties":{}}`},
		{"nested oneOf kept",
			`{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"number"}]}}}`,
			`{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"number"}]}}}`},
		{"tuple items",
			`{"type":"object","properties":{"t":{"type":"array","items":[{"type":"string"},{"type":"number"}],"additionalItems":false}}}`,
			`{"type":"object","properties":{"t":{"type":"array","prefixItems":[{"type":"string"},{"type":"number"}],"items":false}}}`},
		{"data keywords untouched",
			`{"type":"object","properties":{"p":{"default":{"$ref":"#/x"},"enum":[{"$id":"keep"}],"examples":[{"$schema":1}]}}}`,
			`{"type":"object","properties":{"p":{"default":{"$ref":"#/x"},"enum":[{"$id":"keep"}],"examples":[{"$schema":1}]}}}`},
		{"big integers exact",
			`{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993}}}`,
			`{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993}}}`},
	} {
		for _, dialect := range []string{llm.DialectOpenAI, llm.DialectAnthropic} {
			got, err := llm.Transform(json.RawMessage(tc.in), dialect)
			if err != nil {
				t.Errorf("%s: Transform(%s, %s): %v", tc.name, tc.in, dialect, err)
				continue
			}
			if diff := cmp.Diff(decodeNumber(t, tc.want), decodeNumber(t, string(got))); diff != "" {
				t.Errorf("%s: Transform(%s, %s) = %s (-want +got):\n%s", tc.name, tc.in, dialect, got, diff)
			}
			checkValidObjectSchema(t, tc.name, got)
		}
	}
}

func TestTransformErrors(t *testing.T) {
	if _, err := llm.Transform(json.RawMessage(`{"type":`), llm.DialectOpenAI); err == nil {
		t.Errorf("Transform(malformed) = nil error")
	}
	if _, err := llm.Transform(json.RawMessage(`{}`), "gemini"); err == nil {
		t.Errorf(`Transform(dialect "gemini") = nil error`)
	}
}

// TestTransformFanOut: refs that double at each level stay bounded.
func TestTransformFanOut(t *testing.T) {
	defs := map[string]any{}
	for i := range 40 {
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"type": "object", "properties": map[string]any{
			"l": map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i+1)},
			"r": map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i+1)},
		}}
	}
	defs["d40"] = map[string]any{"type": "string"}
	in, _ := json.Marshal(map[string]any{"$ref": "#/$defs/d0", "$defs": defs})
	done := make(chan struct{})
	var out json.RawMessage
	var err error
	go func() {
		defer close(done)
		out, err = llm.Transform(in, llm.DialectOpenAI)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Transform of a 2^40 fan-out did not return")
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(out) > 1<<20 {
		t.Errorf("Transform of a fan-out: %d bytes, want bounded", len(out))
	}
	checkValidObjectSchema(t, "fan-out", out)
}

func decodeNumber(t *testing.T, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

// checkValidObjectSchema compiles s as a 2020-12 schema (refusing any remote
// ref) and checks its root is an object schema with properties.
func checkValidObjectSchema(t *testing.T, name string, s json.RawMessage) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s))
	if err != nil {
		t.Errorf("%s: result %s is not JSON: %v", name, s, err)
		return
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	if err := c.AddResource("mem:///schema.json", doc); err != nil {
		t.Errorf("%s: AddResource(%s): %v", name, s, err)
		return
	}
	if _, err := c.Compile("mem:///schema.json"); err != nil {
		t.Errorf("%s: result %s does not compile: %v", name, s, err)
	}
	m, _ := doc.(map[string]any)
	if m["type"] != "object" {
		t.Errorf("%s: result %s: type = %v, want object", name, s, m["type"])
	}
	if _, ok := m["properties"].(map[string]any); !ok {
		t.Errorf("%s: result %s has no properties object", name, s)
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf", "$ref", "$defs", "definitions", "$schema", "$id"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s: result %s keeps %s at the root", name, s, k)
		}
	}
}

type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("refusing to load %s", url)
}

// TestTransformEverything transforms the input schemas of the reference
// server "everything", as listed over stdio by the go-sdk client.
func TestTransformEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server-everything")
	}
	argv := interop.Everything(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(argv[0], append(argv[1:], "stdio")...)
	cmd.Env = interop.Env(t)
	client := mcp.NewClient(&mcp.Implementation{Name: "llm-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("Connect(server-everything): %v", err)
	}
	defer cs.Close()
	var tools []*mcp.Tool
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("Tools: %v", err)
		}
		tools = append(tools, tool)
	}
	if len(tools) < 5 {
		t.Fatalf("server-everything listed %d tools, want several", len(tools))
	}
	for _, dialect := range []string{llm.DialectOpenAI, llm.DialectAnthropic} {
		var out []json.RawMessage
		for _, tool := range tools {
			in, err := json.Marshal(tool.InputSchema)
			if err != nil {
				t.Fatal(err)
			}
			got, err := llm.Transform(in, dialect)
			if err != nil {
				t.Errorf("Transform(%s, %s): %v", tool.Name, dialect, err)
				continue
			}
			checkValidObjectSchema(t, dialect+" "+tool.Name, got)
			out = append(out, got)
		}
		if len(out) != len(tools) {
			t.Errorf("%s: %d schemas transformed of %d tools", dialect, len(out), len(tools))
		}
	}
	// get-sum's numbers survive the transform.
	for _, tool := range tools {
		if tool.Name != "get-sum" {
			continue
		}
		in, _ := json.Marshal(tool.InputSchema)
		got, _ := llm.Transform(in, llm.DialectOpenAI)
		var s struct {
			Properties map[string]struct {
				Type string `json:"type"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(got, &s); err != nil {
			t.Fatal(err)
		}
		if s.Properties["a"].Type != "number" || s.Properties["b"].Type != "number" || len(s.Required) != 2 {
			t.Errorf("Transform(get-sum) = %s, want numbers a and b, both required", got)
		}
	}
}
