package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
)

type serverJSON struct {
	ID              string        `json:"id"`
	Transport       string        `json:"transport"`
	Status          string        `json:"status"`
	Detail          string        `json:"detail,omitempty"` // what a starting server is doing ("npx is installing …")
	Optional        bool          `json:"optional"`
	Tools           int           `json:"tools"`
	Skipped         []skippedJSON `json:"skipped"`
	Findings        []findingJSON `json:"findings,omitempty"`
	Warnings        []string      `json:"warnings"`
	Error           string        `json:"error,omitempty"`
	ServerName      string        `json:"server_name,omitempty"`
	ServerVersion   string        `json:"server_version,omitempty"`
	ProtocolVersion string        `json:"protocol_version,omitempty"`
	Description     string        `json:"description,omitempty"`
	Restarts        int           `json:"restarts"`
	LastError       string        `json:"last_error,omitempty"`
	LastHealthy     string        `json:"last_healthy,omitempty"` // RFC 3339
	InFlight        int           `json:"in_flight"`
	Isolation       string        `json:"isolation,omitempty"` // how its stdio child is contained (transport.Isolation)
}

type skippedJSON struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

// findingJSON is a sign of poisoning in one of a server's tools, prompts,
// resources or resource templates (host.ToolFinding).
type findingJSON struct {
	Kind   string `json:"kind"` // tool, prompt, resource, template
	Tool   string `json:"tool"` // its name; a resource's URI, a template's URI template
	Rule   string `json:"rule"`
	Field  string `json:"field"`
	Text   string `json:"text"`
	Action string `json:"action"`
}

func (e *env) serversCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "servers",
		Short: "Connect to every configured server and report its status",
		Long: `Connects to every configured server and reports, per server: id, transport,
status, how many tools it offers, the tools it skipped and why, and its error.
Exits 1 when a server that is not optional failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e.reportsAll = true // its table has every error and warning
			h, cfg, err := e.startHost(cmd.Context(), true, "")
			if err != nil {
				return err
			}
			defer h.Close()
			sts := h.Servers()
			requiredFailed := false
			out := make([]serverJSON, len(sts))
			for i, st := range sts {
				opt := false
				if s, ok := cfg.Server(st.ID); ok {
					opt = s.Optional
				}
				if st.State == host.StateFailed && !opt {
					requiredFailed = true
				}
				j := serverJSON{ID: st.ID, Transport: string(st.Transport), Status: string(st.State), Detail: st.Detail, Optional: opt,
					Tools: st.Tools, Skipped: []skippedJSON{}, Warnings: append([]string{}, st.Warnings...), ProtocolVersion: st.ProtocolVersion}
				for _, sk := range st.Skipped {
					j.Skipped = append(j.Skipped, skippedJSON{Tool: sk.Tool, Reason: sk.Reason})
				}
				for _, f := range st.Findings {
					kind := f.Kind
					if kind == "" {
						kind = host.FindingTool
					}
					j.Findings = append(j.Findings, findingJSON{Kind: kind, Tool: f.Tool, Rule: f.Rule, Field: f.Field, Text: f.Text, Action: f.Action})
				}
				if st.Err != nil {
					j.Error = st.Err.Error()
				}
				j.Description, j.Restarts, j.InFlight, j.Isolation = st.Description, st.Restarts, st.InFlight, st.Isolation
				if st.LastError != nil {
					j.LastError = st.LastError.Error()
				}
				if !st.LastHealthy.IsZero() {
					j.LastHealthy = st.LastHealthy.UTC().Format(time.RFC3339)
				}
				if st.ServerInfo != nil {
					j.ServerName, j.ServerVersion = st.ServerInfo.Name, st.ServerInfo.Version
				}
				out[i] = j
			}
			if e.jsonOut {
				if err := e.printJSON(map[string]any{"servers": out}); err != nil {
					return err
				}
			} else {
				var b strings.Builder
				tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tTRANSPORT\tSTATUS\tTOOLS\tSERVER")
				for _, j := range out {
					status := j.Status
					if j.Optional && j.Status == string(host.StateFailed) {
						status += " (optional)"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", j.ID, j.Transport, status, j.Tools, strings.TrimSpace(j.ServerName+" "+j.ServerVersion))
				}
				tw.Flush()
				for _, j := range out {
					for _, sk := range j.Skipped {
						fmt.Fprintf(&b, "%s: skipped %s: %s\n", j.ID, sk.Tool, sk.Reason)
					}
					for _, f := range j.Findings {
						fmt.Fprintf(&b, "%s: finding (%s) %s %s: %s in %s: %q\n", j.ID, f.Action, f.Kind, f.Tool, f.Rule, f.Field, f.Text)
					}
					for _, w := range j.Warnings {
						fmt.Fprintf(&b, "%s: warning: %s\n", j.ID, w)
					}
					if j.Error != "" {
						fmt.Fprintf(&b, "%s: error: %s\n", j.ID, j.Error)
					}
				}
				e.printf("%s", b.String())
			}
			if requiredFailed {
				return &exitError{kind: daemon.KindFailed}
			}
			return nil
		},
	}
}

type toolJSON struct {
	Name         string               `json:"name"`
	Server       string               `json:"server"`
	OriginalName string               `json:"original_name"`
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description"`
	InputSchema  any                  `json:"input_schema"`
	OutputSchema any                  `json:"output_schema,omitempty"` // the shape of structuredContent, when the tool declares one
	Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`   // the server's hints (readOnlyHint, destructiveHint, …), as it sent them
	TaskSupport  string               `json:"task_support,omitempty"`  // the server's execution.taskSupport: "required" tools are called as its tasks
}

func (e *env) toolsCommand() *cobra.Command {
	var only string
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the tools Switchboard offers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, _, err := e.startHost(cmd.Context(), false, only)
			if err != nil {
				return err
			}
			defer h.Close()
			tools := h.Tools()
			if e.jsonOut {
				out := make([]toolJSON, len(tools))
				for i, t := range tools {
					out[i] = toolJSON{Name: t.Name, Server: t.Server, OriginalName: t.Tool.Name, Title: t.Tool.Title,
						Description: t.Tool.Description, InputSchema: t.Tool.InputSchema, OutputSchema: t.Tool.OutputSchema,
						Annotations: t.Tool.Annotations, TaskSupport: host.TaskSupport(t.Tool)}
				}
				return e.printJSON(map[string]any{"tools": out})
			}
			var b strings.Builder
			for _, t := range tools {
				desc := firstLine(t.Tool.Description)
				fmt.Fprintf(&b, "%s\n", t.Name)
				if desc != "" {
					fmt.Fprintf(&b, "    %s\n", desc)
				}
			}
			e.printf("%s", b.String())
			return nil
		},
	}
	cmd.Flags().StringVar(&only, "server", "", "only this server's tools (connects to it alone)")
	cmd.AddCommand(e.toolsChangesCommand(), e.toolsApproveCommand(), e.toolsPinsCommand())
	return cmd
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

func (e *env) callCommand() *cobra.Command {
	var argsJSON string
	var kvs []string
	var timeout time.Duration
	var detach bool
	cmd := &cobra.Command{
		Use:   "call TOOL",
		Short: "Validate and call a tool",
		Long: `Validates the arguments against the tool's input schema, calls the tool and
prints its content: text as text, other kinds summarised (--json prints the
MCP result). Arguments come from --args (a JSON object) and --arg key=value
(repeatable; the value is taken as a string when the schema says string,
otherwise as JSON when it parses, else as a string). --timeout bounds the
call instead of the server's timeout (60s unless configured).

A server that asks for input during the call (elicitation) gets a form on
the terminal, built from what it asks for; without a terminal the question
is declined, and stderr says so.

--detach makes the call a task of the running switchboard serve of this
configuration (the MCP tasks extension) and prints the task's id, for
"switchboard tasks show ID" to follow; the call goes on in the serve after
the command ends. Without a running serve it is refused. A call that ends
within the serve's [gateway] task_wait prints its result instead.

Exits 1 when the tool reports an error or the call fails, 2 for an unknown
tool or arguments its schema refuses.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			name := a[0]
			// Malformed --args or --arg is a usage error whatever the
			// servers do: report it before starting any of them.
			if _, err := buildArgs(argsJSON, kvs, nil); err != nil {
				return usageErr("%v", err)
			}
			if cmd.Flags().Changed("timeout") && timeout <= 0 {
				return usageErr("--timeout %s: must be positive, such as 90s or 10m", timeout)
			}
			if detach {
				if cmd.Flags().Changed("timeout") {
					return usageErr("--timeout with --detach: a detached call is bounded by the serve's task time to live ([gateway] task_ttl)")
				}
				return e.callDetached(cmd.Context(), name, argsJSON, kvs)
			}
			h, _, err := e.startHost(cmd.Context(), false, "")
			if err != nil {
				return err
			}
			defer h.Close()
			t, ok := h.Tool(name)
			if !ok {
				if err := heldTool(cmd.Context(), h, name); err != nil {
					return failed(err)
				}
				return failed(fmt.Errorf("%w %q; run 'switchboard tools' to list them%s", host.ErrUnknownTool, name, didYouMean(name, toolCandidates(h.Tools()))))
			}
			args, err := buildArgs(argsJSON, kvs, t.Tool.InputSchema)
			if err != nil {
				return usageErr("%v", err)
			}
			opts := &host.CallOptions{Timeout: timeout}
			var endProgress func()
			opts.Progress, endProgress = e.callProgress(name)
			res, err := h.CallTool(cmd.Context(), name, args, opts)
			endProgress()
			if err != nil {
				return failed(err)
			}
			if e.jsonOut {
				if err := e.printJSON(res); err != nil {
					return err
				}
			} else {
				e.printf("%s", renderContent(res.Content, res.StructuredContent))
			}
			if res.IsError {
				return &exitError{kind: daemon.KindFailed}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&argsJSON, "args", "", "arguments as a JSON object")
	cmd.Flags().StringArrayVar(&kvs, "arg", nil, "an argument as key=value (repeatable)")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "bound the call by this `DURATION` (90s, 10m) instead of the server's timeout")
	cmd.Flags().BoolVar(&detach, "detach", false, "make the call a task of the running switchboard serve and print its id (switchboard tasks show ID follows it)")
	return cmd
}

// buildArgs merges --args and --arg into one JSON object.
func buildArgs(argsJSON string, kvs []string, inputSchema any) (json.RawMessage, error) {
	args := map[string]any{}
	if strings.TrimSpace(argsJSON) != "" {
		d := json.NewDecoder(strings.NewReader(argsJSON))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("--args: not valid JSON: %v", err)
		}
		if d.More() {
			return nil, errors.New("--args: trailing data after the JSON object")
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, errors.New("--args: must be a JSON object")
		}
		args = m
	}
	props, _ := schemaProperties(inputSchema)
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--arg %q: want key=value", kv)
		}
		if isStringProperty(props[k]) {
			args[k] = v
			continue
		}
		d := json.NewDecoder(strings.NewReader(v))
		d.UseNumber()
		var parsed any
		if err := d.Decode(&parsed); err == nil && !d.More() {
			args[k] = parsed
		} else {
			args[k] = v
		}
	}
	if len(args) == 0 {
		return nil, nil
	}
	return json.Marshal(args)
}

func schemaProperties(s any) (map[string]any, bool) {
	m, ok := s.(map[string]any)
	if !ok {
		return nil, false
	}
	p, ok := m["properties"].(map[string]any)
	return p, ok
}

func isStringProperty(p any) bool {
	m, ok := p.(map[string]any)
	if !ok {
		return false
	}
	switch t := m["type"].(type) {
	case string:
		return t == "string"
	case []any:
		return len(t) == 1 && t[0] == "string"
	}
	return false
}

// renderContent prints text as text and summarises other kinds.
func renderContent(content []mcp.Content, structured any) string {
	var b strings.Builder
	hasText := false
	for _, c := range content {
		switch c := c.(type) {
		case *mcp.TextContent:
			hasText = true
			b.WriteString(c.Text)
			if !strings.HasSuffix(c.Text, "\n") {
				b.WriteByte('\n')
			}
		case *mcp.ImageContent:
			fmt.Fprintf(&b, "[image: %s, %d bytes]\n", c.MIMEType, len(c.Data))
		case *mcp.AudioContent:
			fmt.Fprintf(&b, "[audio: %s, %d bytes]\n", c.MIMEType, len(c.Data))
		case *mcp.ResourceLink:
			fmt.Fprintf(&b, "[resource link: %s%s]\n", c.URI, paren(c.MIMEType))
		case *mcp.EmbeddedResource:
			if r := c.Resource; r != nil {
				if r.Text != "" {
					fmt.Fprintf(&b, "[resource: %s%s]\n%s\n", r.URI, paren(r.MIMEType), r.Text)
				} else {
					fmt.Fprintf(&b, "[resource: %s%s, %d bytes]\n", r.URI, paren(r.MIMEType), len(r.Blob))
				}
			}
		default:
			raw, _ := json.Marshal(c)
			fmt.Fprintf(&b, "[content: %s]\n", raw)
		}
	}
	if structured != nil && !hasText {
		raw, err := json.MarshalIndent(structured, "", "  ")
		if err == nil {
			b.Write(raw)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func (e *env) resourcesCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "resources",
		Short: "List the resources and resource templates of every server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, _, err := e.startHost(cmd.Context(), false, "")
			if err != nil {
				return err
			}
			defer h.Close()
			rs, err1 := h.Resources(cmd.Context())
			ts, err2 := h.ResourceTemplates(cmd.Context())
			if e.jsonOut {
				type resJSON struct {
					Server string `json:"server"`
					*mcp.Resource
				}
				type tmplJSON struct {
					Server string `json:"server"`
					*mcp.ResourceTemplate
				}
				out := struct {
					Resources []resJSON  `json:"resources"`
					Templates []tmplJSON `json:"templates"`
					// Errors are the servers that did not answer; the
					// lists hold the others'.
					Errors []errorItem `json:"errors,omitempty"`
				}{Resources: []resJSON{}, Templates: []tmplJSON{}, Errors: errorList(errors.Join(err1, err2))}
				for _, r := range rs {
					out.Resources = append(out.Resources, resJSON{r.Server, r.Resource})
				}
				for _, t := range ts {
					out.Templates = append(out.Templates, tmplJSON{t.Server, t.Template})
				}
				if err := e.printJSON(out); err != nil {
					return err
				}
			} else {
				var b strings.Builder
				tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "SERVER\tURI\tNAME\tMIME TYPE")
				for _, r := range rs {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Server, r.Resource.URI, r.Resource.Name, r.Resource.MIMEType)
				}
				for _, t := range ts {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Server, t.Template.URITemplate, t.Template.Name+" (template)", t.Template.MIMEType)
				}
				tw.Flush()
				e.printf("%s", b.String())
			}
			if err := errors.Join(err1, err2); err != nil {
				return failed(err)
			}
			return nil
		},
	}
}

func (e *env) readCommand() *cobra.Command {
	var serverID string
	cmd := &cobra.Command{
		Use:   "read URI [--server ID]",
		Short: "Read a resource from a server",
		Long: `Reads a resource. Without --server, the server is the one that lists the URI,
else the one with a resource template the URI matches, else the only server
configured; when several could have it, --server says which.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			h, _, err := e.startHost(cmd.Context(), false, serverID)
			if err != nil {
				return err
			}
			defer h.Close()
			server := serverID
			if server == "" {
				if server, err = resourceOwner(cmd.Context(), h, a[0]); err != nil {
					return failed(err)
				}
			}
			res, err := h.ReadResource(cmd.Context(), server, a[0], nil)
			if err != nil {
				return failed(err)
			}
			if e.jsonOut {
				return e.printJSON(res)
			}
			var b strings.Builder
			for _, c := range res.Contents {
				if c.Text != "" {
					b.WriteString(c.Text)
					if !strings.HasSuffix(c.Text, "\n") {
						b.WriteByte('\n')
					}
				} else {
					fmt.Fprintf(&b, "[%s%s, %d bytes]\n", c.URI, paren(c.MIMEType), len(c.Blob))
				}
			}
			e.printf("%s", b.String())
			return nil
		},
	}
	cmd.Flags().StringVar(&serverID, "server", "", "the server that has the resource (needed when several could)")
	return cmd
}

func (e *env) promptsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "prompts",
		Short: "List the prompts of every server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, _, err := e.startHost(cmd.Context(), false, "")
			if err != nil {
				return err
			}
			defer h.Close()
			ps, lerr := h.Prompts(cmd.Context())
			format := h.ToolNameFormat()
			if e.jsonOut {
				type promptJSON struct {
					Server string `json:"server"`
					// HostName is the name the gateway publishes and
					// 'switchboard prompt' takes: mcp_{server}_{prompt}.
					HostName string `json:"host_name"`
					*mcp.Prompt
				}
				out := []promptJSON{}
				for _, p := range ps {
					out = append(out, promptJSON{p.Server, host.ToolName(format, p.Server, p.Prompt.Name), p.Prompt})
				}
				doc := map[string]any{"prompts": out}
				if lerr != nil {
					doc["errors"] = errorList(lerr)
				}
				if err := e.printJSON(doc); err != nil {
					return err
				}
			} else {
				var b strings.Builder
				for _, p := range ps {
					var args []string
					for _, a := range p.Prompt.Arguments {
						s := a.Name
						if a.Required {
							s += "*"
						}
						args = append(args, s)
					}
					fmt.Fprintf(&b, "%s (%s)", host.ToolName(format, p.Server, p.Prompt.Name), p.Server)
					if len(args) > 0 {
						fmt.Fprintf(&b, " args: %s", strings.Join(args, ", "))
					}
					b.WriteByte('\n')
					if d := firstLine(p.Prompt.Description); d != "" {
						fmt.Fprintf(&b, "    %s\n", d)
					}
				}
				e.printf("%s", b.String())
			}
			if lerr != nil {
				return failed(lerr)
			}
			return nil
		},
	}
}

func (e *env) promptCommand() *cobra.Command {
	var serverID string
	var kvs []string
	cmd := &cobra.Command{
		Use:   "prompt NAME [--server ID] [--arg key=value ...]",
		Short: "Get a prompt from a server",
		Long: `Gets a prompt. NAME is the name 'switchboard prompts' lists and the gateway
publishes (mcp_{server}_{prompt}), or the server's own name for it when only
one server has a prompt of that name (or --server names the server).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			args := map[string]string{}
			for _, kv := range kvs {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return usageErr("--arg %q: want key=value", kv)
				}
				args[k] = v
			}
			h, _, err := e.startHost(cmd.Context(), false, serverID)
			if err != nil {
				return err
			}
			defer h.Close()
			route, err := findPrompt(cmd.Context(), h, a[0], serverID)
			if err != nil {
				return failed(err)
			}
			res, err := h.GetPrompt(cmd.Context(), route.server, route.name, args, nil)
			if err != nil {
				return failed(err)
			}
			if e.jsonOut {
				return e.printJSON(res)
			}
			var b strings.Builder
			if res.Description != "" {
				fmt.Fprintf(&b, "# %s\n", res.Description)
			}
			for _, m := range res.Messages {
				fmt.Fprintf(&b, "%s: %s", m.Role, renderContent([]mcp.Content{m.Content}, nil))
			}
			e.printf("%s", b.String())
			return nil
		},
	}
	cmd.Flags().StringVar(&serverID, "server", "", "the server that has the prompt (needed when several do)")
	cmd.Flags().StringArrayVar(&kvs, "arg", nil, "a prompt argument as key=value (repeatable)")
	return cmd
}

func (e *env) validateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "validate",
		Short: "Check the configuration and report every problem at once",
		Long: `Checks the configuration files without connecting to any server, and reports
every problem at once, each with file, line and field path. It also finds
what would fail at start: a server's command that is not on PATH or not
executable, a placeholder that resolves to nothing ({{secrets.NAME}} in
neither the secret store nor the environment, {{env.NAME}} unset), an agent
file that does not load or names a server or provider the configuration
lacks, a workflow file that does not load or refers to a workflow, agent or
tool that does not exist, a [state] placeholder that resolves to nothing.
What an optional server or an unused provider lacks is a warning; so is
what the configuration may do but most likely should not (serve prints
these too): a credential written out where {{secrets.NAME}} belongs, PATH
set in a server's env, a command line run through sh -c, a URL to the port
of a service that is no MCP server (22, 6379, 2375, …).

Exits 2 when there is any problem. --json reports each as fields: file,
line (0 when not known), path and message.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := e.loadConfigRaw()
			details := []problemJSON{}
			warnings := []problemJSON{}
			var texts []string
			if err != nil {
				details = append(details, problemDetails(err)...)
				texts = append(texts, problemList(err)...)
			}
			for _, f := range e.startFindings(cfg, err) {
				d := problemJSON{File: f.Pos.File, Line: f.Pos.Line, Path: f.Field, Message: f.Msg}
				if f.warning {
					warnings = append(warnings, d)
					continue
				}
				details = append(details, d)
				texts = append(texts, f.Problem.Error())
			}
			ok := len(details) == 0
			if e.jsonOut {
				out := map[string]any{"ok": ok, "problems": nonNil(texts), "details": details, "warnings": warnings,
					"files": nonNil(cfg.Files), "servers": len(cfg.Servers)}
				if perr := e.printJSON(out); perr != nil {
					return perr
				}
				if !ok {
					return &exitError{kind: daemon.KindUsage}
				}
				return nil
			}
			for _, w := range warnings {
				p := config.Problem{Pos: config.Position{File: w.File, Line: w.Line}, Field: w.Path, Msg: w.Message}
				fmt.Fprintf(e.stderr, "switchboard: warning: %s\n", p.Error())
			}
			if !ok {
				return &exitError{kind: daemon.KindConfig, err: fmt.Errorf("configuration:\n%s", indent(strings.Join(texts, "\n"))), details: details}
			}
			if len(cfg.Files) == 0 {
				e.printf("ok: no configuration file found\n")
				return nil
			}
			e.printf("ok: %d server(s) from %s\n", len(cfg.Servers), strings.Join(cfg.Files, ", "))
			return nil
		},
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// problemList flattens a joined configuration error into its problems.
func problemList(err error) []string {
	out := []string{}
	if err == nil {
		return out
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, e.Error())
		}
		return out
	}
	return append(out, err.Error())
}
