package toolmode_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/toolmode"
)

// TestParseSearchBounds: a query longer than MaxQueryBytes is refused,
// saying so; one at the bound is taken.
func TestParseSearchBounds(t *testing.T) {
	arg := func(q string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"query": q})
		return b
	}
	if q, _, err := toolmode.ParseSearch(arg(strings.Repeat("a", toolmode.MaxQueryBytes))); err != nil || len(q) != toolmode.MaxQueryBytes {
		t.Errorf("a query at the bound: %v", err)
	}
	if _, _, err := toolmode.ParseSearch(arg(strings.Repeat("a ", toolmode.MaxQueryBytes))); err == nil || !strings.Contains(err.Error(), "more than 1024") {
		t.Errorf("a query past the bound: %v, want a refusal naming it", err)
	}
}
