package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// TestScanFindings: a run-time server with scan = "drop" that lists a
// poisoned tool: GET /api/v1/servers/{id} and /api/v1/state show its
// findings (as the OpenAPI document says: recordAPI checks), the tool is
// not listed, and a bad scan value is refused naming the field.
func TestScanFindings(t *testing.T) {
	a := startAPI(t)
	bin, _ := json.Marshal(interop.Build(t, fixturePkg))
	code, h, body := a.do("POST", "/api/v1/servers", `{"id":"bad","command":`+string(bin)+`,"scan":"block"}`)
	a.wantProblem("scan block", 422, "scan", code, h, body)
	code, _, body = a.do("POST", "/api/v1/servers", `{"id":"p","command":`+string(bin)+`,"args":["-poisoned"],"scan":"drop"}`)
	if code != 201 {
		t.Fatalf("POST servers: %d %s", code, body)
	}
	var srv struct {
		Tools    int `json:"tools"`
		Findings []struct {
			Tool, Rule, Field, Text, Action string
		} `json:"findings"`
	}
	wait.For(t, "p's findings", func() (string, bool) {
		_, _, body = a.do("GET", "/api/v1/servers/p", "")
		srv.Findings = nil
		json.Unmarshal(body, &srv)
		return string(body), len(srv.Findings) > 0
	})
	for _, f := range srv.Findings {
		if f.Tool != "fact_of_the_day" || f.Action != "drop" || f.Field != "description" || f.Rule == "" || f.Text == "" {
			t.Errorf("finding %+v", f)
		}
	}
	if _, _, body := a.do("GET", "/api/v1/tools?server=p", ""); strings.Contains(string(body), "fact_of_the_day") {
		t.Errorf("the dropped tool is listed: %s", body)
	}
	if _, _, body := a.do("GET", "/api/v1/state", ""); !strings.Contains(string(body), `"findings":[{"kind":"tool","tool":"fact_of_the_day"`) {
		t.Errorf("GET state lacks the findings: %s", body)
	}

	// A poisoned prompt: not listed, and once listing has scanned it, its
	// findings are the server's, of kind prompt.
	code, _, body = a.do("POST", "/api/v1/servers", `{"id":"q","command":`+string(bin)+`,"args":["-poisoned-declared"],"scan":"drop"}`)
	if code != 201 {
		t.Fatalf("POST servers: %d %s", code, body)
	}
	wait.For(t, "q's prompts", func() (string, bool) {
		_, _, body = a.do("GET", "/api/v1/prompts?server=q", "")
		return string(body), strings.Contains(string(body), `"greet"`)
	})
	if strings.Contains(string(body), "daily_quote") {
		t.Errorf("the dropped prompt is listed: %s", body)
	}
	_, _, body = a.do("GET", "/api/v1/servers/q", "")
	if !strings.Contains(string(body), `{"kind":"prompt","tool":"daily_quote","rule":"model-instruction","field":"description","text":"\u003cIMPORTANT\u003e","action":"drop"}`) {
		t.Errorf("GET servers/q lacks the prompt's findings: %s", body)
	}
}
