package gateway

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestClientMetaWithoutTasks: the capabilities a 2026-07-28 client sends
// go upstream without the tasks extension (an upstream must not answer
// the host with a task handle it cannot read), the other extensions and
// capabilities kept, and the request's own _meta unchanged.
func TestClientMetaWithoutTasks(t *testing.T) {
	var meta map[string]any
	raw := `{"` + mcp.MetaKeyClientCapabilities + `":{"elicitation":{},"extensions":{"` + TasksExtension + `":{},"x.example/other":{}}},"` + mcp.MetaKeyLogLevel + `":"debug"}`
	if err := json.Unmarshal([]byte(raw), &meta); err != nil {
		t.Fatal(err)
	}
	out := clientMeta(meta)
	got, _ := json.Marshal(out)
	want := `{"` + mcp.MetaKeyClientCapabilities + `":{"elicitation":{},"extensions":{"x.example/other":{}}},"` + mcp.MetaKeyLogLevel + `":"debug"}`
	if string(got) != want {
		t.Errorf("clientMeta = %s, want %s", got, want)
	}
	again, _ := json.Marshal(meta)
	if string(again) == string(got) {
		t.Errorf("the request's own _meta was changed: %s", again)
	}
}
