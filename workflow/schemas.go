package workflow

import "encoding/json"

// inputSchema is the JSON Schema (2020-12) of wf's inputs: the published
// tool's inputSchema.
// TODO(i14-format): use the format's own once merged.
func inputSchema(wf *Workflow) json.RawMessage {
	props := map[string]any{}
	var required []string
	for _, in := range wf.Inputs {
		p := map[string]any{}
		if in.Type != "" {
			p["type"] = in.Type
		}
		if in.Description != "" {
			p["description"] = in.Description
		}
		if in.Default != nil {
			p["default"] = in.Default
		}
		if in.Enum != nil {
			p["enum"] = in.Enum
		}
		props[in.Name] = p
		if in.Required {
			required = append(required, in.Name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	b, _ := json.Marshal(s)
	return b
}

// outputSchema is the JSON Schema of wf's outputs: the published tool's
// outputSchema.
func outputSchema(wf *Workflow) json.RawMessage {
	props := map[string]any{}
	for _, o := range wf.Outputs {
		t := o.Type
		if t == "" {
			t = "string"
		}
		p := map[string]any{"type": t}
		if o.Description != "" {
			p["description"] = o.Description
		}
		props[o.Name] = p
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
	return b
}
