package guard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/switchboardmcp/switchboard/guard"
)

// A listener's one guard: every route is registered on it with what it asks
// of a request, and the guard is the listener's handler.
func Example() {
	gd, err := guard.New(context.Background(), &guard.Options{AuthToken: "s3cret", Loopback: true})
	if err != nil {
		panic(err)
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") })
	gd.Handle("GET /hello", guard.AccessOwner, "", hello)
	gd.Handle("GET /healthz", guard.AccessPublic, "a load balancer's probe, which has no token", hello)
	ts := httptest.NewServer(gd)
	defer ts.Close()

	for _, c := range []struct{ path, token string }{{"/hello", ""}, {"/hello", "s3cret"}, {"/healthz", ""}, {"/nowhere", ""}} {
		req, _ := http.NewRequest("GET", ts.URL+c.path, nil)
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(c.path, c.token != "", resp.StatusCode)
	}
	// Output:
	// /hello false 401
	// /hello true 200
	// /healthz false 200
	// /nowhere false 401
}

// The routes of named MCP endpoints, each with its own token: a token opens
// its own endpoint alone, the owner's opens every one.
func ExampleGuard_HandleEndpoint() {
	gd, err := guard.New(context.Background(), &guard.Options{AuthToken: "owner-s3cret", Loopback: true})
	if err != nil {
		panic(err)
	}
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, _ := guard.EndpointOf(r.Context())
		fmt.Fprintf(w, "as %q", name)
	})
	for _, name := range []string{"code", "ops"} {
		ep := guard.Endpoint{Name: name, AuthToken: name + "-s3cret"}
		for _, p := range []string{"/mcp", "/sse", "/message", "/ws"} { // every transport, the same rules
			gd.HandleEndpoint("/e/"+name+p, ep, mcp)
		}
	}
	ts := httptest.NewServer(gd)
	defer ts.Close()

	for _, c := range []struct{ path, token string }{
		{"/e/code/mcp", "code-s3cret"}, {"/e/ops/sse", "code-s3cret"}, {"/e/ops/ws", "owner-s3cret"}, {"/e/code/mcp", ""},
	} {
		req, _ := http.NewRequest("GET", ts.URL+c.path, nil)
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(c.path, c.token, resp.StatusCode)
	}
	// Output:
	// /e/code/mcp code-s3cret 200
	// /e/ops/sse code-s3cret 403
	// /e/ops/ws owner-s3cret 200
	// /e/code/mcp  401
}
