package toolsearch

import (
	"slices"
	"testing"
)

func TestWords(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"getIssueComments", []string{"get", "issu", "comment"}},
		{"list_pull_requests", []string{"list", "pull", "request"}},
		{"HTTPServer.start-now", []string{"http", "serv", "start", "now"}},
		{"Creating the repositories", []string{"creat", "repository"}},
		{"created", []string{"creat"}},
		{"running queries", []string{"run", "query"}},
	} {
		if got := words(c.in); !slices.Equal(got, c.want) {
			t.Errorf("words(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
