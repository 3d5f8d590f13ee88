package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
)

// hidden returns the first character in s that a terminal would act on or
// a person would not see, as U+XXXX, or "".
func hidden(s string) string {
	for _, r := range s {
		if r == '\n' || r == '\t' {
			continue
		}
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) {
			return fmt.Sprintf("%U", r)
		}
	}
	return ""
}

// stringsIn returns the strings in a JSON value, but for enum and const
// values, which the host keeps as the server wrote them.
func stringsIn(v any) []any {
	raw, _ := json.Marshal(v)
	var doc any
	json.Unmarshal(raw, &doc)
	var out []any
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				if k != "enum" && k != "const" {
					walk(e)
				}
			}
		}
	}
	walk(doc)
	return out
}

// The gateway's clients get what the host cleaned: names, titles and
// descriptions of tools, prompts, resources and templates without terminal
// escapes or invisible characters, and identifiers that hide characters
// not offered at all (issue 11 §3).
func TestDeclaredTextThroughGateway(t *testing.T) {
	_, base := serve(t, []config.Server{fixture(t, "hs", "-hostile-text")}, nil, nil)
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			cs := connect(t, base, clientOpts{version: v})
			ctx := context.Background()
			var listed []any
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range tools.Tools {
				if strings.Contains(tl.Name, "hid") {
					t.Errorf("tool %q offered", tl.Name)
				}
				listed = append(listed, tl.Name, tl.Title, tl.Description)
				if tl.Annotations != nil {
					listed = append(listed, tl.Annotations.Title)
				}
				listed = append(listed, stringsIn(tl.InputSchema)...)
			}
			prompts, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range prompts.Prompts {
				listed = append(listed, p.Name, p.Title, p.Description)
				for _, a := range p.Arguments {
					listed = append(listed, a.Name, a.Title, a.Description)
				}
			}
			resources, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range resources.Resources {
				listed = append(listed, r.URI, r.Name, r.Title, r.Description)
			}
			templates, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range templates.ResourceTemplates {
				listed = append(listed, r.URITemplate, r.Name, r.Title, r.Description)
			}
			seen := 0
			for _, s := range listed {
				s := s.(string)
				if h := hidden(s); h != "" {
					t.Errorf("listed %q: holds %s", s, h)
				}
				if strings.Contains(s, "Adds numbers. red docs") {
					seen++
				}
			}
			if seen < 8 {
				t.Errorf("the hostile text was seen cleaned %d times, want every field", seen)
			}
			for _, p := range prompts.Prompts {
				if strings.Contains(p.Name, "hid") {
					t.Errorf("prompt %q offered", p.Name)
				}
			}
			for _, r := range resources.Resources {
				if strings.Contains(r.URI, "hid") {
					t.Errorf("resource %q offered", r.URI)
				}
			}
			// A server's protocol error reaches the client clean.
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_hs_hostile_error", Arguments: map[string]any{}})
			msg := fmt.Sprint(err)
			if res != nil {
				msg = textOf(res)
			}
			if h := hidden(msg); h != "" || !strings.Contains(msg, "Adds numbers. red docs") {
				t.Errorf("hostile_error reached the client as %q (holds %q)", msg, h)
			}
		})
	}
}
