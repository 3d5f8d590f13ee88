package interop

import (
	"path/filepath"
)

// Pinned versions of the third-party stdio-to-HTTP gateways that
// gateway.BenchmarkCompare measures Switchboard against (issue 31).
const (
	// SupergatewayVersion pins supergateway (npm: supergateway).
	SupergatewayVersion = "4.0.0"
	// MCPProxyVersion pins punkpeye's mcp-proxy (npm: mcp-proxy).
	MCPProxyVersion = "6.7.19"
)

// NodeGateways returns the command lines of supergateway
// ([SupergatewayVersion]) and punkpeye's mcp-proxy ([MCPProxyVersion]),
// each [node, entry script], installed into the cache on first use.
// Append their arguments; run them with [Env]'s environment.
//
// Unlike the functions that take a testing.TB, it returns an error (no npm,
// no Node ≥ 22, a failed install) instead of failing: a benchmark that
// compares against these gateways leaves their rows out and says why.
// [InstallAll] does not install them: only benchmarks use them.
func NodeGateways(logf Logf) (supergateway, mcpProxy []string, err error) {
	node, err := nodePath(logf)
	if err != nil {
		return nil, nil, err
	}
	dir, err := nodeGatewaysDir(logf)
	if err != nil {
		return nil, nil, err
	}
	nm := filepath.Join(dir, "node_modules")
	return []string{node, filepath.Join(nm, "supergateway", "dist", "index.js")},
		[]string{node, filepath.Join(nm, "mcp-proxy", "dist", "bin", "mcp-proxy.mjs")}, nil
}

// NodeEnv is [Env] for callers without a testing.TB: PATH with the folder
// of node (from [NodeGateways]) first, HOME, and TMPDIR when set.
func NodeEnv(node string) []string { return minimalEnv(node) }

func nodeGatewaysDir(logf Logf) (string, error) {
	return installs.do("node-gateways", func() (string, error) {
		dir := filepath.Join(CacheDir(), "supergateway-"+SupergatewayVersion+"-mcp-proxy-"+MCPProxyVersion)
		specs := []string{"supergateway@" + SupergatewayVersion, "mcp-proxy@" + MCPProxyVersion}
		check := filepath.Join(dir, "node_modules", "mcp-proxy", "dist", "bin", "mcp-proxy.mjs")
		if err := npmInstall(logf, dir, specs, check, nil); err != nil {
			return "", err
		}
		return dir, nil
	})
}
