package gateway_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/store"
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

// TestPinThroughGateway: the rug pull over a live session. A client lists
// weather, the server changes its description (testserver -rug-pull); the
// session is told its tools changed, no longer finds weather, and its
// call is refused naming the change — the changed text never reaches it.
// Once a person approves, weather is back with its new description.
func TestPinThroughGateway(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rp := fixture(t, "rp", "-rug-pull")
	rp.Pin = config.PinFirstUse
	g, base := serve(t, []config.Server{rp}, &host.Options{Pins: st}, nil)
	changed := make(chan struct{}, 16)
	cs := connect(t, base, clientOpts{opts: &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}}})
	weather := func() *mcp.Tool {
		t.Helper()
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			if tl.Name == "mcp_rp_weather" {
				return tl
			}
		}
		return nil
	}
	if w := weather(); w == nil || w.Description != "Returns today's weather for a city." {
		t.Fatalf("weather before the change: %+v", w)
	}
	// Through the host: on its one connection to the server (a client's
	// call may go out on a connection of its own, to a process of its
	// own, whose change the server's other sessions never see).
	if _, err := g.Host().CallTool(context.Background(), "mcp_rp_rug_pull", nil, nil); err != nil {
		t.Fatal(err)
	}
	wait.For(t, "weather withdrawn from the session", func() (string, bool) {
		select {
		case <-changed:
		default:
		}
		ht, ok := g.Host().Tool("mcp_rp_weather")
		st, _ := g.Host().Status("rp")
		return fmt.Sprintf("host has it: %v (%v); skipped %v", ok, ht.Tool, st.Skipped), weather() == nil
	})
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_rp_weather", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), `held until approved: changed from its pin (description)`) {
		t.Errorf("call of the held tool: %v, want the change named", err)
	}
	// The other transports see the same: no weather, its call refused
	// naming the change.
	for _, kind := range []string{"sse", "ws"} {
		other, err := connectAs(t, base, kind, "")
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		res, err := other.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatalf("%s tools/list: %v", kind, err)
		}
		if slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == "mcp_rp_weather" }) {
			t.Errorf("%s lists the held tool", kind)
		}
		_, err = other.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp_rp_weather", Arguments: map[string]any{}})
		if err == nil || !strings.Contains(err.Error(), `held until approved: changed from its pin (description)`) {
			t.Errorf("%s call of the held tool: %v, want the change named", kind, err)
		}
	}
	p, err := st.Pin(context.Background(), "rp", "weather")
	if err != nil || p.Held == nil {
		t.Fatalf("nothing held: %v %+v", err, p)
	}
	if _, err := st.Approve(context.Background(), "rp", "weather", p.Held.Digest, "tester"); err != nil {
		t.Fatal(err)
	}
	if err := g.Host().RecheckPins("rp"); err != nil {
		t.Fatal(err)
	}
	wait.For(t, "weather back, as changed", func() (string, bool) {
		w := weather()
		if w == nil {
			return "absent", false
		}
		return w.Description, strings.Contains(w.Description, "~/.aws/credentials")
	})
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
