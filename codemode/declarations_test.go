package codemode_test

import (
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/codemode"
)

var update = flag.Bool("update", false, "rewrite testdata/declarations.golden")

// TestDeclarations pins the declaration of a set of schemas covering what
// Declarations reads: required and optional properties, descriptions,
// enums, const, arrays, nested objects, unions, records, names that are not
// identifiers, and what it cannot read ($ref, malformed, absent).
func TestDeclarations(t *testing.T) {
	tools := []codemode.Tool{
		{Name: "mcp_github_search_issues", Namespace: "github", Function: "search_issues", Description: "Search issues.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer"}},"required":["q"]}`)},
		{Name: "mcp_github_create_issue", Namespace: "github", Function: "create_issue", Description: "Create an issue.\nReturns its number.",
			InputSchema: json.RawMessage(`{"type":"object","required":["title","repo"],"properties":{
				"repo":{"type":"object","description":"owner and name","properties":{"owner":{"type":"string"},"name":{"type":"string"}},"required":["owner","name"]},
				"title":{"type":"string","description":"a short title"},
				"labels":{"type":"array","items":{"type":"string"}},
				"state":{"enum":["open","closed"]},
				"kind":{"const":"issue"},
				"assignee":{"type":["string","null"]},
				"meta":{"type":"object","additionalProperties":{"type":"number"}},
				"x-trace-id":{"type":"string"},
				"body":{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]},
				"ref":{"$ref":"#/$defs/r"}}}`)},
		{Name: "mcp_fs-server_read.file", Namespace: "fs-server", Function: "read.file", Description: "Read a file. */ evil",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "mcp_misc_delete", Namespace: "misc", Function: "delete", InputSchema: json.RawMessage(`not json`)},
		{Name: "mcp_misc_nothing", Namespace: "misc", Function: "nothing"},
		{Name: "mcp_misc_open", Namespace: "misc", Function: "open", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "mcp_misc_nested", Namespace: "misc", Function: "nested",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"type":"integer","enum":[1,2]}}}}}}`)},
	}
	got := codemode.Declarations(tools)
	const golden = "testdata/declarations.golden"
	const pin = "// This file pins codemode.Declarations for TestDeclarations's tools (go test ./codemode -run TestDeclarations -update).\n"
	if *update {
		if err := os.WriteFile(golden, []byte(pin+got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), pin+got); diff != "" {
		t.Errorf("Declarations (-want +got):\n%s", diff)
	}
}

func TestIdentifier(t *testing.T) {
	for in, want := range map[string]string{
		"search_issues": "search_issues", "read.file": "read_file", "fs-server": "fs_server", "": "_",
		"2fa": "_2fa", "delete": "delete", "héllo": "h_llo", "$x": "$x",
	} {
		if got := codemode.Identifier(in); got != want {
			t.Errorf("Identifier(%q) = %q, want %q", in, got, want)
		}
	}
}
