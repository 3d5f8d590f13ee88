package gateway_test

import (
	"context"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
)

// TestScanThroughGateway: a poisoned tool (testserver -poisoned) reaches
// the gateway's clients under scan = "warn" and not under hold or drop;
// the servers' other tools do in every case.
func TestScanThroughGateway(t *testing.T) {
	w := fixture(t, "w", "-poisoned")
	hd := fixture(t, "hd", "-poisoned")
	hd.Scan = config.ScanHold
	d := fixture(t, "d", "-poisoned")
	d.Scan = config.ScanDrop
	_, base := serve(t, []config.Server{w, hd, d}, nil, nil)
	cs := connect(t, base, clientOpts{})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	for name, want := range map[string]bool{
		"mcp_w_fact_of_the_day": true, "mcp_hd_fact_of_the_day": false, "mcp_d_fact_of_the_day": false,
		"mcp_w_echo": true, "mcp_hd_echo": true, "mcp_d_echo": true,
	} {
		if got := slices.Contains(names, name); got != want {
			t.Errorf("tools/list has %s: %v, want %v (%v)", name, got, want, names)
		}
	}
}

// TestScanDeclaredThroughGateway: a poisoned prompt, resource and resource
// template (testserver -poisoned-declared) reach the gateway's clients
// under scan = "warn" and not under drop, where asking for the prompt by
// name fails; the clean ones do in both cases.
func TestScanDeclaredThroughGateway(t *testing.T) {
	for _, action := range []string{config.ScanWarn, config.ScanDrop} {
		t.Run(action, func(t *testing.T) {
			s := fixture(t, "s", "-poisoned-declared")
			s.Scan = action
			_, base := serve(t, []config.Server{s}, nil, nil)
			cs := connect(t, base, clientOpts{})
			ctx := context.Background()
			listed := map[string]bool{}
			ps, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps.Prompts {
				listed["prompt "+p.Name] = true
			}
			rs, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs.Resources {
				listed["resource "+r.URI] = true
			}
			ts, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range ts.ResourceTemplates {
				listed["template "+x.URITemplate] = true
			}
			warn := action == config.ScanWarn
			for what, want := range map[string]bool{
				"prompt mcp_s_daily_quote": warn, "resource test://poisoned/notes": warn, "template test://poisoned/{id}": warn,
				"prompt mcp_s_greet": true, "resource test://static/1": true, "template test://item/{id}": true,
			} {
				if listed[what] != want {
					t.Errorf("listed %s: %v, want %v (%v)", what, listed[what], want, listed)
				}
			}
			_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp_s_daily_quote"})
			if warn != (err == nil) {
				t.Errorf("prompts/get mcp_s_daily_quote: %v, want an answer only under warn", err)
			}
			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://poisoned/notes"})
			if warn != (err == nil) {
				t.Errorf("resources/read test://poisoned/notes: %v, want an answer only under warn", err)
			}
		})
	}
}
