package switchboard_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLayering: arrows run down only (docs/design.md, "Packages"). The
// floor imports nothing of ours but the leaf helpers (which import nothing
// of ours themselves: checked below); config is data; the host knows no
// face and no LLM; faces never import each other or the CLI, not even
// directly where the daemon below them already does (what every face
// needs of the guard is in guard, below them all); only the binary
// imports the CLI.
func TestLayering(t *testing.T) {
	const mod = "github.com/switchboardmcp/switchboard/"
	forbidden := map[string][]string{
		"secret":   {"*"},
		"netguard": {"*"},
		"schema":   {"*"},
		"codemode": {"*"},
		// the sandbox runs what codemode describes, and knows nothing else.
		"codemode/sandbox": {"config", "host", "gateway", "daemon", "agent", "llm", "store", "transport", "schema", "workflow", "telemetry", "api", "ui", "oauth", "secret", "netguard", "guard", "toolsearch", "toolmode", "cmd/switchboard/internal/cli"},
		"transport":        {"*"},
		// guardrail reuses the floor's credential shapes (secret) and
		// guarded dialer (netguard), and knows no host, config or face.
		"guardrail":       {"config", "host", "gateway", "daemon", "agent", "llm", "store", "transport", "schema", "workflow", "telemetry", "api", "ui", "oauth", "guard", "toolsearch", "toolmode", "codemode", "cmd/switchboard/internal/cli"},
		"store":           {"*"}, // but toolpin (allowed, below)
		"guard":           {"*"},
		"toolsearch":      {"*"},
		"toolmode":        {"*"},
		"toolscan":        {"*"},
		"internal/decode": {"*"},
		"registry":        {"host", "gateway", "daemon", "agent", "llm", "store", "transport", "workflow", "api", "ui", "cmd/switchboard/internal/cli"},
		"config":          {"host", "gateway", "daemon", "agent", "llm", "store", "transport", "schema", "cmd/switchboard/internal/cli"},
		"llm":             {"host", "gateway", "daemon", "agent", "config", "store", "cmd/switchboard/internal/cli"},
		"host":            {"gateway", "daemon", "agent", "llm", "store", "telemetry", "cmd/switchboard/internal/cli"},
		"agent":           {"gateway", "daemon", "store", "cmd/switchboard/internal/cli"},
		"gateway":         {"daemon", "agent", "llm", "store", "telemetry", "cmd/switchboard/internal/cli"},
		"telemetry":       {"gateway", "daemon", "agent", "llm", "workflow", "cmd/switchboard/internal/cli", "api", "ui"},
		"daemon":          {"agent", "llm", "cmd/switchboard/internal/cli", "api", "ui"},
		// api reaches gateway only through daemon, whose server
		// operations it uses; it imports no face itself.
		"api": {"cmd/switchboard/internal/cli", "ui"},
		// ui likewise: a face over daemon and host, never over api.
		"ui": {"cmd/switchboard/internal/cli", "api"},
	}
	// allowed are exceptions to a "*": the floor's packages that another
	// of the floor may import. The store keeps pins in toolpin's form.
	allowed := map[string][]string{"store": {"toolpin"}}
	forbidden["toolpin"] = []string{"*"}
	// leaves may be imported by any package: they import nothing of ours.
	leaves := []string{"internal/flock", "internal/userfile", "internal/decode", "internal/strictjson", "internal/wire", "clientaddr"}
	for _, l := range leaves {
		forbidden[l] = []string{"*"}
	}
	// The faces, over the daemon: none imports another itself.
	faces := []string{"gateway", "api", "ui"}
	for _, f := range faces {
		out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, "./"+f).Output()
		if err != nil {
			t.Fatalf("go list ./%s: %v", f, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if ours, ok := strings.CutPrefix(dep, mod); ok && ours != f && slices.Contains(faces, ours) {
				t.Errorf("the face %s imports the face %s", f, ours)
			}
		}
	}
	for pkg, bad := range forbidden {
		out, err := exec.Command("go", "list", "-deps", "./"+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps ./%s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			ours, ok := strings.CutPrefix(dep, mod)
			if !ok || ours == pkg || slices.Contains(leaves, ours) || slices.Contains(allowed[pkg], ours) {
				continue
			}
			for _, b := range bad {
				if b == "*" || ours == b || strings.HasPrefix(ours, b+"/") {
					t.Errorf("%s imports %s (directly or not): it may not", pkg, ours)
				}
			}
		}
	}
}
