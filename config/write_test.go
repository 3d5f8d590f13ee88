package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// everyField is a server that sets every field of Server but Source to a
// value other than its default, and strings that need escaping in TOML.
func everyField() Server {
	return Server{
		ID:          "all-1",
		Description: "quotes \" backslash \\ tab \t newline \n unicode é ✓ control \x01 del \x7f",
		Transport:   TransportStdio,
		Command:     "/usr/bin/srv",
		Args:        []string{"-y", "pkg@1.0", "a b", `C:\path`, ""},
		Env:         map[string]string{"TOKEN": "{{secrets.tok}}", "PLAIN": "x=y;z", "LONG_VALUE": strings.Repeat("v", 90)},
		Cwd:         "/tmp/work dir",
		AllowEnv:    []string{"NODE_OPTIONS"},
		// For stdio servers only; the round trip does not mind.
		InstallTimeout: 10 * time.Minute,
		// The network fields on a stdio server fail validation, but not the
		// round trip, which is what this server is for.
		URL:                       "https://mcp.example.com/mcp?q=1",
		Headers:                   map[string]string{"Authorization": "Bearer {{secrets.t}}", "X.Odd-Name": "v"},
		AllowLocalEndpoint:        true,
		AllowCrossOriginRedirects: true,
		OAuth:                     &OAuth{ClientID: "cli \"1\"", ClientSecret: "{{secrets.gh_secret}}", Scopes: []string{"repo", "read:org"}, Grant: GrantClientCredentials, ClientMetadataURL: "https://example.com/client.json"},
		ToolsAllowlist:            []string{},
		Scan:                      ScanHold,
		Pin:                       PinFirstUse,
		Timeout:                   90 * time.Second,
		ConnectTimeout:            150 * time.Second,
		Optional:                  true,
		ProgressResetsTimeout:     true,
		UpstreamTask:              UpstreamTaskAlways,
		UpstreamTaskTimeout:       2 * time.Hour,
		Roots:                     []string{"file:///home/me/project"},
		Lazy:                      true,
		HealthInterval:            HealthOff,
		MaxConcurrency:            4,
		MaxRestarts:               9,
		Task:                      TaskAlways,
		ToolTasks:                 map[string]string{"greet": TaskNever, "long": TaskRequired},
		Registry:                  &RegistrySource{Name: "io.github.example/srv", Version: "1.2.3", URL: "https://registry.example.com"},
	}
}

// TestServerTOMLEveryField: every field of a server is written and loads
// back equal; a field added to Server without a key in the table, or of a
// kind the writer does not know, fails here.
func TestServerTOMLEveryField(t *testing.T) {
	s := everyField()
	v := reflect.ValueOf(s)
	for i := range v.NumField() {
		if name := v.Type().Field(i).Name; name != "Source" && v.Field(i).IsZero() {
			t.Errorf("everyField leaves %s unset: set it, so that the round trip covers it", name)
		}
	}
	text := ServerTOML(s)
	r := decodeTOML("x.toml", text, "")
	if ps := r.problems(); len(ps) > 0 {
		t.Fatalf("ServerTOML wrote what does not decode: %v\n%s", joinProblems(ps), text)
	}
	if len(r.servers) != 1 {
		t.Fatalf("decoded %d servers, want 1:\n%s", len(r.servers), text)
	}
	got := r.servers[0]
	got.Source = Position{}
	if diff := cmp.Diff(s, got); diff != "" {
		t.Errorf("round trip (-wrote +read):\n%s\n%s", diff, text)
	}
	// The long env map is a sub-table; the short headers map inline.
	if !strings.Contains(string(text), "\n[mcp_servers.env]\n") || !strings.Contains(string(text), `headers = { Authorization = "Bearer {{secrets.t}}", "X.Odd-Name" = "v" }`) {
		t.Errorf("maps not written as expected:\n%s", text)
	}
}

func TestServerTOML(t *testing.T) {
	for _, tc := range []struct {
		s    Server
		want string
	}{
		{Server{ID: "a", Command: "npx", Args: []string{"-y", "pkg"}}, "[[mcp_servers]]\nid = \"a\"\ncommand = \"npx\"\nargs = [\"-y\", \"pkg\"]\n"},
		// The transport a url implies is left out; another is written.
		{Server{ID: "b", Transport: TransportHTTP, URL: "https://x.example/mcp"}, "[[mcp_servers]]\nid = \"b\"\nurl = \"https://x.example/mcp\"\n"},
		{Server{ID: "c", Transport: TransportSSE, URL: "https://x.example/sse", Timeout: 2 * time.Minute, HealthInterval: 90 * time.Minute}, "[[mcp_servers]]\nid = \"c\"\ntransport = \"sse\"\nurl = \"https://x.example/sse\"\ntimeout = \"2m\"\nhealth_interval = \"1h30m\"\n"},
		{Server{ID: "d", Command: "x", Timeout: 1500 * time.Millisecond}, "[[mcp_servers]]\nid = \"d\"\ncommand = \"x\"\ntimeout = \"1.5s\"\n"},
	} {
		if got := string(ServerTOML(tc.s)); got != tc.want {
			t.Errorf("ServerTOML(%s) =\n%s\nwant\n%s", tc.s.ID, got, tc.want)
		}
	}
}

const commented = `# My servers. This comment is the file's own.

tool_name_format = "{server}__{tool}"   # trailing comment

# the search server
[[mcp_servers]]
id = "search"   # inline comment
url = "https://search.example.com/mcp"
headers = { Authorization = "Bearer {{secrets.search}}" }

# github, with its env as a sub-table
[[mcp_servers]]
id = "github"
command = "npx"
args = [
  "-y",               # comment inside an array
  "@modelcontextprotocol/server-github",
]
[mcp_servers.env]
GITHUB_TOKEN = "{{secrets.gh}}"

[gateway]
# the gateway's comment
listen = "127.0.0.1:7300"
`

func openEdit(t *testing.T, content string) *Edit {
	t.Helper()
	file := writeFile(t, t.TempDir(), "config.toml", content)
	e, err := OpenEdit(file, "/home/me")
	if err != nil {
		t.Fatalf("OpenEdit: %v", err)
	}
	return e
}

// TestEditAddKeepsComments: adding a server appends its table and leaves
// every byte of the existing file, comments included, where it was; the
// result loads with the new server last.
func TestEditAddKeepsComments(t *testing.T) {
	e := openEdit(t, commented)
	add := Server{ID: "everything", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}, Env: map[string]string{"K": "{{secrets.k}}"}}
	if err := e.Add(add, "imported from Claude Desktop\n(second line)"); err != nil {
		t.Fatal(err)
	}
	got := string(e.Content())
	if !strings.HasPrefix(got, commented) {
		t.Fatalf("the existing text changed:\n%s", got)
	}
	wantTail := "\n# imported from Claude Desktop\n# (second line)\n[[mcp_servers]]\nid = \"everything\"\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-everything\"]\nenv = { K = \"{{secrets.k}}\" }\n"
	if tail := got[len(commented):]; tail != wantTail {
		t.Errorf("appended:\n%q\nwant\n%q", tail, wantTail)
	}
	if string(e.Appended()) != wantTail {
		t.Errorf("Appended() = %q", e.Appended())
	}
	if _, err := e.Write(); err != nil {
		t.Fatalf("Write: %v", err)
	}
	c, err := LoadFile(e.File)
	if err != nil {
		t.Fatalf("LoadFile after Write: %v", err)
	}
	if ids := idsOf(c.Servers); !cmp.Equal(ids, []string{"search", "github", "everything"}) {
		t.Errorf("servers = %v", ids)
	}
	if !c.Servers[2].Equal(add) || c.Gateway.Listen != "127.0.0.1:7300" || c.ToolNameFormat != "{server}__{tool}" {
		t.Errorf("loaded %+v", c)
	}
	if err := e.Add(add, ""); err == nil {
		t.Error("Add of an id the file declares: no error")
	}
}

func idsOf(ss []Server) []string {
	var ids []string
	for _, s := range ss {
		ids = append(ids, s.ID)
	}
	return ids
}

func TestEditRemove(t *testing.T) {
	e := openEdit(t, commented)
	if err := e.Remove("search"); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(commented, `# the search server
[[mcp_servers]]
id = "search"   # inline comment
url = "https://search.example.com/mcp"
headers = { Authorization = "Bearer {{secrets.search}}" }

`, "", 1)
	if got := string(e.Content()); got != want {
		t.Errorf("after Remove(search):\n%s\nwant\n%s", got, want)
	}
	// The last server goes with its sub-table, up to the next table's
	// comment-free header.
	if err := e.Remove("github"); err != nil {
		t.Fatal(err)
	}
	want = "# My servers. This comment is the file's own.\n\ntool_name_format = \"{server}__{tool}\"   # trailing comment\n\n[gateway]\n# the gateway's comment\nlisten = \"127.0.0.1:7300\"\n"
	if got := string(e.Content()); got != want {
		t.Errorf("after Remove(github):\n%s\nwant\n%s", got, want)
	}
	if err := e.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	if err := e.Remove("github"); err == nil {
		t.Error("Remove of an id the file does not declare: no error")
	}
}

func TestEditReplace(t *testing.T) {
	e := openEdit(t, commented)
	repl := Server{ID: "search", URL: "https://other.example.com/mcp", Timeout: time.Minute}
	if err := e.Replace(repl); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(commented, `[[mcp_servers]]
id = "search"   # inline comment
url = "https://search.example.com/mcp"
headers = { Authorization = "Bearer {{secrets.search}}" }
`, `[[mcp_servers]]
id = "search"
url = "https://other.example.com/mcp"
timeout = "1m"
`, 1)
	if got := string(e.Content()); got != want {
		t.Errorf("after Replace:\n%s\nwant\n%s", got, want)
	}
	if err := e.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
}

// TestEditRefuses: files an edit cannot keep whole are refused before
// anything is changed, and so is an edit whose result is not a valid
// file.
func TestEditRefuses(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"inline.toml": "mcp_servers = [ { id = \"a\", command = \"x\" } ]\n",
		"broken.toml": "[[mcp_servers]\nid = \"a\"\n",
		"claude.json": `{"mcpServers": {}}`,
	} {
		if _, err := OpenEdit(writeFile(t, dir, name, content), ""); err == nil {
			t.Errorf("OpenEdit(%s): no error", name)
		}
	}

	e := openEdit(t, commented)
	if err := e.Add(Server{ID: "bad", Command: "x", Args: []string{"--token", "{{secrets.t}}"}}, ""); err != nil {
		t.Fatal(err)
	}
	_, err := e.Write()
	if ps := Problems(err); len(ps) != 1 || ps[0].Field != "mcp_servers[2].args[1]" || ps[0].Pos.Line != 29 {
		t.Fatalf("Write of an invalid server: %v", err)
	}
	if data, _ := os.ReadFile(e.File); string(data) != commented {
		t.Error("the file was written although the edit failed its check")
	}
}

// TestEditWrite: a backup of the previous text, the file's permissions
// kept, a symbolic link followed, a new file created 0600, and a file
// changed by someone else since it was read left alone.
func TestEditWrite(t *testing.T) {
	dir := t.TempDir()
	real := writeFile(t, filepath.Join(dir, "dotfiles"), "config.toml", commented)
	if err := os.Chmod(real, 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "config.toml")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	e, err := OpenEdit(link, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Add(Server{ID: "n", Command: "x"}, ""); err != nil {
		t.Fatal(err)
	}
	backup, err := e.Write()
	if err != nil {
		t.Fatal(err)
	}
	if backup != real+".bak" {
		t.Errorf("backup = %s, want %s", backup, real+".bak")
	}
	if b, _ := os.ReadFile(backup); string(b) != commented {
		t.Errorf("backup holds %q", b)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(real); !strings.HasSuffix(string(b), "id = \"n\"\ncommand = \"x\"\n") {
		t.Errorf("file = %q", b)
	}

	// Someone else changes the file between read and write.
	e2, err := OpenEdit(real, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := e2.Add(Server{ID: "m", Command: "x"}, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("# edited by hand\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := e2.Write(); err == nil || !strings.Contains(err.Error(), "changed since it was read") {
		t.Errorf("Write over a changed file: %v", err)
	}
	if b, _ := os.ReadFile(real); string(b) != "# edited by hand\n" {
		t.Errorf("the changed file was overwritten: %q", b)
	}

	// A new file in a new folder.
	fresh := filepath.Join(dir, "new", "sub", "config.toml")
	e3, err := OpenEdit(fresh, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := e3.Add(Server{ID: "a", Command: "x"}, ""); err != nil {
		t.Fatal(err)
	}
	if backup, err := e3.Write(); err != nil || backup != "" {
		t.Fatalf("Write(new) = %q, %v", backup, err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode = %v, want 0600", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(filepath.Dir(fresh)); fi.Mode().Perm() != 0o700 {
		t.Errorf("new folder mode = %v, want 0700", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(fresh); string(b) != "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\n" {
		t.Errorf("new file = %q", b)
	}
}
