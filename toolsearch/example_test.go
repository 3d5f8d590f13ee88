package toolsearch_test

import (
	"fmt"

	"github.com/switchboardmcp/switchboard/toolsearch"
)

func Example() {
	ix := toolsearch.New([]toolsearch.Doc{
		{Name: "github_create_issue", Description: "Open a new issue in a repository."},
		{Name: "github_merge_pull_request", Description: "Merge a pull request."},
		{Name: "slack_post_message", Description: "Send a message to a channel."},
	})
	for _, h := range ix.Search("merge my PR", 2) {
		fmt.Println(h.Doc.Name)
	}
	// Output:
	// github_merge_pull_request
}
