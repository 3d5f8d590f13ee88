package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// everyEndpointField is an endpoint that sets every field of Endpoint but
// Source, with strings that need escaping in TOML and JSON.
func everyEndpointField() Endpoint {
	yes, no := true, false
	return Endpoint{
		Name:         "code-1",
		Path:         "/code/mcp",
		Servers:      []string{"github", "filesystem"},
		Tools:        []string{"github_*", "!github_delete_*", "filesystem_read_*"},
		Instructions: "Tools for \"this\" repo.\nSecond line \\ tab \t é",
		Workflows:    []string{"review"},
		Rename:       map[string]string{"read": "mcp_filesystem_read_text_file", "odd.name": "x"},
		Override: map[string]ToolOverride{
			"read":   {Title: "Read", Description: "Read a file of the repository", ReadOnlyHint: &yes, DestructiveHint: &no, IdempotentHint: &yes, OpenWorldHint: &no},
			"github": {Description: "only a description"},
		},
		AuthToken: "{{secrets.code_token}}",
		Scopes:    []string{"code", "read:org"},
		Mode:      ModeSearch,
	}
}

// TestEndpointTOMLEveryField: every field of Endpoint is written, and reads
// back as itself, in both forms of the endpoints file. A field added to
// Endpoint and not to the writer fails here.
func TestEndpointTOMLEveryField(t *testing.T) {
	ep := everyEndpointField()
	v := reflect.ValueOf(ep)
	for i := range v.NumField() {
		if name := v.Type().Field(i).Name; name != "Source" && v.Field(i).IsZero() {
			t.Fatalf("everyEndpointField leaves %s unset: set it, and write it in EndpointTOML", name)
		}
	}
	empty := Endpoint{Name: "none", Servers: []string{}} // [] publishes nothing; nil, everything
	for _, form := range []struct {
		file string
		data []byte
	}{
		{"eps.toml", EndpointsTOML([]Endpoint{ep, empty})},
		{"eps.json", EndpointsJSON([]Endpoint{ep, empty})},
	} {
		got, err := ReadEndpoints(form.file, form.data)
		if err != nil {
			t.Fatalf("ReadEndpoints(%s): %v\n%s", form.file, err, form.data)
		}
		if len(got) != 2 || !EndpointEqual(got[0], ep) || !EndpointEqual(got[1], empty) {
			t.Errorf("%s does not read back (-want +got):\n%s\n%s", form.file, cmp.Diff([]Endpoint{ep, empty}, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Source" }, cmp.Ignore())), form.data)
		}
	}
}

func TestEndpointTOML(t *testing.T) {
	got := string(EndpointTOML(Endpoint{Name: "code", Servers: []string{"github"}, Tools: []string{"github_*"}, Rename: map[string]string{"read": "mcp_fs_read"}}))
	want := `[[endpoints]]
name = "code"
servers = ["github"]
tools = ["github_*"]

[endpoints.rename]
read = "mcp_fs_read"
`
	if got != want {
		t.Errorf("EndpointTOML:\n%s\nwant:\n%s", got, want)
	}
}

const endpointsFile = `# top of the file

[[mcp_servers]]
id = "github"   # keep me
command = "/bin/true"

# the code endpoint
[[endpoints]]
name = "code"
servers = ["github"]   # only github

[endpoints.rename]
read = "x"

# the docs endpoint
[[endpoints]]
name = "docs"

[gateway]
listen = "127.0.0.1:7300"  # the gateway
`

// TestEditEndpoints: adding, replacing and removing an endpoint keeps the
// rest of the file byte for byte, comments included; a replaced endpoint
// stays where it was, with its sub-tables replaced; a removed one goes with
// its sub-tables and the comment above it.
func TestEditEndpoints(t *testing.T) {
	file := writeFile(t, t.TempDir(), "config.toml", endpointsFile)
	ed, err := OpenEdit(file, "")
	if err != nil {
		t.Fatal(err)
	}
	if !ed.HasEndpoint("code") || !ed.HasEndpoint("docs") || ed.HasEndpoint("x") {
		t.Fatalf("endpoints read: %+v", ed.Endpoints())
	}
	if err := ed.AddEndpoint(Endpoint{Name: "code"}, ""); err == nil {
		t.Error("AddEndpoint of a name the file has: no error")
	}
	if err := ed.AddEndpoint(Endpoint{Name: "data", Tools: []string{"db_*"}}, "added"); err != nil {
		t.Fatal(err)
	}
	if err := ed.ReplaceEndpoint(Endpoint{Name: "code", Instructions: "new"}); err != nil {
		t.Fatal(err)
	}
	if err := ed.RemoveEndpoint("docs"); err != nil {
		t.Fatal(err)
	}
	if err := ed.Check(); err != nil {
		t.Fatal(err)
	}
	want := `# top of the file

[[mcp_servers]]
id = "github"   # keep me
command = "/bin/true"

# the code endpoint
[[endpoints]]
name = "code"
instructions = "new"

[gateway]
listen = "127.0.0.1:7300"  # the gateway

# added
[[endpoints]]
name = "data"
tools = ["db_*"]
`
	if got := string(ed.Content()); got != want {
		t.Errorf("edited file (-want +got):\n%s", cmp.Diff(want, got))
	}
	if _, err := ed.Write(); err != nil {
		t.Fatal(err)
	}
	c, err := LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Endpoints) != 2 || c.Endpoints[0].Name != "code" || c.Endpoints[1].Name != "data" || len(c.Servers) != 1 {
		t.Errorf("loaded: %+v", c.Endpoints)
	}
}

// TestReadEndpointsRefuses: a literal token, another table and a name
// twice are refused, each naming file, line and field.
func TestReadEndpointsRefuses(t *testing.T) {
	for _, tc := range []struct{ file, data, want string }{
		{"a.toml", "[[endpoints]]\nname = \"a\"\nauth_token = \"s3cr3t-value\"\n", "a.toml:3: endpoints[0].auth_token: a literal token is not allowed"},
		{"a.json", "{\"endpoints\": [\n{\"name\": \"a\",\n\"auth_token\": \"s3cr3t-value\"}]}", "a.json:3: endpoints[0].auth_token: a literal token is not allowed"},
		{"a.toml", "[[mcp_servers]]\nid = \"x\"\n", "a.toml:1: mcp_servers: an endpoints file holds endpoints only"},
		{"a.toml", "[[endpoints]]\nname = \"a\"\n[[endpoints]]\nname = \"a\"\n", `a.toml:4: endpoints[1].name: duplicate name "a"`},
		{"a.toml", "[[endpoints]]\nname = \"a\"\ntool = [\"x\"]\n", "a.toml:3: endpoints[0].tool: unknown key"},
		{"a.json", "{\"endpoints\": [}", "a.json:1: not valid JSON"},
	} {
		_, err := ReadEndpoints(tc.file, []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadEndpoints(%s, %q) = %v, want %q", tc.file, tc.data, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("the error quotes the token: %v", err)
		}
	}
}
