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
