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
	if _, _, body := a.do("GET", "/api/v1/state", ""); !strings.Contains(string(body), `"findings":[{"tool":"fact_of_the_day"`) {
		t.Errorf("GET state lacks the findings: %s", body)
	}
}
