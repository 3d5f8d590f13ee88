package api_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // to garble a stored row as no API would

	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/store"
)

// TestStoredServersThatCannotStart: servers added at run time never stop
// the daemon (issue 24). One that cannot start (/usr/bin/true exits at
// once), one whose stored entry no longer decodes, and one whose row is
// not JSON at all: the daemon starts and serves, each shows failed with
// why in GET /api/v1/servers (200, as the OpenAPI document says), and
// each can be deleted.
func TestStoredServersThatCannotStart(t *testing.T) {
	ctx := context.Background()
	a := startAPIWith(t, func(o *daemon.Options) {
		for id, cfg := range map[string]string{
			"quits":   `{"command":"/usr/bin/true"}`,
			"bad":     `{"command":"x","timeout":"soon"}`,
			"garbled": `{"command":"x"}`,
		} {
			if _, err := o.Store.AddServer(ctx, store.ServerRecord{ID: id, Config: json.RawMessage(cfg), Enabled: true}); err != nil {
				t.Fatal(err)
			}
		}
		db, err := sql.Open("sqlite", o.Config.State.Database)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`UPDATE servers SET config = '{"command": ' WHERE id = 'garbled'`); err != nil {
			t.Fatal(err)
		}
	})

	type item struct {
		ID    string `json:"id"`
		State string `json:"state"`
		Error string `json:"error"`
	}
	list := func() map[string]item {
		t.Helper()
		code, _, body := a.do("GET", "/api/v1/servers", "")
		if code != 200 {
			t.Fatalf("GET servers: %d %s", code, body)
		}
		var pg struct{ Items []item }
		if err := json.Unmarshal(body, &pg); err != nil {
			t.Fatal(err)
		}
		out := map[string]item{}
		for _, it := range pg.Items {
			out[it.ID] = it
		}
		return out
	}
	got := wait.For(t, "quits's first start to fail", func() (map[string]item, bool) {
		got := list()
		return got, got["quits"].State == "failed"
	})
	for id, want := range map[string]string{"quits": "exited", "bad": "timeout", "garbled": "not JSON"} {
		if it := got[id]; it.State != "failed" || !strings.Contains(it.Error, want) {
			t.Errorf("server %s: %+v, want failed with an error that says %q", id, it, want)
		}
	}
	if got["a"].State != "ready" {
		t.Errorf("the configured server: %+v, want ready", got["a"])
	}
	code, _, body := a.do("GET", "/api/v1/servers/garbled", "")
	if code != 200 || !strings.Contains(string(body), `"state":"failed"`) {
		t.Errorf("GET servers/garbled: %d %s", code, body)
	}
	for _, id := range []string{"quits", "bad", "garbled"} {
		if code, _, body := a.do("DELETE", "/api/v1/servers/"+id, ""); code != 204 {
			t.Errorf("DELETE %s: %d %s", id, code, body)
		}
		if code, _, _ := a.do("GET", "/api/v1/servers/"+id, ""); code != 404 {
			t.Errorf("GET %s after its DELETE: %d", id, code)
		}
	}
	if got := list(); len(got) != 1 {
		t.Errorf("after the deletes: %v, want the configured server alone", got)
	}
}

// TestStoredEndpointsThatNoLongerCheck: an endpoint stored at run time
// that no longer checks against the configuration (a server it names is
// not there) never stops the daemon: it is listed failed with why, not
// served (404), and can be deleted; the others are served. One whose
// run-time server is deleted fails at once the same way.
func TestStoredEndpointsThatNoLongerCheck(t *testing.T) {
	ctx := context.Background()
	a := startAPIWith(t, func(o *daemon.Options) {
		for name, cfg := range map[string]string{
			"gone": `{"name":"gone","servers":["nope"]}`,
			"ok":   `{"name":"ok","servers":["a"],"tools":["mcp_a_echo"]}`,
		} {
			if _, err := o.Store.AddEndpoint(ctx, store.EndpointRecord{Name: name, Config: json.RawMessage(cfg)}); err != nil {
				t.Fatal(err)
			}
		}
	})
	type item struct {
		Name, State, Error string
	}
	list := func() map[string]item {
		t.Helper()
		code, _, body := a.do("GET", "/api/v1/endpoints", "")
		if code != 200 {
			t.Fatalf("GET endpoints: %d %s", code, body)
		}
		var pg struct{ Items []item }
		if err := json.Unmarshal(body, &pg); err != nil {
			t.Fatal(err)
		}
		out := map[string]item{}
		for _, it := range pg.Items {
			out[it.Name] = it
		}
		return out
	}
	got := list()
	if it := got["gone"]; it.State != "failed" || !strings.Contains(it.Error, `servers[0]: no server "nope"`) {
		t.Errorf("endpoint gone: %+v, want failed, naming its server", it)
	}
	if it := got["ok"]; it.State != "served" || it.Error != "" {
		t.Errorf("endpoint ok: %+v, want served", it)
	}
	if got := toolsAt(t, a.url+"/e/ok/mcp", ""); !slices.Equal(got, []string{"mcp_a_echo"}) {
		t.Errorf("tools at /e/ok/mcp = %v, want [mcp_a_echo]", got)
	}
	if got := statusAt(t, a.url+"/e/gone/mcp"); got != 404 {
		t.Errorf("POST /e/gone/mcp: %d, want 404", got)
	}

	bin, _ := json.Marshal(interop.Build(t, fixturePkg))
	if code, _, body := a.do("POST", "/api/v1/servers", `{"id":"b","command":`+string(bin)+`}`); code != 201 {
		t.Fatalf("POST servers: %d %s", code, body)
	}
	if code, _, body := a.do("POST", "/api/v1/endpoints", `{"name":"bee","servers":["b"]}`); code != 201 {
		t.Fatalf("POST an endpoint of a run-time server: %d %s", code, body)
	}
	wait.For(t, "b's tools at /e/bee/mcp", func() ([]string, bool) {
		got := toolsAt(t, a.url+"/e/bee/mcp", "")
		return got, slices.Contains(got, "mcp_b_echo")
	})
	if code, _, body := a.do("DELETE", "/api/v1/servers/b", ""); code != 204 {
		t.Fatalf("DELETE servers/b: %d %s", code, body)
	}
	if it := list()["bee"]; it.State != "failed" || !strings.Contains(it.Error, `no server "b"`) {
		t.Errorf("endpoint bee after its server's delete: %+v, want failed, naming its server", it)
	}
	if got := statusAt(t, a.url+"/e/bee/mcp"); got != 404 {
		t.Errorf("POST /e/bee/mcp after its server's delete: %d, want 404", got)
	}
	for _, name := range []string{"gone", "bee"} {
		if code, _, body := a.do("DELETE", "/api/v1/endpoints/"+name, ""); code != 204 {
			t.Errorf("DELETE endpoints/%s: %d %s", name, code, body)
		}
	}
	if got := list(); len(got) != 1 {
		t.Errorf("after the deletes: %v, want ok alone", got)
	}
}
