package api

import (
	_ "embed"
	"net/http"
	"sync"

	"github.com/goccy/go-yaml"
)

// openapiYAML is the API's OpenAPI 3.1 document, written by hand beside
// the handlers it describes; openapi_test.go validates every answer the
// tests see against it.
//
//go:embed openapi.yaml
var openapiYAML []byte

// OpenAPI returns the OpenAPI 3.1 document of the API, as JSON, served at
// /api/v1/openapi.json.
var OpenAPI = sync.OnceValues(func() ([]byte, error) {
	return yaml.YAMLToJSON(openapiYAML)
})

func (a *API) openapi(w http.ResponseWriter, r *http.Request) error {
	b, err := OpenAPI()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, err = w.Write(b)
	return err
}
