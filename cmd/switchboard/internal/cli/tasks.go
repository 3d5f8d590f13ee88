package cli

// switchboard tasks: the gateway's tasks (the MCP tasks extension, issue
// 29) — listed, shown, cancelled. Through the running serve of this
// configuration (/api/v1/tasks) when there is one; otherwise listed and
// shown read-only from the state store, as last written. Cancelling needs
// the serve: only the replica that runs a task's call can cancel that
// call upstream, and marking the row cancelled without it would claim
// what did not happen (with PostgreSQL another replica may still run the
// call). A task whose serve is gone is reported interrupted by the next
// serve that reads it.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboardmcp/switchboard/api"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/store"
)

// taskStatuses are the statuses --status takes.
var taskStatuses = []string{"working", "input_required", "completed", "failed", "cancelled"}

func (e *env) tasksCommand() *cobra.Command {
	var status string
	var limit int
	cmd := &cobra.Command{
		Use:   "tasks [--status S] [--limit N]",
		Short: "List the gateway's tasks (long tool calls); show and cancel them",
		Long: `Lists the tasks switchboard serve made of tool calls (the MCP tasks extension),
newest first: id, status, server/tool, age and status message. With --json,
the tasks as the REST API shows them (GET /api/v1/tasks).

The tasks come from the running switchboard serve of this configuration when
there is one, else from the state store as last written (a task whose serve
stopped still says working there, until a serve reads it and reports it
interrupted). "tasks cancel" needs the serve: it cancels the call where it
runs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if status != "" && !slices.Contains(taskStatuses, status) {
				return usageErr("--status %q: one of %s", status, strings.Join(taskStatuses, ", "))
			}
			if limit < 1 || limit > api.MaxLimit {
				return usageErr("--limit %d: give a number from 1 to %d", limit, api.MaxLimit)
			}
			ctx := cmd.Context()
			tasks, err := e.listTasks(ctx, api.TaskFilter{Status: status, Limit: limit})
			if err != nil {
				return err
			}
			if e.jsonOut {
				return e.printJSON(tasks)
			}
			now := time.Now()
			for _, t := range tasks {
				e.printf("%s\t%s\t%s/%s\t%s\t%s\n", t.ID, t.Status, t.Server, t.Tool, daemon.Age(now.Sub(t.Created)), oneLine(t.StatusMessage))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "only the tasks in this status: "+strings.Join(taskStatuses, ", "))
	cmd.Flags().IntVar(&limit, "limit", api.DefaultLimit, "list at most this many, newest first")
	show := &cobra.Command{
		Use: "show TASK", Short: "Show a task: its status, server, tool, caller, times, and its result or error", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			t, live, err := e.showTask(cmd.Context(), a[0])
			if err != nil {
				return err
			}
			if e.jsonOut {
				return e.printJSON(t)
			}
			e.printf("%s", formatTask(t, live))
			return nil
		},
	}
	cancel := &cobra.Command{
		Use: "cancel TASK", Short: "Cancel a task and its call (needs the running switchboard serve)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			ctx := cmd.Context()
			cfg, err := e.loadConfig()
			if err != nil {
				return err
			}
			c, err := e.dialServe(ctx, cfg)
			if err != nil {
				return failed(err)
			}
			if c == nil {
				return &exitError{kind: daemon.KindUnavailable, err: fmt.Errorf("cancelling task %s: no switchboard serve of this configuration runs: only the serve that runs a task's call can cancel it (a task whose serve stopped is reported interrupted when a serve next reads it)", a[0])}
			}
			defer c.Close()
			t, err := c.CancelTask(ctx, a[0])
			if err != nil {
				return failed(err)
			}
			if e.jsonOut {
				return e.printJSON(t)
			}
			e.printf("%s\t%s\t%s\n", t.ID, t.Status, oneLine(t.StatusMessage))
			return nil
		},
	}
	cmd.AddCommand(show, cancel)
	return cmd
}

// listTasks lists the tasks of the running serve, else of the state store.
func (e *env) listTasks(ctx context.Context, f api.TaskFilter) ([]api.TaskJSON, error) {
	cfg, err := e.loadConfig()
	if err != nil {
		return nil, err
	}
	c, err := e.dialServe(ctx, cfg)
	if err != nil {
		e.logger().Info("switchboard serve does not answer: reading the tasks from the state store", "err", err)
	}
	if c != nil {
		defer c.Close()
		ts, err := c.Tasks(ctx, f)
		if err != nil {
			return nil, failed(err)
		}
		if ts == nil {
			ts = []api.TaskJSON{}
		}
		return ts, nil
	}
	st := e.stateStore(cfg)
	if st == nil {
		return nil, failed(fmt.Errorf("no tasks to list: %w", e.stateErr))
	}
	rows, _, err := st.ListTasks(ctx, store.TaskFilter{Status: f.Status, Limit: f.Limit})
	if err != nil {
		return nil, failed(err)
	}
	out := []api.TaskJSON{}
	for _, r := range rows {
		out = append(out, storedTask(r))
	}
	return out, nil
}

// showTask reads one task, from the running serve (live) or the store.
func (e *env) showTask(ctx context.Context, id string) (t api.TaskJSON, live bool, err error) {
	cfg, err := e.loadConfig()
	if err != nil {
		return t, false, err
	}
	c, err := e.dialServe(ctx, cfg)
	if err != nil {
		e.logger().Info("switchboard serve does not answer: reading the tasks from the state store", "err", err)
	}
	if c != nil {
		defer c.Close()
		t, err := c.Task(ctx, id)
		if err != nil {
			return t, true, failed(err)
		}
		return t, true, nil
	}
	st := e.stateStore(cfg)
	if st == nil {
		return t, false, failed(fmt.Errorf("no tasks to show: %w", e.stateErr))
	}
	r, err := st.Task(ctx, id)
	if err != nil {
		return t, false, &exitError{kind: daemon.KindUnknownTask, err: fmt.Errorf("task %q: %w", id, daemon.ErrNoTask)}
	}
	// The row as stored: redacted when the gateway wrote it, and again on
	// output (printJSON, printf).
	return storedTask(r), false, nil
}

// storedTask is a row of the state store as the API shows it.
func storedTask(t store.Task) api.TaskJSON {
	tj := api.TaskJSON{ID: t.ID, Status: t.Status, StatusMessage: t.StatusMessage, Server: t.Server, Tool: t.Tool,
		Caller: t.Caller, Endpoint: t.Endpoint, Created: t.Created.UTC(), Updated: t.Updated.UTC(), TTLMs: t.TTL.Milliseconds(),
		Replica: t.Owner, UpstreamTask: t.UpstreamTask, InputRequests: t.InputRequests, Result: t.Result, Error: t.Error}
	for _, c := range t.History {
		tj.History = append(tj.History, api.TaskStatusJSON{Status: c.Status, At: c.At.UTC(), Message: c.Message})
	}
	return tj
}

// taskHistory is a task's statuses on one line, each after the first with
// the time since it: "working → input_required +1.2s → completed +3.4s".
func taskHistory(h []api.TaskStatusJSON) string {
	parts := make([]string, 0, len(h))
	for i, c := range h {
		s := c.Status
		if i > 0 {
			s += " +" + c.At.Sub(h[0].At).Round(time.Millisecond).String()
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " → ")
}

// formatTask is tasks show's text: the fields, then the result's text
// (each text content on its own) or the error's message.
func formatTask(t api.TaskJSON, live bool) string {
	var b strings.Builder
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%-15s %s\n", k+":", v)
		}
	}
	row("task", t.ID)
	st := t.Status
	if !live && !daemon.TaskEnded(st) {
		st += " (as last written: no switchboard serve runs to follow it)"
	}
	row("status", st)
	row("message", oneLine(t.StatusMessage))
	row("tool", t.Server+"/"+t.Tool)
	row("caller", t.Caller)
	row("endpoint", t.Endpoint)
	row("created", t.Created.Local().Format(time.DateTime)+" ("+daemon.Age(time.Since(t.Created))+" ago)")
	row("updated", t.Updated.Local().Format(time.DateTime))
	if t.Run == "" {
		row("kept for", (time.Duration(t.TTLMs) * time.Millisecond).String())
	}
	row("replica", t.Replica)
	row("run", t.Run)
	row("upstream task", t.UpstreamTask)
	row("history", taskHistory(t.History))
	if len(t.InputRequests) > 0 {
		row("waiting for", string(t.InputRequests))
	}
	out := daemon.TaskOutcomeOf(t.Result, t.Error)
	row("error", out.Error)
	if out.IsError {
		row("result", "the tool reported an error (isError)")
	}
	if len(out.Texts) > 0 {
		b.WriteString("\n" + strings.Join(out.Texts, "\n") + "\n")
	}
	return b.String()
}
