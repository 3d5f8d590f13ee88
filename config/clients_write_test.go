package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type testEntry struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
}

// TestEditClientEntry: an entry set in another client's file changes that
// entry alone, the rest of the text (comments, trailing commas, keys
// Switchboard does not know, spacing) byte for byte, wherever the
// container is and whether it exists.
func TestEditClientEntry(t *testing.T) {
	entry := testEntry{URL: "http://127.0.0.1:7300/e/code/mcp"}
	for _, tc := range []struct {
		name, before, want string
		container          []string
	}{{
		name:      "a new file",
		container: []string{"mcp", "servers"},
		want:      "{\n  \"mcp\": {\n    \"servers\": {\n      \"sb\": {\n        \"url\": \"http://127.0.0.1:7300/e/code/mcp\"\n      }\n    }\n  }\n}\n",
	}, {
		name:      "appended after the others, comments and a trailing comma kept",
		container: []string{"servers"},
		before:    "{\n  // mine\n  \"servers\": {\n    \"a\": {\"command\": \"x\"}, /* b */\n  },\n}\n",
		want:      "{\n  // mine\n  \"servers\": {\n    \"a\": {\"command\": \"x\"},\n    \"sb\": {\n      \"url\": \"http://127.0.0.1:7300/e/code/mcp\"\n    }, /* b */\n  },\n}\n",
	}, {
		name:      "replaced where it stands",
		container: []string{"mcpServers"},
		before:    "{\"numStartups\": 7, \"mcpServers\": {\"sb\": {\"url\": \"http://old\"}, \"z\": {}}}",
		want:      "{\"numStartups\": 7, \"mcpServers\": {\"sb\": {\n  \"url\": \"http://127.0.0.1:7300/e/code/mcp\"\n}, \"z\": {}}}",
	}, {
		name:      "into an empty container",
		container: []string{"mcpServers"},
		before:    "{\n  \"mcpServers\": {}\n}\n",
		want:      "{\n  \"mcpServers\": {\n    \"sb\": {\n      \"url\": \"http://127.0.0.1:7300/e/code/mcp\"\n    }\n  }\n}\n",
	}, {
		name:      "the container created beside other keys",
		container: []string{"mcpServers"},
		before:    "{\n\t\"numStartups\": 7\n}\n",
		want:      "{\n\t\"numStartups\": 7,\n\t\"mcpServers\": {\n\t  \"sb\": {\n\t    \"url\": \"http://127.0.0.1:7300/e/code/mcp\"\n\t  }\n\t}\n}\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "dir", "mcp.json")
			if tc.before != "" {
				writeFile(t, filepath.Dir(file), "mcp.json", tc.before)
			}
			c, err := EditClientEntry(ClientFile{Path: file, Containers: [][]string{tc.container}}, "sb", entry)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(c.Content()); got != tc.want {
				t.Errorf("text (-want +got):\n%s", cmp.Diff(tc.want, got))
			}
			if _, err := c.Write(); err != nil {
				t.Fatal(err)
			}
			// What import reads back is the entry.
			es, err := ReadClientFile(ClientFile{Path: file, Containers: [][]string{tc.container}}, "")
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, e := range es {
				if e.Name == "sb" {
					found = e.Server.URL == entry.URL
				}
			}
			if !found {
				t.Errorf("entry sb not read back: %+v", es)
			}
			if st, _ := os.Stat(file); tc.before == "" && st.Mode().Perm() != 0o600 {
				t.Errorf("new file mode %v, want 0600", st.Mode().Perm())
			}
		})
	}
}

// TestEditClientEntryRefuses: a file that is not JSON, or whose container
// is not an object, is refused naming the file, line and field; nothing
// is written.
func TestEditClientEntryRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ before, want string }{
		{"{\n  \"mcpServers\": {\"a\" 1}\n}", "mcp.json:2: not valid JSON"},
		{"{\n  \"mcpServers\": [\n]}", "mcp.json:2: mcpServers: must be an object"},
		{"[]", "mcp.json: the top level must be an object"},
	} {
		file := writeFile(t, dir, "mcp.json", tc.before)
		_, err := EditClientEntry(ClientFile{Path: file, Containers: [][]string{{"mcpServers"}}}, "sb", testEntry{URL: "x"})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("EditClientEntry(%q) = %v, want %q", tc.before, err, tc.want)
		}
		if b, _ := os.ReadFile(file); string(b) != tc.before {
			t.Errorf("file changed: %s", b)
		}
	}
}

// TestClientEditAddInput: VS Code's input variable is added to the
// top-level inputs array, created when missing; one of the same id is
// left alone; the rest of the text is kept.
func TestClientEditAddInput(t *testing.T) {
	type input struct {
		Type     string `json:"type"`
		ID       string `json:"id"`
		Password bool   `json:"password"`
	}
	in := input{Type: "promptString", ID: "tok", Password: true}
	for _, tc := range []struct{ name, before, want string }{{
		name:   "no inputs",
		before: "{\n  \"servers\": {}\n}\n",
		want:   "{\n  \"servers\": {\n    \"sb\": {\n      \"url\": \"u\"\n    }\n  },\n  \"inputs\": [\n    {\n      \"type\": \"promptString\",\n      \"id\": \"tok\",\n      \"password\": true\n    }\n  ]\n}\n",
	}, {
		name:   "an empty array",
		before: "{\"inputs\": [], \"servers\": {\"sb\": {\"url\": \"u\"}}}",
		want:   "{\"inputs\": [\n  {\n    \"type\": \"promptString\",\n    \"id\": \"tok\",\n    \"password\": true\n  }\n], \"servers\": {\"sb\": {\n  \"url\": \"u\"\n}}}",
	}, {
		name:   "after the others",
		before: "{\n  \"inputs\": [\n    {\"id\": \"other\"}, // mine\n  ],\n  \"servers\": {\"sb\": {\"url\": \"u\"}}\n}",
		want:   "{\n  \"inputs\": [\n    {\"id\": \"other\"},\n    {\n      \"type\": \"promptString\",\n      \"id\": \"tok\",\n      \"password\": true\n    }, // mine\n  ],\n  \"servers\": {\"sb\": {\n    \"url\": \"u\"\n  }}\n}",
	}, {
		name:   "already there",
		before: "{\"inputs\": [{\"id\": \"tok\", \"type\": \"promptString\"}], \"servers\": {\"sb\": {\n  \"url\": \"u\"\n}}}",
		want:   "{\"inputs\": [{\"id\": \"tok\", \"type\": \"promptString\"}], \"servers\": {\"sb\": {\n  \"url\": \"u\"\n}}}",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, t.TempDir(), "mcp.json", tc.before)
			c, err := EditClientEntry(ClientFile{Path: file, Containers: [][]string{{"servers"}}}, "sb", testEntry{URL: "u"})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.AddInput("tok", in); err != nil {
				t.Fatal(err)
			}
			if got := string(c.Content()); got != tc.want {
				t.Errorf("text (-want +got):\n%s", cmp.Diff(tc.want, got))
			}
			if _, err := c.Write(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestClientEditWriteChanged: a file the client changed after it was read
// is not overwritten (Claude Code rewrites ~/.claude.json as it runs).
func TestClientEditWriteChanged(t *testing.T) {
	file := writeFile(t, t.TempDir(), "mcp.json", `{"mcpServers": {}}`)
	c, err := EditClientEntry(ClientFile{Path: file, Containers: [][]string{{"mcpServers"}}}, "sb", testEntry{URL: "u"})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Dir(file), "mcp.json", `{"mcpServers": {}, "numStartups": 8}`)
	if _, err := c.Write(); err == nil || !strings.Contains(err.Error(), "changed since it was read") {
		t.Errorf("Write after a change = %v, want changed since it was read", err)
	}
	if b, _ := os.ReadFile(file); string(b) != `{"mcpServers": {}, "numStartups": 8}` {
		t.Errorf("file overwritten: %s", b)
	}
}
