//go:build !noui

package cli

import (
	"log/slog"

	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/registry"
	"github.com/switchboardmcp/switchboard/ui"
)

// mountUI mounts the web UI at /. Its pages are html/template, whose
// execution looks methods up by name: the linker then keeps every exported
// method of every type (about 9 MB of the release binary, docs/size.md). A
// build with -tags noui leaves the UI out.
func mountUI(d *daemon.Daemon, log *slog.Logger, regs []registry.Named) {
	ui.New(d, &ui.Options{Logger: log, Registries: regs, ContainerRuntime: containerRuntime()}).Mount(d)
}

// uiAt is the web UI's address on the listener at addr.
func uiAt(addr string) string { return "http://" + addr + "/" }
