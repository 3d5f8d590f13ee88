//go:build noui

package cli

import (
	"log/slog"

	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/registry"
)

// mountUI: a build with -tags noui serves no web UI (the MCP endpoint,
// the REST API and /metrics are unchanged), and is about 9 MB smaller.
func mountUI(d *daemon.Daemon, log *slog.Logger, regs []registry.Named) {}

// uiAt: no web UI.
func uiAt(addr string) string { return "" }
