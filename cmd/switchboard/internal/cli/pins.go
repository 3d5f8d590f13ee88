package cli

// switchboard tools changes, tools approve, tools pins export|import: the
// pinned tool definitions (toolpin; a server's pin and scan = "hold").
// Each asks the running switchboard serve of this configuration when
// there is one (its REST API: the serve then offers an approved tool at
// once, and every replica with it), else reads and writes the state store
// directly (the next start offers what was approved), through the
// daemon's functions of the same names either way.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/strictjson"
	"github.com/switchboardmcp/switchboard/store"
	"github.com/switchboardmcp/switchboard/toolpin"
)

// pins is where a command reads and approves pinned definitions: a
// running serve (*serveClient) or the state store (storePins).
type pins interface {
	ToolChanges(ctx context.Context, server string) ([]daemon.ToolChange, error)
	ApproveTool(ctx context.Context, server, tool, digest string) (toolpin.Pin, error)
	ExportPins(ctx context.Context, server string) (toolpin.Export, error)
	ImportPins(ctx context.Context, e toolpin.Export) error
}

// storePins are the state store's pins, for a command with no serve.
type storePins struct{ st *store.Store }

func (s storePins) ToolChanges(ctx context.Context, server string) ([]daemon.ToolChange, error) {
	return daemon.ToolChanges(ctx, s.st, server)
}

func (s storePins) ApproveTool(ctx context.Context, server, tool, digest string) (toolpin.Pin, error) {
	return daemon.ApproveTool(ctx, s.st, server, tool, digest, "cli")
}

func (s storePins) ExportPins(ctx context.Context, server string) (toolpin.Export, error) {
	return daemon.ExportPins(ctx, s.st, server)
}

func (s storePins) ImportPins(ctx context.Context, e toolpin.Export) error {
	return daemon.ImportPins(ctx, s.st, e)
}

// openPins returns the pins of cfg's configuration: its running serve's,
// else its state store's; close releases a serve's connection.
func (e *env) openPins(ctx context.Context) (p pins, close func(), err error) {
	cfg, err := e.loadConfig()
	if err != nil {
		return nil, nil, err
	}
	c, err := e.dialServe(ctx, cfg)
	if err != nil {
		e.logger().Info("switchboard serve does not answer: using the state store directly", "err", err)
	}
	if c != nil {
		return c, func() { c.Close() }, nil
	}
	st := e.stateStore(cfg)
	if st == nil {
		return nil, nil, failed(fmt.Errorf("no state store, where pinned tool definitions are kept: %w", e.stateErr))
	}
	return storePins{st}, func() {}, nil
}

func (e *env) toolsChangesCommand() *cobra.Command {
	var server string
	cmd := &cobra.Command{
		Use:   "changes [--server ID]",
		Short: "List the tool definitions held until you approve them, with what changed",
		Long: `Lists the tool definitions Switchboard holds back until a person approves
them: a tool whose definition changed from its pin (a server's pin =
"first-use" or "approve"), a new tool of a server whose pin is "approve",
or a tool whose description the scanner flags under scan = "hold". Each is
shown with why it is held, since when, its digest, and the change from the
trusted definition line by line ("-" trusted, "+" held). A held tool is not
offered on any endpoint, and calls to it are refused naming the change.

Approve one with: switchboard tools approve SERVER TOOL`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, done, err := e.openPins(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			changes, err := p.ToolChanges(cmd.Context(), server)
			if err != nil {
				return failed(err)
			}
			if e.jsonOut {
				return e.printJSON(map[string]any{"changes": changes})
			}
			if len(changes) == 0 {
				e.eprintf("no tool definitions are held for approval\n")
				return nil
			}
			var b strings.Builder
			for i, c := range changes {
				if i > 0 {
					b.WriteString("\n")
				}
				fmt.Fprintf(&b, "%s/%s: %s (held since %s)\n", c.Server, c.Tool, c.Reason, c.Since.Local().Format("2006-01-02 15:04:05"))
				fmt.Fprintf(&b, "  held %s", c.Digest)
				if c.Pinned != "" {
					fmt.Fprintf(&b, ", trusted %s", c.Pinned)
				}
				fmt.Fprintf(&b, "\n  approve: switchboard tools approve %s %s\n", c.Server, c.Tool)
				for _, l := range strings.Split(strings.TrimSuffix(c.Diff, "\n"), "\n") {
					fmt.Fprintf(&b, "    %s\n", l)
				}
			}
			e.printf("%s", b.String())
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "only this server's")
	return cmd
}

func (e *env) toolsApproveCommand() *cobra.Command {
	var digest string
	var all bool
	cmd := &cobra.Command{
		Use:   "approve SERVER TOOL [--digest D] | approve SERVER --all",
		Short: "Trust a held tool definition, so that the tool is offered again",
		Long: `Trusts the definition held for a tool of SERVER (switchboard tools changes
lists them), so that the tool is offered with it on every endpoint. TOOL is
the server's own name for the tool. With --digest, the definition is
approved only if it is still the one with that digest (as tools changes
--json gave it): a definition that changed again since is refused. With
--all, every definition held for SERVER is approved.`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case all && len(args) == 1 && digest == "":
				return nil
			case all:
				return usageErr("tools approve: --all takes a server and no tool or --digest: switchboard tools approve SERVER --all")
			case len(args) != 2:
				return usageErr("tools approve: name a server and one of its tools: switchboard tools approve SERVER TOOL (or SERVER --all)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, done, err := e.openPins(ctx)
			if err != nil {
				return err
			}
			defer done()
			server := args[0]
			changes, err := p.ToolChanges(ctx, server)
			if err != nil {
				return failed(err)
			}
			var want []daemon.ToolChange
			for _, c := range changes {
				if all || c.Tool == args[1] {
					want = append(want, c)
				}
			}
			if len(want) == 0 {
				what := "server " + server
				if !all {
					what = fmt.Sprintf("tool %q of server %q", args[1], server)
				}
				return failed(fmt.Errorf("%s: %w (switchboard tools changes lists what is)", what, daemon.ErrNotHeld))
			}
			var approved []toolpin.Pin
			for _, c := range want {
				d := c.Digest
				if digest != "" {
					d = digest
				}
				pin, err := p.ApproveTool(ctx, c.Server, c.Tool, d)
				if err != nil {
					return failed(err)
				}
				approved = append(approved, pin)
				if !e.jsonOut {
					e.printf("approved %s/%s: %s (was held: %s)\n", c.Server, c.Tool, pin.Digest, c.Reason)
				}
			}
			if e.jsonOut {
				return e.printJSON(map[string]any{"approved": approved})
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&digest, "digest", "", "approve only if the held definition still has this digest")
	cmd.Flags().BoolVar(&all, "all", false, "approve every definition held for the server")
	return cmd
}

func (e *env) toolsPinsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pins",
		Short: "Export or import the trusted tool definitions",
		Long: `The trusted (pinned) tool definitions, as a JSON file another machine or
replica set can import: export writes them to stdout, import trusts those
of a file, all or none (a pin whose digest is not its definition's, an
edited file, is refused naming it). Held definitions are not exported.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var server string
	export := &cobra.Command{
		Use:   "export [--server ID]",
		Short: "Write the trusted tool definitions as JSON to stdout",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, done, err := e.openPins(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			x, err := p.ExportPins(cmd.Context(), server)
			if err != nil {
				return failed(err)
			}
			return e.printJSON(x)
		},
	}
	export.Flags().StringVar(&server, "server", "", "only this server's")
	imp := &cobra.Command{
		Use:   "import FILE",
		Short: "Trust the tool definitions of an export (FILE, or - for stdin)",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("tools pins import: name one file: switchboard tools pins import FILE (- for stdin)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			x, err := e.readPins(args[0])
			if err != nil {
				return err
			}
			p, done, err := e.openPins(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			if err := p.ImportPins(cmd.Context(), x); err != nil {
				return failed(fmt.Errorf("tools pins import %s: %w", args[0], err))
			}
			if e.jsonOut {
				return e.printJSON(map[string]any{"imported": len(x.Pins)})
			}
			e.printf("imported %d pinned tool definitions\n", len(x.Pins))
			return nil
		},
	}
	cmd.AddCommand(export, imp)
	return cmd
}

// maxPinsFile bounds an export read by import: pins of every tool of many
// servers fit many times over.
const maxPinsFile = 256 << 20

// readPins reads an export from file (- for stdin).
func (e *env) readPins(file string) (toolpin.Export, error) {
	var r io.Reader = e.stdin
	name := "stdin"
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return toolpin.Export{}, usageErr("tools pins import: %v", err)
		}
		defer f.Close()
		r, name = f, file
	}
	raw, err := io.ReadAll(io.LimitReader(r, maxPinsFile+1))
	if err != nil {
		return toolpin.Export{}, failed(fmt.Errorf("tools pins import: reading %s: %w", name, err))
	}
	if len(raw) > maxPinsFile {
		return toolpin.Export{}, usageErr("tools pins import: %s is larger than %d MiB", name, maxPinsFile>>20)
	}
	var x toolpin.Export
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := errors.Join(strictjson.Check(raw), dec.Decode(&x)); err != nil {
		return toolpin.Export{}, usageErr("tools pins import: %s is not a pins export (switchboard tools pins export writes one): %v", name, err)
	}
	if x.Version != toolpin.ExportVersion {
		return toolpin.Export{}, usageErr("tools pins import: %s: version %d, and this Switchboard reads version %d", name, x.Version, toolpin.ExportVersion)
	}
	return x, nil
}

var (
	_ pins = (*serveClient)(nil)
	_ pins = storePins{}
)

// heldTool is the error of a call to name when it is a tool held until a
// person approves its definition (naming the change), and nil when it is
// not: a command says so rather than "unknown tool".
func heldTool(ctx context.Context, b backend, name string) error {
	switch b := b.(type) {
	case *host.Host:
		if _, _, _, held := b.HeldTool(name); held {
			_, err := b.CallTool(ctx, name, nil, nil) // refused, naming the change
			return err
		}
	case served:
		changes, err := b.ToolChanges(ctx, "")
		if err != nil {
			return nil
		}
		for _, c := range changes {
			if host.ToolName(b.ToolNameFormat(), c.Server, c.Tool) == name {
				return daemon.KindToolHeld.Errorf("tool %q of server %q: %w: %s (switchboard tools changes)", name, c.Server, host.ErrToolHeld, c.Reason)
			}
		}
	}
	return nil
}
