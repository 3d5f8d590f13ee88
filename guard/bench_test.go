package guard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchboardmcp/switchboard/guard"
)

// BenchmarkGuardEndpoint is the guard's own cost per request on /mcp with
// the owner's token and on a named endpoint with the endpoint's own token
// (the owner's compared first, then the endpoint's), the handler doing
// nothing: what a named endpoint adds to a request, without the noise of
// a whole call (gateway's BenchmarkNamedEndpoint).
func BenchmarkGuardEndpoint(b *testing.B) {
	gd, err := guard.New(context.Background(), &guard.Options{AuthToken: "owner-token-0123456789"})
	if err != nil {
		b.Fatal(err)
	}
	nop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	gd.Handle("/mcp", guard.AccessMCP, "", nop)
	gd.HandleEndpoint("/e/code/mcp", guard.Endpoint{Name: "code", AuthToken: "code-token-0123456789"}, nop)
	for _, c := range []struct{ name, path, token string }{
		{"mcp", "/mcp", "owner-token-0123456789"},
		{"named", "/e/code/mcp", "code-token-0123456789"},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := httptest.NewRequest("POST", "http://127.0.0.1"+c.path, nil)
			w := httptest.NewRecorder()
			for b.Loop() {
				r := req.Clone(req.Context())
				r.Header.Set("Authorization", "Bearer "+c.token)
				gd.ServeHTTP(w, r)
			}
			if w.Code != http.StatusOK {
				b.Fatalf("%s: %d", c.path, w.Code)
			}
		})
	}
}
