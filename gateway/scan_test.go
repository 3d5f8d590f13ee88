package gateway_test

import (
	"context"
	"slices"
	"testing"

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
