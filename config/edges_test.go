package config

import (
	"slices"
	"strings"
	"testing"
)

// TestURLHostLength: a server's URL whose host is longer than DNS allows
// (294 characters, or a label of 64) is refused at its url field (issue
// 24 §2: both were accepted).
func TestURLHostLength(t *testing.T) {
	host := strings.Repeat(strings.Repeat("a", 48)+".", 5) + strings.Repeat("c", 49) // 294 characters
	label := strings.Repeat("b", 64) + ".example.com"
	_, got := loadString(t, "c.toml", `[[mcp_servers]]
id = "long"
url = "https://`+host+`/mcp"

[[mcp_servers]]
id = "label"
url = "https://`+label+`/mcp"
`)
	want := []string{
		"c.toml:3: mcp_servers[0].url: a host name is at most 253 characters, and this one has 294",
		"c.toml:7: mcp_servers[1].url: a label of a host name (between dots) is at most 63 characters, and bbbbbbbbbbbbbbbb… has 64",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems %q\nwant %q", got, want)
	}
}

// TestIDsDifferOnlyByCase: two servers whose ids differ only by case are
// refused, in one file or across the layered files, naming the other
// (issue 24 §2: GitHub and github were both accepted; their tool names,
// store rows and the folders named after them collide where case does
// not count).
func TestIDsDifferOnlyByCase(t *testing.T) {
	_, got := loadString(t, "c.toml", `[[mcp_servers]]
id = "github"
command = "x"

[[mcp_servers]]
id = "GitHub"
command = "y"
`)
	want := []string{`c.toml:6: mcp_servers[1].id: "GitHub" differs only by case from "github" (mcp_servers[0] in c.toml:1): tool names and other names made of ids would collide; rename one`}
	if !slices.Equal(got, want) {
		t.Errorf("in one file: %q\nwant %q", got, want)
	}

	dir := t.TempDir()
	user := writeFile(t, dir, "user/config.toml", "[[mcp_servers]]\nid = \"github\"\ncommand = \"x\"\n")
	work := writeFile(t, dir, "work/switchboard.toml", "[[mcp_servers]]\nid = \"GITHUB\"\ncommand = \"y\"\n")
	_, err := Load(&LoadOptions{Dir: dir + "/work", UserConfigDir: dir + "/user", Getenv: getenv(nil)})
	got = problemStrings(t, err, dir)
	want = []string{`work/switchboard.toml:2: mcp_servers[0].id: "GITHUB" differs only by case from "github" (mcp_servers[0] in user/config.toml:1): tool names and other names made of ids would collide; rename one`}
	if !slices.Equal(got, want) {
		t.Errorf("across files %s and %s: %q\nwant %q", user, work, got, want)
	}
}
