package guardrail

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// Arguments filters a call's arguments (decoded JSON, as the host's
// schema validation returns them) with the rules for [Arguments]. It
// returns the arguments to send: args itself when nothing was masked,
// otherwise a copy (args is never changed).
func (c *Chain) Arguments(ctx context.Context, call Call, args map[string]any) (map[string]any, []Record, error) {
	if !c.Applies(call, Arguments) {
		return args, nil, nil
	}
	var parts []Part
	walkStrings(args, "arguments", func(p, s string) string {
		parts = append(parts, Part{Path: p, Text: s})
		return s
	})
	recs, changed, err := c.Filter(ctx, call, Arguments, parts)
	if err != nil || !changed {
		return args, recs, err
	}
	k := 0
	out, _ := walkStrings(args, "arguments", func(string, string) string { k++; return parts[k-1].Text })
	m, _ := out.(map[string]any)
	return m, recs, nil
}

// Result filters a call's result with the rules for [Results]: its text
// content, its embedded resources' text and the strings of its structured
// content. It returns the result to hand out: res itself when nothing was
// masked, otherwise a copy (res is never changed).
func (c *Chain) Result(ctx context.Context, call Call, res *mcp.CallToolResult) (*mcp.CallToolResult, []Record, error) {
	if res == nil || !c.Applies(call, Results) {
		return res, nil, nil
	}
	var parts []Part
	for i, ct := range res.Content {
		switch ct := ct.(type) {
		case *mcp.TextContent:
			parts = append(parts, Part{Path: decode.IndexPath("content", i) + ".text", Text: ct.Text})
		case *mcp.EmbeddedResource:
			if ct.Resource != nil && ct.Resource.Text != "" {
				parts = append(parts, Part{Path: decode.IndexPath("content", i) + ".resource.text", Text: ct.Resource.Text})
			}
		}
	}
	nContent := len(parts)
	structured := res.StructuredContent
	if raw, ok := structured.(json.RawMessage); ok {
		structured = nil
		_ = json.Unmarshal(raw, &structured)
	}
	walkStrings(structured, "structuredContent", func(p, s string) string {
		parts = append(parts, Part{Path: p, Text: s})
		return s
	})
	recs, changed, err := c.Filter(ctx, call, Results, parts)
	if err != nil || !changed {
		return res, recs, err
	}
	out := *res
	out.Content = slices.Clone(res.Content)
	k := 0
	for i, ct := range out.Content {
		switch ct := ct.(type) {
		case *mcp.TextContent:
			if parts[k].Text != ct.Text {
				t := *ct
				t.Text = parts[k].Text
				out.Content[i] = &t
			}
			k++
		case *mcp.EmbeddedResource:
			if ct.Resource != nil && ct.Resource.Text != "" {
				if parts[k].Text != ct.Resource.Text {
					e, r := *ct, *ct.Resource
					r.Text = parts[k].Text
					e.Resource = &r
					out.Content[i] = &e
				}
				k++
			}
		}
	}
	k = nContent
	if v, ch := walkStrings(structured, "structuredContent", func(string, string) string { k++; return parts[k-1].Text }); ch {
		out.StructuredContent = v
	}
	return &out, recs, nil
}

// walkStrings calls fn with each string of a decoded JSON value and its
// path, objects' keys in sorted order, and returns the value with each
// string replaced by what fn returned: v itself when none changed,
// otherwise a copy of the containers on the way to a change.
func walkStrings(v any, path string, fn func(path, s string) string) (any, bool) {
	switch v := v.(type) {
	case string:
		s := fn(path, v)
		return s, s != v
	case map[string]any:
		var out map[string]any
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			nv, ch := walkStrings(v[k], decode.KeyPath(path, k), fn)
			if ch {
				if out == nil {
					out = make(map[string]any, len(v))
					for k2, v2 := range v {
						out[k2] = v2
					}
				}
				out[k] = nv
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	case []any:
		var out []any
		for i, e := range v {
			nv, ch := walkStrings(e, decode.IndexPath(path, i), fn)
			if ch {
				if out == nil {
					out = slices.Clone(v)
				}
				out[i] = nv
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	return v, false
}

// MetaKey is the _meta key of a result under which the host lists what
// the guardrails did to the call: a list of [Record]s, never the matched
// text.
const MetaKey = "switchboard/guardrails"
