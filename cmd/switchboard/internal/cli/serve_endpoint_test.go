package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/cmd/switchboard/internal/cli"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// endpointsConfig declares two stdio servers and three endpoints over them.
func endpointsConfig(fx string) string {
	return `[[mcp_servers]]
id = "a"
command = "` + fx + `"

[[mcp_servers]]
id = "b"
command = "` + fx + `"

[[endpoints]]
name = "one"
servers = ["a"]
tools = ["a_e*"]

[[endpoints]]
name = "two"
tools = ["b_add", "a_echo"]
instructions = "Two's."

[endpoints.rename]
plus = "mcp_b_add"

[endpoints.override.plus]
description = "Adds a and b."

[[endpoints]]
name = "three"
path = "/three/mcp"
servers = ["b"]
tools = ["*", "!b_slow", "!b_ask_*"]
`
}

// toolsJSON lists cs's tools, sorted, as JSON, with their names.
func toolsJSON(t *testing.T, ctx context.Context, cs *mcp.ClientSession) ([]string, string) {
	t.Helper()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	tools := res.Tools
	slices.SortFunc(tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	b, _ := json.Marshal(tools)
	return names, string(b)
}

// TestServeEndpoints: `serve` over HTTP serves each [[endpoints]] table at
// its paths with its own tools, over the configuration's two stdio servers
// (two child processes, whatever the endpoints); `serve --stdio --endpoint
// NAME` serves the same tools, byte for byte, and a call outside them is an
// unknown tool; --endpoint naming no endpoint is a usage error.
func TestServeEndpoints(t *testing.T) {
	dir := isolate(t)
	fx := interop.Build(t, fixturePkg)
	cfg := writeConfig(t, dir, endpointsConfig(fx))
	children := childPIDs(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, code, stderr := startServe(t, ctx, "--config", cfg, "serve", "--listen", "127.0.0.1:0")
	for _, line := range []string{`^switchboard: endpoint one at http://127\.0\.0\.1:[0-9]+/e/one/mcp$`, `^switchboard: endpoint three at http://127\.0\.0\.1:[0-9]+/three/mcp$`} {
		if !regexp.MustCompile("(?m)" + line).MatchString(stderr()) {
			t.Errorf("stderr has no line %s:\n%s", line, stderr())
		}
	}
	var fixtures int
	for pid := range childPIDs(t) {
		if children[pid] {
			continue
		}
		if exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe")); exe == fx {
			fixtures++
		}
	}
	if fixtures != 2 {
		t.Errorf("%d fixture processes for three endpoints over two stdio servers, want 2", fixtures)
	}

	want := map[string][]string{
		"one":   {"mcp_a_echo", "mcp_a_elicit", "mcp_a_env"},
		"two":   {"mcp_a_echo", "plus"},
		"three": {"mcp_b_add", "mcp_b_content", "mcp_b_echo", "mcp_b_elicit", "mcp_b_env", "mcp_b_fail", "mcp_b_progress", "mcp_b_roots", "mcp_b_sample"},
	}
	paths := map[string]string{"one": "/e/one/mcp", "two": "/e/two/mcp", "three": "/three/mcp"}
	overHTTP := map[string]string{}
	for name, p := range paths {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + p}, nil)
		if err != nil {
			t.Fatalf("endpoint %s: connect: %v", name, err)
		}
		names, js := toolsJSON(t, ctx, cs)
		if !slices.Equal(names, want[name]) {
			t.Errorf("endpoint %s over HTTP lists %v, want %v", name, names, want[name])
		}
		overHTTP[name] = js
		if got := cs.InitializeResult().ServerInfo.Name; got != "switchboard/"+name {
			t.Errorf("endpoint %s: serverInfo.name %q", name, got)
		}
		cs.Close()
	}
	cancel()
	if c := <-code; c != cli.ExitOK {
		t.Errorf("serve exited %d\n%s", c, stderr())
	}

	// The same endpoints over stdio, one process each.
	for _, name := range []string{"two", "three"} {
		t.Run("stdio "+name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			var errBuf interop.LogBuffer
			done := make(chan int, 1)
			go func() {
				done <- cli.Main(ctx, []string{"--config", cfg, "serve", "--stdio", "--endpoint", name}, inR, outW, &errBuf)
				outW.Close()
			}()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
			if err != nil {
				t.Fatalf("connect: %v\n%s", err, errBuf.String())
			}
			waitForLine(t, errBuf.String, readyLine)
			names, js := toolsJSON(t, ctx, cs)
			if want := fmt.Sprintf(", %d tools on endpoint %s", len(names), name); !strings.Contains(errBuf.String(), want) {
				t.Errorf("serve --stdio --endpoint %s's ready line does not say %q:\n%s", name, want, errBuf.String())
			}
			if js != overHTTP[name] {
				t.Errorf("endpoint %s over stdio lists %v:\n%s\nover HTTP:\n%s", name, names, js, overHTTP[name])
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_b_slow", Arguments: map[string]any{"ms": 1}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
				t.Errorf("calling mcp_b_slow, outside endpoint %s: %v, want an unknown tool", name, err)
			}
			cs.Close()
			inW.Close()
			if c := <-done; c != cli.ExitOK {
				t.Errorf("serve --stdio --endpoint %s exited %d\n%s", name, c, errBuf.String())
			}
		})
	}

	var out, errOut strings.Builder
	if c := cli.Main(context.Background(), []string{"--config", cfg, "serve", "--stdio", "--endpoint", "four"}, strings.NewReader(""), &out, &errOut); c != cli.ExitUsage || !strings.Contains(errOut.String(), `no endpoint "four" in the configuration (configured: one, two, three)`) {
		t.Errorf("serve --stdio --endpoint four: exit %d, %s; want a usage error naming the endpoints", c, errOut.String())
	}
	if c := cli.Main(context.Background(), []string{"--config", cfg, "serve", "--endpoint", "one"}, strings.NewReader(""), &out, &errOut); c != cli.ExitUsage || !strings.Contains(errOut.String(), "--endpoint is for --stdio") {
		t.Errorf("serve --endpoint without --stdio: exit %d, %s; want a usage error", c, errOut.String())
	}
}

// TestServeStoredEndpoint: an endpoint added at run time (POST
// /api/v1/endpoints) is served by a later `serve --stdio --endpoint NAME`,
// which reads it from the state store: its tools, as over HTTP.
func TestServeStoredEndpoint(t *testing.T) {
	dir := isolate(t)
	fx := interop.Build(t, fixturePkg)
	cfg := writeConfig(t, dir, endpointsConfig(fx))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, code, stderr := startServe(t, ctx, "--config", cfg, "serve", "--listen", "127.0.0.1:0")
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/endpoints", strings.NewReader(`{"name": "web", "servers": ["b"], "tools": ["b_add", "b_echo"]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Switchboard-CSRF", "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /api/v1/endpoints: %d %s", resp.StatusCode, b)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/e/web/mcp"}, nil)
	if err != nil {
		t.Fatalf("endpoint web over HTTP: %v", err)
	}
	names, overHTTP := toolsJSON(t, ctx, cs)
	if want := []string{"mcp_b_add", "mcp_b_echo"}; !slices.Equal(names, want) {
		t.Errorf("endpoint web over HTTP lists %v, want %v", names, want)
	}
	cs.Close()
	cancel()
	if c := <-code; c != cli.ExitOK {
		t.Fatalf("serve exited %d\n%s", c, stderr())
	}

	sctx, scancel := context.WithCancel(context.Background())
	defer scancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errBuf interop.LogBuffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(sctx, []string{"--config", cfg, "serve", "--stdio", "--endpoint", "web"}, inR, outW, &errBuf)
		outW.Close()
	}()
	cs, err = mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(sctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("serve --stdio --endpoint web: connect: %v\n%s", err, errBuf.String())
	}
	waitForLine(t, errBuf.String, readyLine)
	if got := cs.InitializeResult().ServerInfo.Name; got != "switchboard/web" {
		t.Errorf("serverInfo.name %q, want switchboard/web", got)
	}
	if names, js := toolsJSON(t, sctx, cs); js != overHTTP {
		t.Errorf("endpoint web over stdio lists %v:\n%s\nover HTTP:\n%s", names, js, overHTTP)
	}
	cs.Close()
	inW.Close()
	if c := <-done; c != cli.ExitOK {
		t.Errorf("serve --stdio --endpoint web exited %d\n%s", c, errBuf.String())
	}
}
