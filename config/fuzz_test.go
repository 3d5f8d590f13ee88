package config

import "testing"

// FuzzDecode checks that no input makes decoding or validation panic, and
// that every problem names its file.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("[[mcp_servers]]\nid = \"a\"\ncommand = \"x\"\nenv = { K = \"{{secrets.k}}\" }\n[mcp_servers.headers]\nA = \"b\"\n"))
	f.Add([]byte("mcp_servers = [{ id = \"a\", url = \"http://127.0.0.1/\", args = [[1], {}] }]\n[x.y]\n[[x.y.z]]\n"))
	f.Add([]byte(`{"mcpServers": {"a b": {"command": "x", "args": [1, {}], "timeout": 1e400}}, "servers": []}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, r := range []*fileResult{decodeTOML("f.toml", data, ""), decodeJSON("f.json", data, "")} {
			c, err := build([]*fileResult{r})
			if c == nil {
				t.Fatal("build returned a nil Config")
			}
			for _, p := range Problems(err) {
				if p.Pos.File == "" {
					t.Errorf("problem %q names no file", p)
				}
			}
		}
	})
}
