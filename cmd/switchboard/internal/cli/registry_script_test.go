package cli_test

import (
	"encoding/json"
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/switchboardmcp/switchboard/registry/registrytest"
)

// registryKey keys a script's fake registry in its testscript values.
type registryKey struct{}

type registryHolder struct{ r *registrytest.Registry }

// cmdFakeRegistry starts a fake MCP registry (registrytest) serving the
// recorded fixture registry/testdata/registry.json for the rest of the
// script, and sets REGISTRY_URL.
func cmdFakeRegistry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: fakeregistry")
	}
	recs, err := registrytest.Load(filepath.Join("..", "..", "..", "..", "registry", "testdata", "registry.json"))
	ts.Check(err)
	r := registrytest.New(recs)
	ts.Defer(r.Close)
	ts.Setenv("REGISTRY_URL", r.URL)
	ts.Value(registryKey{}).(*registryHolder).r = r
}

// cmdPublish publishes FILE (a server.json) to the script's fake registry
// as its server's latest version.
func cmdPublish(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: publish FILE")
	}
	r := ts.Value(registryKey{}).(*registryHolder).r
	if r == nil {
		ts.Fatalf("publish: no fakeregistry")
	}
	ts.Check(r.Publish(json.RawMessage(ts.ReadFile(args[0]))))
}
