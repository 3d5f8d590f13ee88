package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/secret"
)

func ExampleLoadFile() {
	dir, err := os.MkdirTemp("", "switchboard-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "switchboard.toml")
	err = os.WriteFile(path, []byte(`
[[mcp_servers]]
id      = "everything"
command = "npx"
args    = ["-y", "@modelcontextprotocol/server-everything"]
env     = { API_KEY = "{{secrets.everything_key}}" }

[[mcp_servers]]
id  = "remote"
url = "http://mcp.example.com/mcp"
`), 0o644)
	if err != nil {
		panic(err)
	}

	c, err := config.LoadFile(path)
	for _, p := range config.Problems(err) {
		p.Pos.File = filepath.Base(p.Pos.File)
		fmt.Println("problem:", p)
	}
	for _, s := range c.Servers {
		fmt.Println(s.ID, s.Transport, s.Timeout)
	}
	// Output:
	// problem: switchboard.toml:10: mcp_servers[1].url: plain http to a remote host is not allowed; use https (or set allow_local_endpoint = true if mcp.example.com is on the local network)
	// everything stdio 1m0s
	// remote http 1m0s
}

func ExampleServer_Resolve() {
	s := config.Server{
		ID:      "github",
		Command: "github-mcp-server",
		Env:     map[string]string{"GITHUB_TOKEN": "{{secrets.github}}"},
	}
	// A stand-in for the process environment.
	env := map[string]string{"SWITCHBOARD_SECRET_GITHUB": "ghp_example"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	red := secret.NewRedactor()
	resolved, err := s.Resolve(lookup, secret.EnvStore{LookupEnv: lookup}, red)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(resolved.Env["GITHUB_TOKEN"]), s.Env["GITHUB_TOKEN"])
	fmt.Println(red.Redact("token=" + resolved.Env["GITHUB_TOKEN"]))

	delete(env, "SWITCHBOARD_SECRET_GITHUB")
	_, err = s.Resolve(lookup, secret.EnvStore{LookupEnv: lookup}, red)
	fmt.Println(err)
	// Output:
	// 11 {{secrets.github}}
	// token=[REDACTED]
	// server "github": env.GITHUB_TOKEN: {{secrets.github}} is not set (set SWITCHBOARD_SECRET_GITHUB)
}

func ExampleServerTOML() {
	s := config.Server{
		ID:      "github",
		Command: "npx",
		Args:    []string{"-y", "@modelcontextprotocol/server-github"},
		Env:     map[string]string{"GITHUB_TOKEN": "{{secrets.github_token}}"},
		Timeout: 90 * time.Second,
	}
	fmt.Print(string(config.ServerTOML(s)))
	// Output:
	// [[mcp_servers]]
	// id = "github"
	// command = "npx"
	// args = ["-y", "@modelcontextprotocol/server-github"]
	// env = { GITHUB_TOKEN = "{{secrets.github_token}}" }
	// timeout = "90s"
}
