package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/registry"
	"github.com/switchboardmcp/switchboard/registry/registrytest"
)

var update = flag.Bool("update", false, "rewrite testdata/convert.golden")

const fixture = "testdata/registry.json"

func startFixture(t *testing.T) (*registrytest.Registry, []registrytest.Record) {
	t.Helper()
	recs, err := registrytest.Load(fixture)
	if err != nil {
		t.Fatal(err)
	}
	r := registrytest.New(recs)
	t.Cleanup(r.Close)
	return r, recs
}

// values answers every variable an entry asks for as a user would: a
// secret as a placeholder, anything else as a plain value.
func values(t *testing.T, s registry.Server, kind string) map[string]string {
	vs, err := registry.Variables(s, kind)
	if err != nil {
		return nil
	}
	m := map[string]string{}
	for _, v := range vs {
		switch {
		case v.IsSecret:
			m[v.Key] = "{{secrets." + strings.ToLower(strings.ReplaceAll(v.Key, "-", "_")) + "}}"
		case v.IsRequired && v.Default == "" && len(v.Choices) > 0:
			m[v.Key] = v.Choices[0]
		case v.IsRequired && v.Default == "":
			m[v.Key] = "value-of-" + v.Key
		}
	}
	return m
}

// TestFixture converts every entry of the recorded fixture, as served by
// the fake registry: each becomes a server that the configuration accepts
// (written to a file and loaded, as switchboard validate does), or is
// refused with the reason the table expects. The servers written are
// pinned in testdata/convert.golden.
func TestFixture(t *testing.T) {
	r, recs := startFixture(t)
	c, err := registry.New(r.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]string{
		"io.github.joelverhagen/knapcode-samplemcpserver@0.4.0-beta": "the registry marks this version deprecated: Superseded by 0.5.0",
		"io.github.example/quay-sample-mcp@1.0.0":                    "the registry marks this version deleted: Removed at the publisher's request",
		"io.github.example/widget-mcp@0.3.0":                         "the entry has only cargo",
		"io.github.joelverhagen/knapcode-samplemcpserver@0.5.0":      "a NuGet package runs with dnx",
		"io.modelcontextprotocol/text-editor@1.0.2":                  "an MCPB bundle must be downloaded",
		"io.modelcontextprotocol.anonymous/embedded-mcp@0.1.0":       "",
		"io.github.example/configurable-server@1.0.0":                "serves streamable-http itself",
		"io.github.domdomegg/time-mcp-nuget@1.0.8":                   "a NuGet package runs with dnx",
		"io.github.user/verbose@1.0.0":                               "does not validate against the server.json schema",
	}
	if len(recs) < 20 {
		t.Fatalf("the fixture has %d entries, want at least 20", len(recs))
	}
	var golden strings.Builder
	golden.WriteString("# The server entries registry.Convert writes for each entry of testdata/registry.json (go test ./registry -run TestFixture -update).\n")
	ok := 0
	for _, rec := range recs {
		var s struct{ Name, Version string }
		json.Unmarshal(rec.Server, &s)
		key := s.Name + "@" + s.Version
		e, err := c.Get(t.Context(), s.Name, s.Version)
		if err != nil {
			t.Errorf("Get(%s): %v", key, err)
			continue
		}
		got, err := registry.Convert(e, &registry.ConvertOptions{Values: values(t, e.Server, ""), ContainerRuntime: "docker"})
		fmt.Fprintf(&golden, "\n## %s (%s)\n", key, e.Status())
		want, isRefused := refused[key]
		if err != nil {
			fmt.Fprintf(&golden, "refused: %s\n", strings.ReplaceAll(err.Error(), r.URL, "$REGISTRY"))
			if !isRefused {
				t.Errorf("Convert(%s) = %v, want a server", key, err)
			} else if !errors.Is(err, registry.ErrRefused) || !strings.Contains(err.Error(), want) {
				t.Errorf("Convert(%s) = %v, want a refusal with %q", key, err, want)
			}
			continue
		}
		if isRefused {
			t.Errorf("Convert(%s) = a server, want refused with %q", key, want)
		}
		ok++
		toml := config.ServerTOML(got)
		golden.WriteString(strings.ReplaceAll(string(toml), r.URL, "$REGISTRY"))
		f := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(f, toml, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := config.LoadFile(f); err != nil {
			t.Errorf("%s: the server written does not validate:\n%s\n%v", key, toml, err)
		}
		if got.Registry == nil || got.Registry.Version != s.Version || got.Registry.URL != r.URL {
			t.Errorf("%s: Registry = %+v", key, got.Registry)
		}
	}
	if ok < 12 {
		t.Errorf("%d entries converted, want at least 12", ok)
	}
	checkGolden(t, "testdata/convert.golden", golden.String())
}

func checkGolden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s (-want +got):\n%s", file, d)
	}
}

func get(t *testing.T, c *registry.Client, name, version string) registry.Entry {
	t.Helper()
	e, err := c.Get(t.Context(), name, version)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestConvertKinds(t *testing.T) {
	r, _ := startFixture(t)
	c, err := registry.New(r.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	fs := get(t, c, "io.github.modelcontextprotocol/filesystem", "latest")
	hybrid := get(t, c, "io.modelcontextprotocol.anonymous/hybrid-mcp", "latest")
	weather := get(t, c, "io.github.example/weather-mcp", "latest")
	tenant := get(t, c, "io.modelcontextprotocol.anonymous/multi-tenant-server", "latest")
	for _, tc := range []struct {
		name    string
		e       registry.Entry
		opts    registry.ConvertOptions
		command []string
		url     string
		env     map[string]string
		headers map[string]string
		refused string
	}{
		{name: "npm", e: fs, opts: registry.ConvertOptions{Values: map[string]string{"target_dir": "/srv/data"}},
			command: []string{"npx", "-y", "@modelcontextprotocol/server-filesystem@1.0.2", "/srv/data"}, env: map[string]string{"LOG_LEVEL": "info"}},
		{name: "oci with docker", e: fs, opts: registry.ConvertOptions{Kind: "oci", ContainerRuntime: "docker", Values: map[string]string{"source_path": "/home/me/p", "target_path": "/project"}},
			command: []string{"docker", "run", "-i", "--rm", "--mount", "type=bind,src=/home/me/p,dst=/project", "-e", "LOG_LEVEL", "docker.io/mcp/filesystem:1.0.2", "/project"}, env: map[string]string{"LOG_LEVEL": "info"}},
		{name: "oci with podman", e: fs, opts: registry.ConvertOptions{Kind: "oci", ContainerRuntime: "podman", Values: map[string]string{"source_path": "/a", "target_path": "/b"}},
			command: []string{"podman", "run", "-i", "--rm", "--mount", "type=bind,src=/a,dst=/b", "-e", "LOG_LEVEL", "docker.io/mcp/filesystem:1.0.2", "/project"}, env: map[string]string{"LOG_LEVEL": "info"}},
		{name: "oci without a runtime", e: fs, opts: registry.ConvertOptions{Kind: "oci", Values: map[string]string{"source_path": "/a", "target_path": "/b"}},
			refused: "neither docker nor podman is on PATH"},
		{name: "required value missing", e: fs, opts: registry.ConvertOptions{Kind: "oci", ContainerRuntime: "docker"},
			refused: "required: source_path"},
		{name: "remote with a secret header", e: hybrid, opts: registry.ConvertOptions{Kind: "remote", Values: map[string]string{"X-API-Key": "{{secrets.hybrid_key}}"}},
			url: "https://mcp.anonymous.modelcontextprotocol.io/http", headers: map[string]string{"X-API-Key": "{{secrets.hybrid_key}}", "X-Region": "us-east-1"}},
		{name: "secret header given in clear", e: hybrid, opts: registry.ConvertOptions{Kind: "remote", Values: map[string]string{"X-API-Key": "sk-live-1234"}},
			refused: "header X-API-Key is secret"},
		{name: "secret env given in clear", e: weather, opts: registry.ConvertOptions{Values: map[string]string{"WEATHER_API_KEY": "abc"}},
			refused: "environment variable WEATHER_API_KEY is secret"},
		{name: "pypi", e: weather, opts: registry.ConvertOptions{ID: "weather", Values: map[string]string{"WEATHER_API_KEY": "{{secrets.weather_key}}"}},
			command: []string{"uvx", "weather-mcp-server==0.5.0"}, env: map[string]string{"WEATHER_API_KEY": "{{secrets.weather_key}}", "WEATHER_UNITS": "celsius"}},
		{name: "templated remote", e: tenant, opts: registry.ConvertOptions{Values: map[string]string{"tenant_id": "emea-cell1"}},
			url: "https://anonymous.modelcontextprotocol.io/mcp/emea-cell1"},
		{name: "templated remote without its variable", e: tenant, refused: "required: tenant_id"},
		{name: "no such kind", e: weather, opts: registry.ConvertOptions{Kind: "oci"}, refused: "no oci package or remote; the entry has pypi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := registry.Convert(tc.e, &tc.opts)
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("Convert = %v, want a refusal with %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var command []string
			if got.Command != "" {
				command = append([]string{got.Command}, got.Args...)
			}
			if d := cmp.Diff(tc.command, command); d != "" {
				t.Errorf("command (-want +got):\n%s", d)
			}
			if got.URL != tc.url {
				t.Errorf("URL = %q, want %q", got.URL, tc.url)
			}
			if d := cmp.Diff(tc.env, got.Env); d != "" {
				t.Errorf("env (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.headers, got.Headers); d != "" {
				t.Errorf("headers (-want +got):\n%s", d)
			}
		})
	}
}

func TestSearch(t *testing.T) {
	r, _ := startFixture(t)
	cache := t.TempDir()
	c, err := registry.New(r.URL, &registry.Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	es, err := c.Search(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Server.Name+"@"+e.Server.Version)
		if e.Status() == registry.StatusDeleted {
			t.Errorf("search lists deleted %s", e.Server.Name)
		}
	}
	for _, want := range []string{"io.github.domdomegg/airtable-mcp-server@1.7.3", "io.modelcontextprotocol/everything@0.6.2"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("Search(\"\") = %v, want %s among them", names, want)
		}
	}
	if strings.Contains(strings.Join(names, " "), "airtable-mcp-server@1.7.2") {
		t.Errorf("Search(\"\") lists a version that is not the latest: %v", names)
	}
	es, err = c.Search(t.Context(), "airtable")
	if err != nil || len(es) != 1 {
		t.Fatalf("Search(airtable) = %d entries, %v; want 1", len(es), err)
	}
	var invalid int
	all, _ := c.Search(t.Context(), "verbose")
	for _, e := range all {
		if e.Invalid != nil {
			invalid++
		}
	}
	if invalid != 1 {
		t.Errorf("Search(verbose): %d invalid entries, want 1", invalid)
	}
	// The second search of a query asks for what changed since the
	// first (updated_since); the third, the same question again, is
	// answered from the cache: the registry says 304.
	if _, err := c.Search(t.Context(), "airtable"); err != nil {
		t.Fatal(err)
	}
	before, nm := r.Requests()
	if _, err := c.Search(t.Context(), "airtable"); err != nil {
		t.Fatal(err)
	}
	after, nm2 := r.Requests()
	if after != before+1 || nm2 != nm+1 {
		t.Errorf("second search: %d requests, %d not modified; want 1 and 1", after-before, nm2-nm)
	}
}

// TestSearchUpdatedSince: with a cache, a search asks only for what
// changed since the last one, and merges it: a version published
// meanwhile replaces the one kept.
func TestSearchUpdatedSince(t *testing.T) {
	r, _ := startFixture(t)
	c, err := registry.New(r.URL, &registry.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.Search(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Publish(json.RawMessage(`{"name":"io.github.domdomegg/airtable-mcp-server","description":"d","version":"1.8.0","packages":[{"registryType":"npm","identifier":"airtable-mcp-server","version":"1.8.0","transport":{"type":"stdio"}}]}`)); err != nil {
		t.Fatal(err)
	}
	second, err := c.Search(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	qs := r.Queries()
	if last := qs[len(qs)-1]; !strings.Contains(last, "updated_since=") {
		t.Errorf("the second search asked %q, want updated_since", last)
	}
	versions := map[string]string{}
	for _, e := range second {
		versions[e.Server.Name] = e.Server.Version
	}
	if len(second) != len(first) || versions["io.github.domdomegg/airtable-mcp-server"] != "1.8.0" {
		t.Errorf("after publishing: %d entries (was %d), airtable at %q; want the same count and 1.8.0", len(second), len(first), versions["io.github.domdomegg/airtable-mcp-server"])
	}
	// A search without a cache reads the whole list, and agrees.
	fresh, _ := registry.New(r.URL, nil)
	all, err := fresh.Search(t.Context(), "")
	if err != nil || len(all) != len(second) {
		t.Errorf("a fresh search: %d entries, %v; want %d", len(all), err, len(second))
	}
}

func TestSearchPages(t *testing.T) {
	r, recs := startFixture(t)
	c, err := registry.New(r.URL, &registry.Options{MaxPages: 1})
	if err != nil {
		t.Fatal(err)
	}
	// 100 a page: the fixture fits in one.
	if _, err := c.Search(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	// A registry with more than a page of entries, read one page at most.
	many := append([]registrytest.Record(nil), recs...)
	for i := 0; i < 120; i++ {
		many = append(many, registrytest.Record{Server: json.RawMessage(fmt.Sprintf(`{"name":"io.github.many/s%d","description":"d","version":"1.0.0","remotes":[{"type":"sse","url":"https://x.example/%d"}]}`, i, i))})
	}
	big := registrytest.New(many)
	defer big.Close()
	c, _ = registry.New(big.URL, &registry.Options{MaxPages: 1})
	if _, err := c.Search(t.Context(), ""); err == nil || !strings.Contains(err.Error(), "more than 1 pages") {
		t.Errorf("Search over MaxPages = %v, want an error saying so", err)
	}
	c, _ = registry.New(big.URL, &registry.Options{MaxBytes: 1000})
	if _, err := c.Search(t.Context(), ""); err == nil || !strings.Contains(err.Error(), "larger than 1000 bytes") {
		t.Errorf("Search over MaxBytes = %v, want an error saying so", err)
	}
}

func TestGet(t *testing.T) {
	r, _ := startFixture(t)
	c, _ := registry.New(r.URL, nil)
	if _, err := c.Get(t.Context(), "io.github.nobody/none", "latest"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Get(unknown) = %v, want ErrNotFound", err)
	}
	e := get(t, c, "io.github.domdomegg/airtable-mcp-server", "latest")
	if e.Server.Version != "1.7.3" {
		t.Errorf("latest airtable = %s, want 1.7.3", e.Server.Version)
	}
	// Publishing a newer version makes it the latest.
	if err := r.Publish(json.RawMessage(`{"name":"io.github.domdomegg/airtable-mcp-server","description":"Read and write access to Airtable database schemas, tables, and records.","version":"1.8.0","packages":[{"registryType":"npm","identifier":"airtable-mcp-server","version":"1.8.0","transport":{"type":"stdio"}}]}`)); err != nil {
		t.Fatal(err)
	}
	if e := get(t, c, "io.github.domdomegg/airtable-mcp-server", "latest"); e.Server.Version != "1.8.0" {
		t.Errorf("latest airtable after publishing = %s, want 1.8.0", e.Server.Version)
	}
	// A token the registry wants.
	r.Token = "reg-token-1"
	if _, err := c.Get(t.Context(), "io.modelcontextprotocol/everything", "latest"); err == nil || !strings.Contains(err.Error(), "wants a token") {
		t.Errorf("Get without the token = %v", err)
	}
	ct, _ := registry.New(r.URL, &registry.Options{Token: "reg-token-1"})
	get(t, ct, "io.modelcontextprotocol/everything", "latest")
}

// TestGuarded: the client dials through netguard: a private address that
// is not the registry's own endpoint is refused.
func TestGuarded(t *testing.T) {
	c, err := registry.New("http://10.0.0.1:9", nil)
	if err == nil {
		_, err = c.Search(context.Background(), "")
	}
	if err == nil || !strings.Contains(err.Error(), "10.0.0.1") {
		t.Errorf("a registry at a private address = %v, want refused", err)
	}
}

func TestSecretName(t *testing.T) {
	for _, tc := range [][3]string{
		{"airtable", "AIRTABLE_API_KEY", "airtable_airtable_api_key"},
		{"hybrid-mcp", "X-API-Key", "hybrid_mcp_x_api_key"},
		{"1password", "TOKEN", "s_1password_token"},
	} {
		if got := registry.SecretName(tc[0], tc[1]); got != tc[2] {
			t.Errorf("SecretName(%q, %q) = %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}

func TestDefaultID(t *testing.T) {
	for in, want := range map[string]string{
		"io.github.modelcontextprotocol/server-memory": "server-memory",
		"io.snyk/cli-mcp": "cli-mcp",
		"io.github.x/a.b": "a-b",
		"io.github.x/...": "server",
	} {
		if got := registry.DefaultID(in); got != want {
			t.Errorf("DefaultID(%q) = %q, want %q", in, got, want)
		}
	}
}
