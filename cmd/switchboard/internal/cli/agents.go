package cli

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/switchboardmcp/switchboard/agent"
	"github.com/switchboardmcp/switchboard/daemon"
)

type agentJSON struct {
	ID          string   `json:"id"`
	Description string   `json:"description"`
	Model       string   `json:"model"`
	Servers     []string `json:"servers"`         // the servers a plain run uses
	Tools       []string `json:"tools,omitempty"` // the agent's narrowing; absent: every tool
	Builtins    []string `json:"builtins"`
	File        string   `json:"file"`
	Error       string   `json:"error,omitempty"` // why the agent cannot run as configured
}

func (e *env) agentsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "agents",
		Short: "List the agents found, with their models and servers",
		Long: `Lists the agents in ./agents/ and $XDG_CONFIG_HOME/switchboard/agents/ (an
agent in ./agents/ hides one with the same id in the other), with the model
and the servers a plain 'switchboard run AGENT' uses. Agent files that do not
load, and servers two agents declare differently, are reported on stderr (and
under "problems" with --json, with file, line, path and message), and the exit
code is then 2.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := e.loadConfig()
			if err != nil {
				return err
			}
			agents, loadErr := agent.List(agent.Dirs(e.getenv))
			out := make([]agentJSON, len(agents))
			var resolveErrs []error
			for i, a := range agents {
				j := agentJSON{ID: a.ID, Description: a.Description, Model: a.Model, Servers: []string{},
					Tools: a.Tools, Builtins: append([]string{}, a.Builtins...), File: a.File}
				if plan, err := agent.Resolve(cfg, a, nil); err != nil {
					j.Error = err.Error()
					resolveErrs = append(resolveErrs, err)
				} else {
					for _, s := range plan.Servers {
						j.Servers = append(j.Servers, s.ID)
					}
				}
				out[i] = j
			}
			var problems []error
			if loadErr != nil {
				problems = append(problems, loadErr)
			}
			if err := agent.CheckConflicts(cfg, agents); err != nil {
				problems = append(problems, err)
			}
			problems = append(problems, resolveErrs...)
			if e.jsonOut {
				doc := map[string]any{"agents": out}
				if len(problems) > 0 {
					// The files that do not load are not in agents.
					doc["problems"] = problemDetails(errors.Join(problems...))
				}
				if err := e.printJSON(doc); err != nil {
					return err
				}
			} else {
				var b strings.Builder
				tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tMODEL\tSERVERS\tDESCRIPTION")
				for _, j := range out {
					servers := strings.Join(j.Servers, ",")
					if servers == "" {
						servers = "-"
					}
					if len(j.Builtins) > 0 {
						servers += " +" + strings.Join(j.Builtins, ",")
					}
					model := j.Model
					if model == "" {
						model = "-"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", j.ID, model, servers, firstLine(j.Description))
				}
				tw.Flush()
				e.printf("%s", b.String())
			}
			if len(problems) > 0 {
				err := errors.Join(problems...)
				return &exitError{kind: daemon.KindConfig, err: fmt.Errorf("agents:\n%s", indent(err.Error())), details: problemDetails(err)}
			}
			return nil
		},
	}
}
