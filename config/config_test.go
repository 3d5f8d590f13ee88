package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// writeFile writes content to dir/name and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// problemStrings returns the Problems in err as strings, with dir/ cut from
// file names, and checks that err holds nothing but Problems.
func problemStrings(t *testing.T, err error, dir string) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	ps := Problems(err)
	if u, ok := err.(interface{ Unwrap() []error }); !ok || len(u.Unwrap()) != len(ps) {
		t.Errorf("error %v is not errors.Join of %d Problems", err, len(ps))
	}
	var out []string
	for _, p := range ps {
		out = append(out, strings.ReplaceAll(p.Error(), dir+string(filepath.Separator), ""))
	}
	return out
}

// loadString loads content as a file called name (in a fresh directory).
func loadString(t *testing.T, name, content string) (*Config, []string) {
	t.Helper()
	dir := t.TempDir()
	c, err := LoadFile(writeFile(t, dir, name, content))
	if c == nil {
		t.Fatalf("LoadFile(%q) returned a nil Config", name)
	}
	return c, problemStrings(t, err, dir)
}

// TestLoadFileProblems has one case per problem a TOML file can have; each
// asserts the complete "file:line: field: msg" strings.
func TestLoadFileProblems(t *testing.T) {
	const f = "switchboard.toml"
	tests := []struct {
		name string
		toml string
		want []string
	}{
		{
			name: "valid",
			toml: `
tool_name_format = "{server}__{tool}"
[[mcp_servers]]
id = "everything"
description = "the reference server"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-everything"]
env = { API_KEY = "{{secrets.everything_key}}", HOME_DIR = "{{env.HOME}}/x", PLAIN = "v" }
cwd = "/tmp"
tools_allowlist = ["echo", "add"]
timeout = "90s"
connect_timeout = "10s"
optional = true
progress_resets_timeout = true
roots = ["file:///home/me/project"]

[[mcp_servers]]
id = "remote"
url = "https://mcp.example.com/mcp"
headers = { Authorization = "Bearer {{secrets.tok}}" }
`,
		},
		{
			name: "syntax error",
			toml: "[[mcp_servers]]\nid = \"x\n",
			want: []string{f + ":2: basic strings cannot have new lines"},
		},
		{
			name: "key defined twice",
			toml: "[[mcp_servers]]\nid = \"a\"\nid = \"b\"\n",
			want: []string{f + ":3: key id is already defined"},
		},
		{
			name: "unknown top-level key with suggestion",
			toml: "tool_name_fromat = \"{tool}\"\n",
			want: []string{f + `:1: tool_name_fromat: unknown key "tool_name_fromat"; did you mean tool_name_format?`},
		},
		{
			name: "unknown top-level table",
			toml: "[logging]\nlevel = \"debug\"\n",
			want: []string{f + `:1: logging: unknown key "logging"`},
		},
		{
			name: "unknown server key with suggestion",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\ntool_allowlist = [\"echo\"]\n",
			want: []string{f + `:4: mcp_servers[0].tool_allowlist: unknown key "tool_allowlist"; did you mean tools_allowlist?`},
		},
		{
			name: "unknown server key without suggestion",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\ncolour = \"red\"\n",
			want: []string{f + `:4: mcp_servers[0].colour: unknown key "colour"`},
		},
		{
			name: "unknown key in second server, index as in the file",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\n\n[[mcp_servers]]\nid = \"b\"\ncommand = \"x\"\nargz = []\n",
			want: []string{f + `:8: mcp_servers[1].argz: unknown key "argz"; did you mean args?`},
		},
		{
			name: "mcp_servers as a single table",
			toml: "[mcp_servers]\nid = \"a\"\n",
			want: []string{f + ":1: mcp_servers: must be an array of tables, not a table (write [[mcp_servers]], with double brackets)"},
		},
		{
			name: "mcp_servers as a string",
			toml: "mcp_servers = \"a\"\n",
			want: []string{f + ":1: mcp_servers: must be an array of tables, not a string"},
		},
		{
			name: "tool_name_format wrong type",
			toml: "tool_name_format = 3\n",
			want: []string{f + ":1: tool_name_format: must be a string, not an integer"},
		},
		{
			name: "args a string",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\nargs = \"-y\"\n",
			want: []string{f + ":4: mcp_servers[0].args: must be an array of strings, not a string"},
		},
		{
			name: "args element wrong type, line of the element",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\nargs = [\n  \"-y\",\n  7,\n]\n",
			want: []string{f + ":6: mcp_servers[0].args[1]: must be a string, not an integer"},
		},
		{
			name: "id wrong type",
			toml: "[[mcp_servers]]\nid = 7\ncommand = \"x\"\n",
			want: []string{f + ":2: mcp_servers[0].id: must be a string, not an integer"},
		},
		{
			name: "timeout an integer",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\ntimeout = 90\n",
			want: []string{f + `:4: mcp_servers[0].timeout: must be a duration string such as "90s", not an integer`},
		},
		{
			name: "timeout without unit",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\ntimeout = \"90\"\n",
			want: []string{f + `:4: mcp_servers[0].timeout: invalid duration "90" (want a Go duration such as "90s" or "2m30s")`},
		},
		{
			name: "timeout zero",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\ntimeout = \"0s\"\n",
			want: []string{f + `:4: mcp_servers[0].timeout: must be positive, not "0s"`},
		},
		{
			name: "connect_timeout negative",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\nconnect_timeout = \"-5s\"\n",
			want: []string{f + `:4: mcp_servers[0].connect_timeout: must be positive, not "-5s"`},
		},
		{
			name: "boolean wrong type",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\noptional = \"yes\"\n",
			want: []string{f + ":4: mcp_servers[0].optional: must be a boolean, not a string"},
		},
		{
			name: "date for a string",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\ndescription = 2024-01-01\n",
			want: []string{f + ":4: mcp_servers[0].description: must be a string, not a date or time"},
		},
		{
			name: "env a string",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\nenv = \"A=1\"\n",
			want: []string{f + ":4: mcp_servers[0].env: must be a table of strings, not a string"},
		},
		{
			name: "env value wrong type in a sub-table",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\n[mcp_servers.env]\nOK = \"v\"\nPORT = 8080\n",
			want: []string{f + ":6: mcp_servers[0].env.PORT: must be a string, not an integer"},
		},
		{
			name: "missing id",
			toml: "[[mcp_servers]]\ncommand = \"x\"\n",
			want: []string{f + ":1: mcp_servers[0].id: missing; every server needs an id"},
		},
		{
			name: "invalid id",
			toml: "[[mcp_servers]]\nid = \"my server\"\ncommand = \"x\"\n",
			want: []string{f + `:2: mcp_servers[0].id: invalid id "my server": use 1 to 32 characters of A-Z a-z 0-9 _ -`},
		},
		{
			name: "id too long",
			toml: "[[mcp_servers]]\nid = \"" + strings.Repeat("a", 33) + "\"\ncommand = \"x\"\n",
			want: []string{f + `:2: mcp_servers[0].id: invalid id "` + strings.Repeat("a", 33) + `": use 1 to 32 characters of A-Z a-z 0-9 _ -`},
		},
		{
			name: "duplicate id in one file",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\n[[mcp_servers]]\nid = \"a\"\ncommand = \"y\"\n",
			want: []string{f + `:5: mcp_servers[1].id: duplicate id "a" (first declared as mcp_servers[0] on line 1)`},
		},
		{
			name: "unknown transport",
			toml: "[[mcp_servers]]\nid = \"a\"\ntransport = \"tcp\"\ncommand = \"x\"\n",
			want: []string{f + `:3: mcp_servers[0].transport: unknown transport "tcp" (want stdio, http (or streamable-http, streamableHttp), sse, websocket (or ws))`},
		},
		{
			name: "neither command nor url",
			toml: "[[mcp_servers]]\nid = \"a\"\n",
			want: []string{f + ":1: mcp_servers[0]: needs command (transport stdio) or url (transport http, sse or websocket)"},
		},
		{
			name: "stdio without command",
			toml: "[[mcp_servers]]\nid = \"a\"\ntransport = \"stdio\"\nargs = [\"x\"]\n",
			want: []string{f + ":1: mcp_servers[0].command: required for transport stdio"},
		},
		{
			name: "http without url",
			toml: "[[mcp_servers]]\nid = \"a\"\ntransport = \"http\"\n",
			want: []string{f + ":1: mcp_servers[0].url: required for transport http"},
		},
		{
			name: "network-only fields on stdio",
			toml: "[[mcp_servers]]\nid = \"a\"\ntransport = \"stdio\"\ncommand = \"x\"\nurl = \"https://example.com\"\nheaders = { A = \"b\" }\nallow_local_endpoint = true\n",
			want: []string{
				f + ":5: mcp_servers[0].url: only for network transports (http, sse, websocket), not stdio",
				f + ":6: mcp_servers[0].headers: only for network transports (http, sse, websocket), not stdio",
				f + ":7: mcp_servers[0].allow_local_endpoint: only for network transports (http, sse, websocket), not stdio",
			},
		},
		{
			name: "command and url without transport infer stdio",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\nurl = \"https://example.com\"\n",
			want: []string{f + ":4: mcp_servers[0].url: only for network transports (http, sse, websocket), not stdio"},
		},
		{
			name: "stdio-only fields on http",
			toml: "[[mcp_servers]]\nid = \"a\"\ntransport = \"sse\"\nurl = \"https://example.com/sse\"\ncommand = \"x\"\nargs = []\nenv = {}\ncwd = \"/\"\n",
			want: []string{
				f + ":5: mcp_servers[0].command: only for transport stdio, not sse",
				f + ":6: mcp_servers[0].args: only for transport stdio, not sse",
				f + ":7: mcp_servers[0].env: only for transport stdio, not sse",
				f + ":8: mcp_servers[0].cwd: only for transport stdio, not sse",
			},
		},
		{
			name: "placeholders where they are not resolved",
			toml: `[[mcp_servers]]
id = "a"
description = "{{secrets.d}}"
command = "{{env.CMD}}"
args = ["--token", "{{secrets.tok}}"]
cwd = "{{env.HOME}}"
env = { "{{env.K}}" = "v" }
tools_allowlist = ["{{env.T}}"]
roots = ["{{env.ROOT}}"]
[[mcp_servers]]
id = "b"
url = "https://{{env.HOST}}/mcp"
headers = { "{{env.H}}" = "v" }
[[mcp_servers]]
id = "{{env.ID}}"
transport = "{{env.T}}"
`,
			want: []string{
				f + ":3: mcp_servers[0].description: placeholders are only allowed in env and headers values",
				f + ":4: mcp_servers[0].command: placeholders are only allowed in env and headers values",
				f + ":5: mcp_servers[0].args[1]: placeholders are only allowed in env and headers values; argv is readable by every user on this machine, pass secrets through env",
				f + ":6: mcp_servers[0].cwd: placeholders are only allowed in env and headers values",
				f + `:7: mcp_servers[0].env."{{env.K}}": placeholders are only allowed in env and headers values, not in names`,
				f + ":8: mcp_servers[0].tools_allowlist[0]: placeholders are only allowed in env and headers values",
				f + ":9: mcp_servers[0].roots[0]: placeholders are only allowed in env and headers values",
				f + ":12: mcp_servers[1].url: placeholders are only allowed in env and headers values",
				f + `:13: mcp_servers[1].headers."{{env.H}}": placeholders are only allowed in env and headers values, not in names`,
				f + ":15: mcp_servers[2].id: placeholders are only allowed in env and headers values",
				f + ":16: mcp_servers[2].transport: placeholders are only allowed in env and headers values",
			},
		},
		{
			name: "placeholder in tool_name_format",
			toml: "tool_name_format = \"{{env.X}}_{tool}\"\n",
			want: []string{f + ":1: tool_name_format: placeholders are not allowed here; use {server} and {tool}"},
		},
		{
			name: "invalid env names",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\n[mcp_servers.env]\n1ABC = \"v\"\n\"A-B\" = \"v\"\n",
			want: []string{
				f + `:5: mcp_servers[0].env.1ABC: invalid variable name: use A-Z a-z 0-9 _, not starting with a digit`,
				f + `:6: mcp_servers[0].env.A-B: invalid variable name: use A-Z a-z 0-9 _, not starting with a digit`,
			},
		},
		{
			name: "invalid header name and value",
			toml: "[[mcp_servers]]\nid = \"a\"\nurl = \"https://example.com\"\n[mcp_servers.headers]\n\"X Bad\" = \"v\"\nX-Ok = \"a\\r\\nInjected: yes\"\n",
			want: []string{
				f + `:5: mcp_servers[0].headers."X Bad": invalid header name: must be an HTTP token (letters, digits and !#$%&'*+-.^_` + "`" + `|~)`,
				f + `:6: mcp_servers[0].headers.X-Ok: value must not contain CR, LF or NUL`,
			},
		},
		{
			name: "tool_name_format without {tool}",
			toml: "tool_name_format = \"mcp_{server}\"\n",
			want: []string{f + ":1: tool_name_format: must contain {tool}"},
		},
		{
			name: "tool_name_format with another field",
			toml: "tool_name_format = \"{host}_{tool}\"\n",
			want: []string{f + ":1: tool_name_format: unknown {host}; only {server} and {tool} are replaced"},
		},
		{
			name: "tool_name_format unterminated",
			toml: "tool_name_format = \"{tool\"\n",
			want: []string{f + ":1: tool_name_format: unterminated { at byte 0"},
		},
		{
			name: "tools_allowlist empty and duplicate entries",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\ntools_allowlist = [\"echo\", \"\", \"echo\"]\n",
			want: []string{
				f + `:4: mcp_servers[0].tools_allowlist[1]: empty tool name`,
				f + `:4: mcp_servers[0].tools_allowlist[2]: duplicate "echo" (also tools_allowlist[0])`,
			},
		},
		{
			name: "roots not file URIs",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\nroots = [\n  \"/home/me\",\n  \"https://example.com/x\",\n  \"file://server/share\",\n  \"file:relative\",\n]\n",
			want: []string{
				f + `:5: mcp_servers[0].roots[0]: must be a file:// URI, not "/home/me"`,
				f + `:6: mcp_servers[0].roots[1]: must be a file:// URI, not "https://example.com/x"`,
				f + `:7: mcp_servers[0].roots[2]: must be a local file:// URI, not one on host "server"`,
				f + `:8: mcp_servers[0].roots[3]: must be an absolute file:// URI such as file:///home/me/project, not "file:relative"`,
			},
		},
		{
			name: "ws URL with transport http",
			toml: "[[mcp_servers]]\nid = \"a\"\ntransport = \"http\"\nurl = \"wss://example.com/mcp\"\n",
			want: []string{f + ":4: mcp_servers[0].url: a wss:// URL needs transport websocket, not http"},
		},
		{
			name: "http URL with transport websocket",
			toml: "[[mcp_servers]]\nid = \"a\"\ntransport = \"websocket\"\nurl = \"https://example.com/mcp\"\n",
			want: []string{f + ":4: mcp_servers[0].url: transport websocket needs a ws:// or wss:// URL, not https://"},
		},
		{
			name: "url: plain http to a remote host",
			toml: "[[mcp_servers]]\nid = \"a\"\nurl = \"http://mcp.example.com/mcp\"\n",
			want: []string{f + ":3: mcp_servers[0].url: plain http to a remote host is not allowed; use https (or set allow_local_endpoint = true if mcp.example.com is on the local network)"},
		},
		{
			name: "url: plain ws to a remote IP",
			toml: "[[mcp_servers]]\nid = \"a\"\nurl = \"ws://1.1.1.1/mcp\"\n",
			want: []string{f + ":3: mcp_servers[0].url: plain ws to a remote host is not allowed; use wss"},
		},
		{
			name: "url: credentials",
			toml: "[[mcp_servers]]\nid = \"a\"\nurl = \"https://user:hunter2@mcp.example.com/mcp\"\n",
			want: []string{f + ":3: mcp_servers[0].url: credentials in the URL are not allowed; use headers with a {{secrets.NAME}} placeholder"},
		},
		{
			name: "url: ftp scheme",
			toml: "[[mcp_servers]]\nid = \"a\"\ntransport = \"http\"\nurl = \"ftp://mcp.example.com/mcp\"\n",
			want: []string{f + `:4: mcp_servers[0].url: scheme "ftp" is not allowed; want https, wss, http or ws`},
		},
		{
			name: "url: no scheme",
			toml: "[[mcp_servers]]\nid = \"a\"\nurl = \"mcp.example.com/mcp\"\n",
			want: []string{f + ":3: mcp_servers[0].url: missing scheme; want https://, wss://, http:// or ws://"},
		},
		{
			name: "url: loopback without allow_local_endpoint",
			toml: "[[mcp_servers]]\nid = \"a\"\nurl = \"http://127.0.0.1:8080/mcp\"\n",
			want: []string{f + ":3: mcp_servers[0].url: 127.0.0.1 is a loopback address (RFC 1122); set allow_local_endpoint = true to allow this server to reach it"},
		},
		{
			name: "url: localhost without allow_local_endpoint",
			toml: "[[mcp_servers]]\nid = \"a\"\nurl = \"http://localhost:8080/mcp\"\n",
			want: []string{f + ":3: mcp_servers[0].url: localhost is a loopback name; set allow_local_endpoint = true to allow this server to reach it"},
		},
		{
			name: "url: private address without allow_local_endpoint",
			toml: "[[mcp_servers]]\nid = \"a\"\nurl = \"https://10.1.2.3/mcp\"\n",
			want: []string{f + ":3: mcp_servers[0].url: 10.1.2.3 is a private address (RFC 1918); set allow_local_endpoint = true to allow this server to reach it"},
		},
		{
			name: "url: local addresses with allow_local_endpoint",
			toml: "[[mcp_servers]]\nid = \"a\"\nurl = \"http://127.0.0.1:8080/mcp\"\nallow_local_endpoint = true\n" +
				"[[mcp_servers]]\nid = \"b\"\nurl = \"http://10.1.2.3/mcp\"\nallow_local_endpoint = true\n" +
				"[[mcp_servers]]\nid = \"c\"\nurl = \"ws://localhost:9000/\"\nallow_local_endpoint = true\n",
		},
		{
			name: "url: cloud metadata even with allow_local_endpoint",
			toml: "[[mcp_servers]]\nid = \"a\"\nurl = \"http://169.254.169.254/latest\"\nallow_local_endpoint = true\n",
			want: []string{f + ":3: mcp_servers[0].url: 169.254.169.254 is a cloud metadata endpoint; it is refused even with allow_local_endpoint"},
		},
		{
			name: "bad placeholders in env and headers values",
			toml: `[[mcp_servers]]
id = "a"
command = "x"
env = { A = "{{secret.gh}}", B = "{{env.}}", C = "pre {{secrets.x" }
[[mcp_servers]]
id = "b"
url = "https://example.com"
headers = { Authorization = "Bearer {{vault.tok}}" }
`,
			want: []string{
				f + `:4: mcp_servers[0].env.A: "{{secret.gh}}" at offset 0: unknown kind "secret"; did you mean {{secrets.gh}}?`,
				f + `:4: mcp_servers[0].env.B: "{{env.}}" at offset 0: empty name`,
				f + `:4: mcp_servers[0].env.C: "{{secrets.x" at offset 4: unterminated placeholder; want {{env.NAME}} or {{secrets.NAME}}`,
				f + `:8: mcp_servers[1].headers.Authorization: "{{vault.tok}}" at offset 7: unknown kind "vault"; want env or secrets`,
			},
		},
		{
			name: "dotted keys get their own line",
			toml: "[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\nenv.OK = \"v\"\nenv.BAD = 1\n",
			want: []string{f + ":5: mcp_servers[0].env.BAD: must be a string, not an integer"},
		},
		{
			name: "inline array of tables",
			toml: "mcp_servers = [\n  { id = \"a\", command = \"x\" },\n  { id = \"b\", command = \"x\",\n    timeout = 5 },\n]\n",
			want: []string{f + `:4: mcp_servers[1].timeout: must be a duration string such as "90s", not an integer`},
		},
		{
			name: "server not a table",
			toml: "mcp_servers = [\"a\"]\n",
			want: []string{f + ":1: mcp_servers[0]: must be a table, not a string"},
		},
		{
			name: "several problems in one server are all reported",
			toml: "[[mcp_servers]]\nid = \"a b\"\ncommand = 1\ntimeout = 2\nbogus = 3\n",
			want: []string{
				f + `:2: mcp_servers[0].id: invalid id "a b": use 1 to 32 characters of A-Z a-z 0-9 _ -`,
				f + ":3: mcp_servers[0].command: must be a string, not an integer",
				f + `:4: mcp_servers[0].timeout: must be a duration string such as "90s", not an integer`,
				f + `:5: mcp_servers[0].bogus: unknown key "bogus"`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := loadString(t, f, tt.toml)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("LoadFile(%q) problems mismatch (-want +got):\n%s", tt.toml, diff)
			}
		})
	}
}

func TestProblemError(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{Pos: Position{File: "switchboard.toml", Line: 12}, Field: "mcp_servers[2].url", Msg: "m"}, "switchboard.toml:12: mcp_servers[2].url: m"},
		{Problem{Pos: Position{File: "switchboard.toml"}, Field: "mcp_servers[2].url", Msg: "m"}, "switchboard.toml: mcp_servers[2].url: m"},
		{Problem{Pos: Position{File: "f.json", Line: 3}, Msg: "m"}, "f.json:3: m"},
		{Problem{Field: "tool_name_format", Msg: "m"}, "tool_name_format: m"},
		{Problem{Pos: Position{Line: 4}, Msg: "m"}, "line 4: m"},
		{Problem{Msg: "m"}, "m"},
	}
	for _, tt := range tests {
		if got := tt.p.Error(); got != tt.want {
			t.Errorf("%#v.Error() = %q, want %q", tt.p, got, tt.want)
		}
	}
}

func TestProblems(t *testing.T) {
	p1, p2 := &Problem{Msg: "a"}, &Problem{Msg: "b"}
	err := errors.Join(p1, errors.Join(p2, errors.New("other")))
	if diff := cmp.Diff([]*Problem{p1, p2}, Problems(err)); diff != "" {
		t.Errorf("Problems(%v) mismatch (-want +got):\n%s", err, diff)
	}
	if got := Problems(nil); got != nil {
		t.Errorf("Problems(nil) = %v, want nil", got)
	}
}

func TestSuggest(t *testing.T) {
	tests := []struct{ key, want string }{
		{"tool_allowlist", "tools_allowlist"},
		{"tools_allow_list", "tools_allowlist"},
		{"Command", "command"},
		{"arg", "args"},
		{"comand", "command"},
		{"connect_timout", "connect_timeout"},
		{"colour", ""},
		{"x", ""},
	}
	for _, tt := range tests {
		if got := decode.Suggest(tt.key, serverFields.Keys(decode.TOML)); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}
