// Package schema compiles MCP tool input schemas and validates call
// arguments against them before any call reaches a server.
package schema

import "encoding/json"

// A Schema is a compiled tool input schema.
type Schema struct{}

// Compile compiles a tool's inputSchema.
func Compile(raw json.RawMessage) (*Schema, error) { panic("TODO") }

// Validate decodes args, validates them and returns the decoded value to
// forward to the server.
func (s *Schema) Validate(args json.RawMessage) (map[string]any, error) { panic("TODO") }
