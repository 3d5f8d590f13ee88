package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
)

// TestOAuthGrant: an OAuth token with [gateway.auth] admin_scope sees on
// the API what [[gateway.auth.policy]] grants it, as on /mcp, and the
// owner's auth_token everything: the servers, tools, resources,
// templates and prompts listed are the granted server's; a prompt got
// without naming its server is the granted one's; reading, getting or
// filtering by the other server is a 404 as for one that does not exist,
// and adding a server outside the grant a 403 whether or not it exists;
// the events stream leaves the other server's events out, usage its
// calls, and the host's state its status and tools. A token without the admin scope gets 403 naming admin_scope.
// Only the owner adds or deletes an endpoint (403 for the admin token).
func TestOAuthGrant(t *testing.T) {
	as := testauth.Start(t, &testauth.Options{JWT: true})
	const token = "api-grant-token-8b3e1f"
	t.Setenv("SB_API_TOKEN", token)
	a := startAPIWith(t, func(o *daemon.Options) {
		b := o.Config.Servers[0]
		b.ID = "b"
		o.Config.Servers = append(o.Config.Servers, b)
		o.Config.Gateway.AuthToken = "{{env.SB_API_TOKEN}}"
		o.Config.Gateway.Auth = &config.GatewayAuth{Issuer: as.Issuer, AllowLocalIssuer: true, AdminScope: "admin",
			Policy: []config.AuthPolicy{{Servers: []string{"a"}}}}
	})
	now := time.Now()
	mint := func(scope string) []string {
		tok, err := as.Mint(jwt.MapClaims{"iss": as.Issuer, "aud": a.url + "/mcp", "sub": "alice", "scope": scope, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
		if err != nil {
			t.Fatal(err)
		}
		return []string{"Authorization", "Bearer " + tok}
	}
	admin, owner := mint("admin"), []string{"Authorization", "Bearer " + token}

	code, h, body := a.do("GET", "/api/v1/servers", "", mint("mcp")...)
	a.wantProblem("a token without the admin scope", 403, "Authorization", code, h, body)
	if !strings.Contains(string(body), "admin_scope") {
		t.Errorf("the refusal does not name admin_scope: %s", body)
	}

	// servers lists the ids of what path lists, for the caller.
	servers := func(path string, hdr []string) []string {
		t.Helper()
		code, _, body := a.do("GET", path, "", hdr...)
		var pg struct {
			Items []struct {
				ID     string `json:"id"`
				Server string `json:"server"`
			} `json:"items"`
		}
		if code != 200 || json.Unmarshal(body, &pg) != nil {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		var ids []string
		for _, it := range pg.Items {
			if id := it.ID + it.Server; !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		return ids
	}
	if got := servers("/api/v1/servers", owner); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("the owner's servers: %v, want a and b", got)
	}
	for _, p := range []string{"/api/v1/servers", "/api/v1/tools", "/api/v1/tools?q=echo", "/api/v1/resources", "/api/v1/resources/templates", "/api/v1/prompts"} {
		if got := servers(p, admin); !slices.Equal(got, []string{"a"}) {
			t.Errorf("GET %s with the admin token: the items of %v, want a's alone", p, got)
		}
		if got := servers(p, owner); p != "/api/v1/servers" && !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("GET %s with auth_token: the items of %v, want a's and b's", p, got)
		}
	}
	// The host's state: the servers granted, and their tools alone.
	for _, tc := range []struct {
		hdr  []string
		want []string
	}{{admin, []string{"a"}}, {owner, []string{"a", "b"}}} {
		code, _, body := a.do("GET", "/api/v1/state", "", tc.hdr...)
		var st struct {
			Servers []struct{ ID string }     `json:"servers"`
			Tools   []struct{ Server string } `json:"tools"`
		}
		if code != 200 || json.Unmarshal(body, &st) != nil {
			t.Fatalf("GET /api/v1/state: %d %s", code, body)
		}
		var ids, of []string
		for _, s := range st.Servers {
			ids = append(ids, s.ID)
		}
		for _, tl := range st.Tools {
			if !slices.Contains(of, tl.Server) {
				of = append(of, tl.Server)
			}
		}
		if !slices.Equal(ids, tc.want) || !slices.Equal(of, tc.want) {
			t.Errorf("GET /api/v1/state with %s: servers %v, tools of %v; want %v", tc.hdr[1][:12], ids, of, tc.want)
		}
	}
	if code, _, body := a.do("POST", "/api/v1/prompts/get", `{"name":"greet","arguments":{"name":"Ada"}}`, admin...); code != 200 || !strings.Contains(string(body), "Ada") {
		t.Errorf("greet without a server, with the admin token: %d %s, want a's", code, body)
	}
	for _, rq := range [][2]string{
		{"/api/v1/prompts/get", `{"server":"b","name":"greet","arguments":{"name":"Ada"}}`},
		{"/api/v1/resources/read", `{"server":"b","uri":"test://static/1"}`},
		{"/api/v1/tools/mcp_b_echo/call", `{"arguments":{"text":"x"}}`},
		{"/api/v1/servers/b/refresh", ""},
	} {
		code, h, body := a.do("POST", rq[0], rq[1], admin...)
		a.wantProblem("POST "+rq[0]+" "+rq[1]+" with the admin token", 404, "", code, h, body)
	}
	// Adding a server the grant does not cover: refused on the id alone,
	// the same whether it exists (b) or not (c).
	for _, id := range []string{"b", "c"} {
		entry, _ := json.Marshal(map[string]any{"id": id, "command": "/bin/true"})
		code, h, body := a.do("POST", "/api/v1/servers", string(entry), admin...)
		a.wantProblem("adding "+id+" with the admin token", 403, "id", code, h, body)
	}
	if code, _, body := a.do("GET", "/api/v1/servers/c", "", owner...); code != 404 {
		t.Errorf("c was added: %d %s", code, body)
	}
	for _, p := range []string{"/api/v1/resources?server=b", "/api/v1/tools/mcp_b_echo", "/api/v1/servers/b"} {
		code, h, body := a.do("GET", p, "", admin...)
		a.wantProblem("GET "+p+" with the admin token", 404, "", code, h, body)
	}

	// Events: b restarts, then a; the admin's stream has a's, not b's.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream := func(hdr []string) *bufio.Scanner {
		req, _ := http.NewRequestWithContext(ctx, "GET", a.url+"/api/v1/events", nil)
		req.Header.Set(hdr[0], hdr[1])
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET /api/v1/events: %v %v", resp, err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return bufio.NewScanner(resp.Body)
	}
	// until reads sc until a server:state event of server in state.
	until := func(sc *bufio.Scanner, server, state string) []string {
		t.Helper()
		var seen []string
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev struct{ Type, Server, State string }
			json.Unmarshal([]byte(data), &ev)
			if ev.Server != "" {
				seen = append(seen, ev.Server)
			}
			if ev.Type == "server:state" && ev.Server == server && ev.State == state {
				return seen
			}
		}
		t.Fatalf("the stream ended before %s was %s: %v", server, state, sc.Err())
		return nil
	}
	adminEvents, ownerEvents := stream(admin), stream(owner)
	for _, id := range []string{"b", "a"} {
		if code, _, body := a.do("POST", "/api/v1/servers/"+id+"/restart", "", owner...); code != 202 {
			t.Fatalf("restarting %s: %d %s", id, code, body)
		}
		until(ownerEvents, id, "ready")
	}
	if seen := until(adminEvents, "a", "ready"); slices.Contains(seen, "b") {
		t.Errorf("the admin token's events hold b's: %v", seen)
	}

	// Usage: the owner calls both; the admin token sees a's calls alone.
	for _, tool := range []string{"mcp_a_echo", "mcp_b_echo"} {
		if code, _, body := a.do("POST", "/api/v1/tools/"+tool+"/call", `{"arguments":{"text":"x"}}`, owner...); code != 200 {
			t.Fatalf("calling %s: %d %s", tool, code, body)
		}
	}
	var u struct {
		Calls []struct{ Server, Tool string } `json:"calls"`
	}
	for hdr, want := range map[*[]string][]string{&admin: {"a/echo"}, &owner: {"a/echo", "b/echo"}} {
		code, _, body := a.do("GET", "/api/v1/usage", "", (*hdr)...)
		if code != 200 || json.Unmarshal(body, &u) != nil {
			t.Fatalf("GET /api/v1/usage: %d %s", code, body)
		}
		var got []string
		for _, c := range u.Calls {
			got = append(got, c.Server+"/"+c.Tool)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("GET /api/v1/usage with %s: %v, want %v", (*hdr)[1][:12], got, want)
		}
	}

	// Endpoints: an endpoint publishes whatever servers it names, so only
	// the owner changes them; the admin token gets 403, and lists them.
	ep := `{"name":"both","servers":["a","b"]}`
	code, h, body = a.do("POST", "/api/v1/endpoints", ep, admin...)
	a.wantProblem("the admin token adding an endpoint", 403, "", code, h, body)
	if code, _, body := a.do("POST", "/api/v1/endpoints", ep, owner...); code != 201 {
		t.Fatalf("the owner adding an endpoint: %d %s", code, body)
	}
	code, h, body = a.do("DELETE", "/api/v1/endpoints/both", "", admin...)
	a.wantProblem("the admin token deleting an endpoint", 403, "", code, h, body)
	if code, _, body := a.do("GET", "/api/v1/endpoints/both", "", admin...); code != 200 {
		t.Errorf("the admin token reading an endpoint: %d %s", code, body)
	}
}
