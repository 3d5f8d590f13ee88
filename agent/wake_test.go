package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/store"
)

// TestDiscoveryStartsOnlyChosen: with max_tools, a run over lazy servers
// whose tool lists are cached ranks their cached tools and starts only the
// server whose tool it chose — before the model calls anything — while the
// others stay idle: three servers, one child process. Each server is a
// real fixture process started through sh, which counts its starts.
func TestDiscoveryStartsOnlyChosen(t *testing.T) {
	bin := interop.Build(t, fixturePkg)
	dir := t.TempDir()
	cache, err := store.Open(context.Background(), filepath.Join(dir, "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	tools := map[string]string{"a": "stock_quote", "b": "weather_forecast", "c": "translate_text"}
	var servers []config.Server
	for _, id := range []string{"a", "b", "c"} {
		servers = append(servers, config.Server{ID: id, Command: "sh", Lazy: true,
			Args: []string{"-c", `echo start >>"$0"; exec "$1" -tool-name "$2"`, filepath.Join(dir, id+".starts"), bin, tools[id]}})
	}
	starts := func(id string) int {
		b, err := os.ReadFile(filepath.Join(dir, id+".starts"))
		if os.IsNotExist(err) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "start")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The first host starts each (no list is cached yet) and caches its
	// list.
	h1, err := host.Start(ctx, servers, &host.Options{ToolCache: cache})
	if err != nil {
		t.Fatal(err)
	}
	h1.Close()
	for id := range tools {
		if n := starts(id); n != 1 {
			t.Fatalf("first host: server %s started %d times, want 1", id, n)
		}
	}

	h, err := host.Start(ctx, servers, &host.Options{ToolCache: cache})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	w := h.Watch(0)
	defer w.Close()
	for _, st := range h.Servers() {
		if st.State != host.StateLazy {
			t.Fatalf("second host: server %s is %s, want lazy-idle", st.ID, st.State)
		}
	}
	p := &scripted{turns: []func(context.Context, *llm.Request, func(string)) (*llm.Response, error){say("Sunny.")}}
	evs := collect(t, ctx, &RunOptions{Agent: &Agent{ID: "w", Model: "fake:m", MaxSteps: 2, MaxTools: 1}, Host: h, Provider: p,
		Prompt: "What is the weather forecast for Paris?", Servers: servers})
	if got := evs[0].Tools; len(got) != 1 || got[0] != "mcp_b_weather_forecast" {
		t.Fatalf("the run offered %q, want mcp_b_weather_forecast", got)
	}
	// The chosen server was started for the run, though the model called
	// nothing. Bounded: its start takes well under a second here.
	wctx, wcancel := context.WithTimeout(ctx, 15*time.Second)
	defer wcancel()
	for {
		ev, err := w.Next(wctx)
		if err != nil {
			t.Fatalf("waiting for server b to be ready: %v", err)
		}
		if ev.Kind == host.EventState && ev.Server == "b" && ev.Status.State == host.StateReady {
			break
		}
	}
	for id, want := range map[string]int{"a": 1, "b": 2, "c": 1} {
		if n := starts(id); n != want {
			t.Errorf("server %s started %d times in all, want %d", id, n, want)
		}
	}
	for _, st := range h.Servers() {
		if st.ID != "b" && st.State != host.StateLazy {
			t.Errorf("server %s is %s, want still lazy-idle", st.ID, st.State)
		}
	}
}
