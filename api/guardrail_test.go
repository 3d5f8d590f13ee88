package api_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/guardrail"
	"github.com/switchboardmcp/switchboard/host"
)

// TestToolCallGuardrails: a REST tool call goes through the host's
// guardrails: a credential masked in the result (with the record in
// _meta), a rejection a 422 problem of type guardrail naming the rule.
func TestToolCallGuardrails(t *testing.T) {
	chain, err := guardrail.New([]guardrail.Rule{
		{Filter: guardrail.Credentials{}, Action: guardrail.Mask, Direction: guardrail.Results},
		{Filter: guardrail.Deny{Patterns: []*regexp.Regexp{regexp.MustCompile(`forbidden`)}}, Action: guardrail.Reject, Direction: guardrail.Results, Name: "no-forbidden"},
	})
	if err != nil {
		t.Fatal(err)
	}
	a := startAPIWith(t, func(o *daemon.Options) { o.Host = &host.Options{Guardrails: chain} })
	a.waitTool("mcp_a_echo")
	code, _, body := a.do("POST", "/api/v1/tools/mcp_a_echo/call", `{"arguments":{"text":"token ghp_1234567890abcdefghijABCDEFGHIJ123456"}}`)
	if code != 200 || !strings.Contains(string(body), `token [masked:github-token]`) || !strings.Contains(string(body), `"switchboard/guardrails":[{`) || strings.Contains(string(body), "ghp_") {
		t.Errorf("masked call: %d %s", code, body)
	}
	code, h, body := a.do("POST", "/api/v1/tools/mcp_a_echo/call", `{"arguments":{"text":"a forbidden word"}}`)
	a.wantProblem("rejected call", 422, "", code, h, body)
	if !strings.Contains(string(body), "urn:switchboard:problem:guardrail") || !strings.Contains(string(body), `guardrail \"no-forbidden\" rejected the result`) || strings.Contains(string(body), "forbidden word") {
		t.Errorf("rejected call: %s", body)
	}
}
