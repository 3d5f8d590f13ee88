package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/switchboardmcp/switchboard/store"
)

func Example() {
	dir, _ := os.MkdirTemp("", "store-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(dir, "switchboard.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	// A server added at run time: its config as JSON, secrets only as
	// placeholders.
	rec, _ := s.AddServer(ctx, store.ServerRecord{ID: "github", Enabled: true,
		Config: json.RawMessage(`{"url":"https://api.githubcopilot.com/mcp/","headers":{"Authorization":"Bearer {{secrets.gh}}"}}`)})
	fmt.Println(rec.ID, rec.Version)

	// An update names the version it read; a stale one is refused.
	_, err = s.UpdateServer(ctx, store.ServerRecord{ID: "github", Config: rec.Config}, rec.Version+1)
	fmt.Println(err != nil)
	// Output:
	// github 1
	// true
}
