package registry

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/switchboardmcp/switchboard/schema"
)

// serverSchema is the server.json schema, vendored from
// modelcontextprotocol/registry v1.8.9,
// docs/reference/server-json/draft/server.schema.json (generated there from
// docs/reference/api/openapi.yaml), unchanged.
//
//go:embed server.schema.json
var serverSchema []byte

var compiled = sync.OnceValues(func() (*schema.Schema, error) {
	return schema.Compile(serverSchema)
})

// InvalidError is why a server.json does not validate.
type InvalidError struct {
	Name, Version string
	Err           error
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("%s %s does not validate against the server.json schema: %v", e.Name, e.Version, e.Err)
}

func (e *InvalidError) Unwrap() error { return e.Err }

// Validate checks a server.json document against the vendored schema and
// decodes it.
func Validate(raw json.RawMessage) (Server, error) {
	var s Server
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, &InvalidError{Name: "(unnamed)", Err: err}
	}
	sch, err := compiled()
	if err != nil {
		// The vendored schema is compiled by a test: this is a bug.
		return s, fmt.Errorf("registry: the vendored server.json schema: %w", err)
	}
	if _, err := sch.Validate(raw); err != nil {
		return s, &InvalidError{Name: s.Name, Version: s.Version, Err: err}
	}
	return s, nil
}
