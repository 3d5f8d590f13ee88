package config

import (
	"slices"
	"testing"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// TestEveryFieldDeclared: every field of the typed configuration has a key,
// so that a field added to a struct cannot be forgotten by the decoders.
func TestEveryFieldDeclared(t *testing.T) {
	for name, undeclared := range map[string][]string{
		"Server":   decode.Undeclared(serverFields, "Source"),
		"Gateway":  decode.Undeclared(gatewayTable.fields, "Source"),
		"Network":  decode.Undeclared(networkTable.fields, "Source"),
		"Limits":   decode.Undeclared(limitsTable.fields, "Source"),
		"State":    decode.Undeclared(stateTable.fields, "Source"),
		"Search":   decode.Undeclared(searchTable.fields, "Source"),
		"Code":     decode.Undeclared(codeTable.fields, "Source"),
		"Provider": decode.Undeclared(providerFields, "Name", "Source"), // Name is the table's own name
	} {
		if len(undeclared) > 0 {
			t.Errorf("%s fields without a key: %v", name, undeclared)
		}
	}
	// Every key-by-key table is a top-level key.
	for _, mt := range mergedTables {
		k := mt.topField().Key
		if !slices.Contains(tomlTop.Keys(decode.TOML), k) {
			t.Errorf("[%s] is not a top-level key", k)
		}
	}
}
