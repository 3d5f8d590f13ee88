package schema_test

import (
	"encoding/json"
	"fmt"

	"github.com/switchboardmcp/switchboard/schema"
)

func Example() {
	// At discovery: compile the tool's inputSchema once.
	s, err := schema.Compile(json.RawMessage(`{
		"type": "object",
		"properties": {
			"path":  {"type": "string"},
			"limit": {"type": "integer", "minimum": 1}
		},
		"required": ["path"]
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}

	// On each call: validate, then forward the decoded value, not the bytes.
	args, err := s.Validate(json.RawMessage(`{"path": "/tmp", "limit": 9223372036854775807}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	forward, _ := json.Marshal(args)
	fmt.Println(string(forward))

	// Arguments a server could read differently from the validator are refused.
	_, err = s.Validate(json.RawMessage(`{"path": "/tmp", "PATH": "/etc", "limit": 0}`))
	fmt.Println(err)

	// So are numbers a server cannot read as numbers.
	_, err = s.Validate(json.RawMessage(`{"path": "/tmp", "limit": 9223372036854775808}`))
	fmt.Println(err)

	// Output:
	// {"limit":9223372036854775807,"path":"/tmp"}
	// invalid arguments: /PATH: differs only in case from declared property "path"
	// invalid arguments: /limit: integer 9223372036854775808 is out of range: servers read integers as 64-bit, from -9223372036854775808 to 9223372036854775807
}

func ExampleCompile_remoteRef() {
	_, err := schema.Compile(json.RawMessage(`{"$ref": "https://example.com/tool.json"}`))
	fmt.Println(err)
	// Output:
	// invalid input schema: remote $ref https://example.com/tool.json is not allowed
}
