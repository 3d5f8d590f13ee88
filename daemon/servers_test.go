package daemon_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/store"
)

// gatewayWatch connects an MCP client to the daemon's gateway and returns
// a channel that gets a value at each tools/list_changed.
func gatewayWatch(t *testing.T, url string) (*mcp.ClientSession, <-chan struct{}) {
	t.Helper()
	ch := make(chan struct{}, 64)
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { ch <- struct{}{} },
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, ch
}

// awaitTools waits, at each list_changed, until ok holds of the gateway's
// tool names.
func awaitTools(t *testing.T, cs *mcp.ClientSession, ch <-chan struct{}, what string, ok func([]string) bool) {
	t.Helper()
	timeout := time.After(testTimeout)
	for {
		if names := toolNames(t, cs); ok(names) {
			return
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("the gateway's clients never saw %s: %v", what, toolNames(t, cs))
		}
	}
}

func entry(t *testing.T, flags ...string) json.RawMessage {
	t.Helper()
	m := map[string]any{"command": interop.Build(t, fixturePkg)}
	if len(flags) > 0 {
		m["args"] = flags
	}
	b, _ := json.Marshal(m)
	return b
}

// TestServerOperations: servers added, updated, disabled, enabled,
// restarted and deleted through the daemon take effect at once on the
// running host, MCP clients get list_changed, and the store keeps what was
// done; configured servers are read-only; bad entries change nothing.
func TestServerOperations(t *testing.T) {
	st := openStore(t)
	cfg := &config.Config{Servers: []config.Server{fixture(t, "a")}}
	r := run(t, cfg, st, nil)
	r.awaitReady(t)
	d := r.d
	ctx := context.Background()
	cs, changed := gatewayWatch(t, r.url)

	m, err := d.AddServer(ctx, "b", entry(t, "-tool-name", "first"))
	if err != nil {
		t.Fatalf("AddServer(b): %v", err)
	}
	if m.Origin != daemon.OriginRuntime || m.Version != 1 || !m.Enabled || m.Status == nil {
		t.Errorf("AddServer(b) = %+v", m)
	}
	awaitTools(t, cs, changed, "b's tool", func(n []string) bool { return slices.Contains(n, "mcp_b_first") })
	if rec, err := st.Server(ctx, "b"); err != nil || !rec.Enabled || strings.Contains(string(rec.Config), `"id"`) {
		t.Errorf("stored b = %+v, %v", rec, err)
	}

	// Bad entries: each problem names its field, and nothing is stored.
	for _, tc := range []struct{ entry, field string }{
		{`{"url":"http://10.0.0.1/mcp"}`, "url"},
		{`{"command":"x","bogus":1}`, "bogus"},
		{`{"command":"x","timeout":5}`, "timeout"},
		{`{"command":"x","env":{"GITHUB_TOKEN":"ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"}}`, "env.GITHUB_TOKEN"},
		{`{"id":"other","command":"x"}`, "id"},
		{`[1]`, ""},
	} {
		_, err := d.AddServer(ctx, "c", json.RawMessage(tc.entry))
		var p *config.Problem
		if !errors.As(err, &p) || p.Field != tc.field {
			t.Errorf("AddServer(c, %s) = %v, want a problem at %q", tc.entry, err, tc.field)
		}
		if err != nil && strings.Contains(err.Error(), "ghp_") {
			t.Errorf("the error quotes the credential: %v", err)
		}
	}
	if _, err := st.Server(ctx, "c"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused entry was stored: %v", err)
	}

	// Configured servers are read-only, and their ids are taken.
	if _, err := d.AddServer(ctx, "a", entry(t)); !errors.Is(err, store.ErrExists) {
		t.Errorf("AddServer(a) = %v, want ErrExists", err)
	}
	if err := d.DeleteServer(ctx, "a", 0); !errors.Is(err, daemon.ErrReadOnly) {
		t.Errorf("DeleteServer(a) = %v, want ErrReadOnly", err)
	}
	if _, err := d.SetServerEnabled(ctx, "a", false, 0); !errors.Is(err, daemon.ErrReadOnly) {
		t.Errorf("SetServerEnabled(a) = %v, want ErrReadOnly", err)
	}
	if _, err := d.UpdateServer(ctx, "a", entry(t), 0); !errors.Is(err, daemon.ErrReadOnly) {
		t.Errorf("UpdateServer(a) = %v, want ErrReadOnly", err)
	}
	if err := d.DeleteServer(ctx, "nope", 0); !errors.Is(err, host.ErrUnknownServer) {
		t.Errorf("DeleteServer(nope) = %v, want ErrUnknownServer", err)
	}

	// Update: conditional on the version; restarts b with its new entry.
	if _, err := d.UpdateServer(ctx, "b", entry(t, "-tool-name", "second"), 7); !errors.Is(err, store.ErrConflict) {
		t.Errorf("UpdateServer(b) at a stale version = %v, want ErrConflict", err)
	}
	if m, err = d.UpdateServer(ctx, "b", entry(t, "-tool-name", "second"), 1); err != nil || m.Version != 2 {
		t.Fatalf("UpdateServer(b) = %+v, %v", m, err)
	}
	awaitTools(t, cs, changed, "b's new tool", func(n []string) bool {
		return slices.Contains(n, "mcp_b_second") && !slices.Contains(n, "mcp_b_first")
	})

	// Disable, enable.
	if m, err = d.SetServerEnabled(ctx, "b", false, 0); err != nil || m.Enabled || m.Status != nil {
		t.Fatalf("disable b = %+v, %v", m, err)
	}
	awaitTools(t, cs, changed, "b's tools withdrawn", func(n []string) bool { return !slices.Contains(n, "mcp_b_second") })
	all, err := d.ListServers(ctx)
	if err != nil || len(all) != 2 || all[1].ID != "b" || all[1].Enabled {
		t.Errorf("ListServers with b disabled = %+v, %v", all, err)
	}
	if err := d.RestartServer(ctx, "b"); !errors.Is(err, daemon.ErrDisabled) {
		t.Errorf("RestartServer of a disabled server = %v, want ErrDisabled", err)
	}
	if _, err = d.SetServerEnabled(ctx, "b", true, 0); err != nil {
		t.Fatal(err)
	}
	awaitTools(t, cs, changed, "b back", func(n []string) bool { return slices.Contains(n, "mcp_b_second") })

	// Restart a configured server: a new child.
	before, _ := d.Host().Status("a")
	w := d.Host().Watch(0)
	defer w.Close()
	if err := d.RestartServer(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	for {
		wctx, cancel := context.WithTimeout(ctx, testTimeout)
		ev, err := w.Next(wctx)
		cancel()
		if err != nil {
			t.Fatalf("a never came back after RestartServer: %v", err)
		}
		if ev.Kind == host.EventState && ev.Server == "a" && ev.Status.State == host.StateReady {
			if ev.Status.PID == before.PID {
				t.Errorf("a restarted with the same child %d", before.PID)
			}
			break
		}
	}
	if err := d.RefreshServerTools(ctx, "a"); err != nil {
		t.Errorf("RefreshServerTools(a): %v", err)
	}

	// Delete.
	if err := d.DeleteServer(ctx, "b", 0); err != nil {
		t.Fatal(err)
	}
	awaitTools(t, cs, changed, "b gone", func(n []string) bool { return !slices.Contains(n, "mcp_b_second") })
	if _, err := d.GetServer(ctx, "b"); !errors.Is(err, host.ErrUnknownServer) {
		t.Errorf("GetServer(b) after DeleteServer = %v", err)
	}
	if _, err := st.Server(ctx, "b"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("b is still stored: %v", err)
	}
}

// TestServerAddedPersists: a server added to a running daemon is served
// by the next daemon on the same store.
func TestServerAddedPersists(t *testing.T) {
	st := openStore(t)
	cfg := &config.Config{Servers: []config.Server{fixture(t, "a")}}
	r := run(t, cfg, st, nil)
	r.awaitReady(t)
	if _, err := r.d.AddServer(context.Background(), "kept", entry(t)); err != nil {
		t.Fatal(err)
	}
	r.shutdown(t)

	r2 := run(t, cfg, st, nil)
	r2.awaitReady(t)
	// A run-time server is optional to the daemon: ready does not wait
	// for it, it joins when it is up.
	wait.For(t, "kept to be ready after a restart", func() (string, bool) {
		s, err := r2.d.Host().Status("kept")
		return fmt.Sprint(s.State, err), err == nil && s.State == host.StateReady
	})
	m, err := r2.d.GetServer(context.Background(), "kept")
	if err != nil || m.Origin != daemon.OriginRuntime {
		t.Errorf("GetServer(kept) = %+v, %v", m, err)
	}
}

// TestFacesGuarded: a face mounted with Handle gets the gateway's checks:
// a foreign Host or Origin is refused, and with a token set a request
// without it is refused; the face never sees the Authorization header.
func TestFacesGuarded(t *testing.T) {
	t.Setenv("SB_FACE_TOKEN", "face-token-0123456789")
	cfg := &config.Config{Servers: []config.Server{fixture(t, "a")}}
	cfg.Gateway.AuthToken = "{{env.SB_FACE_TOKEN}}"
	r := run(t, cfg, openStore(t), func(d *daemon.Daemon) {
		d.Handle("/face/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "face:"+r.Header.Get("Authorization"))
		}))
	})
	r.awaitReady(t)
	for _, tc := range []struct {
		name, host, origin, auth string
		want                     int
	}{
		{"no token", "", "", "", http.StatusUnauthorized},
		{"wrong token", "", "", "Bearer nope", http.StatusUnauthorized},
		{"foreign Host", "evil.example", "", "Bearer face-token-0123456789", http.StatusForbidden},
		{"foreign Origin", "", "http://evil.example", "Bearer face-token-0123456789", http.StatusForbidden},
		{"good", "", "", "Bearer face-token-0123456789", http.StatusOK},
	} {
		req, _ := http.NewRequest("GET", r.url+"/face/x", nil)
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, resp.StatusCode, body, tc.want)
		}
		if resp.StatusCode == http.StatusOK && string(body) != "face:" {
			t.Errorf("%s: the face saw %q", tc.name, body)
		}
	}
}
