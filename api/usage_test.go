package api_test

import (
	"encoding/json"
	"testing"
)

// TestUsage: GET /usage reports the tool calls made through the daemon
// (here, through the API) per server and tool, with their errors, over the
// window asked for (1h by default); a window that is no duration, or
// beyond what the store keeps, is a 400 naming the field. Every answer is
// validated against the OpenAPI document.
func TestUsage(t *testing.T) {
	a := startAPI(t)
	code, _, body := a.do("GET", "/api/v1/usage", "")
	var u struct {
		Window string `json:"window"`
		Calls  []struct {
			Server string  `json:"server"`
			Tool   string  `json:"tool"`
			Calls  int64   `json:"calls"`
			Errors int64   `json:"errors"`
			P95    float64 `json:"p95_ms"`
		} `json:"calls"`
		Tokens []json.RawMessage `json:"tokens"`
	}
	if code != 200 || json.Unmarshal(body, &u) != nil || u.Window != "1h0m0s" || len(u.Calls) != 0 || u.Tokens == nil {
		t.Fatalf("GET /usage before any call = %d %s, want 200, a window of 1h and no calls", code, body)
	}
	for _, args := range []string{`{"a":2,"b":3}`, `{"a":1,"b":1}`} {
		if code, _, body := a.do("POST", "/api/v1/tools/mcp_a_add/call", `{"arguments":`+args+`}`); code != 200 {
			t.Fatalf("call: %d %s", code, body)
		}
	}
	if code, _, body := a.do("POST", "/api/v1/tools/mcp_a_fail/call", `{"arguments":{}}`); code != 200 {
		t.Fatalf("call fail: %d %s", code, body)
	}
	code, _, body = a.do("GET", "/api/v1/usage?window=24h", "")
	if code != 200 || json.Unmarshal(body, &u) != nil || u.Window != "24h0m0s" {
		t.Fatalf("GET /usage?window=24h = %d %s", code, body)
	}
	got := map[string][2]int64{}
	for _, c := range u.Calls {
		got[c.Server+"/"+c.Tool] = [2]int64{c.Calls, c.Errors}
	}
	if got["a/add"] != [2]int64{2, 0} || got["a/fail"] != [2]int64{1, 1} || len(got) != 2 {
		t.Errorf("GET /usage?window=24h calls = %s, want a/add twice and a/fail once, failed", body)
	}
	for _, w := range []string{"soon", "30s", "1000h"} {
		code, h, body := a.do("GET", "/api/v1/usage?window="+w, "")
		a.wantProblem("GET /usage?window="+w, 400, "window", code, h, body)
	}
	// The calls through one named endpoint: none of these came through one.
	var byEndpoint struct {
		Endpoint  string            `json:"endpoint"`
		Calls     []json.RawMessage `json:"calls"`
		Tokens    []json.RawMessage `json:"tokens"`
		Endpoints []json.RawMessage `json:"endpoints"`
	}
	code, _, body = a.do("GET", "/api/v1/usage?window=24h&endpoint=code", "")
	if code != 200 || json.Unmarshal(body, &byEndpoint) != nil || byEndpoint.Endpoint != "code" ||
		len(byEndpoint.Calls)+len(byEndpoint.Tokens)+len(byEndpoint.Endpoints) != 0 || byEndpoint.Endpoints == nil {
		t.Errorf("GET /usage?endpoint=code = %d %s, want 200 naming the endpoint, with no calls (the API's are through none)", code, body)
	}
	for _, e := range []string{"Code", "-x", "a%2Fb"} {
		code, h, body := a.do("GET", "/api/v1/usage?endpoint="+e, "")
		a.wantProblem("GET /usage?endpoint="+e, 400, "endpoint", code, h, body)
	}
}
