// Package toolfixture is a catalog of 500 realistic tools — ten servers
// (github, slack, jira, postgres, filesystem, kubernetes, stripe,
// calendar, gmail, notion) of 50 tools each, with titles, descriptions and
// input schemas — and a labelled set of queries over it (a request as a
// person would word it, and the one tool that answers it). The tools are
// data (servers/*.json); the testserver serves one server's with
// -tools-file. Search mode's recall, token and latency figures are
// measured on it (docs/performance.md).
package toolfixture

import (
	"embed"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

//go:embed servers/*.json queries.json
var files embed.FS

// A Server is one server of the fixture.
type Server struct {
	ID          string      `json:"id"`
	Description string      `json:"description"`
	Tools       []*mcp.Tool `json:"tools"`
}

// A Query is a labelled request: Tool ("server/tool") is the tool that
// answers Query.
type Query struct {
	Query string `json:"query"`
	Tool  string `json:"tool"`
}

// Servers are the fixture's servers, sorted by id.
func Servers() []Server {
	entries, err := files.ReadDir("servers")
	if err != nil {
		panic(err)
	}
	var out []Server
	for _, e := range entries {
		b, err := files.ReadFile("servers/" + e.Name())
		if err != nil {
			panic(err)
		}
		var s Server
		if err := json.Unmarshal(b, &s); err != nil {
			panic(fmt.Sprintf("toolfixture: %s: %v", e.Name(), err))
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Server) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Queries are the labelled queries.
func Queries() []Query {
	b, err := files.ReadFile("queries.json")
	if err != nil {
		panic(err)
	}
	var q []Query
	if err := json.Unmarshal(b, &q); err != nil {
		panic(fmt.Sprintf("toolfixture: queries.json: %v", err))
	}
	return q
}

// File is the path of server id's tools file, for testserver -tools-file.
func File(id string) string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "servers", id+".json")
}
