package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/switchboardmcp/switchboard/store"
	"github.com/switchboardmcp/switchboard/telemetry"
	"github.com/switchboardmcp/switchboard/workflow"
)

// workflowEvents records the workflow engine's events in tel: runs by
// outcome and duration, the tokens of their agent steps, a span per run
// and step (workflow.EngineOptions.OnEvent). byID are the engine's
// workflows, whose definitions say which steps are agent steps.
func workflowEvents(tel *telemetry.Telemetry, byID map[string]*workflow.Workflow) func(workflow.Event) {
	return func(ev workflow.Event) {
		te := telemetry.WorkflowEvent{Type: string(ev.Type), RunID: ev.RunID, Workflow: ev.Workflow, Step: ev.Step,
			Item: -1, Attempt: ev.Attempt, Time: ev.Time, Skipped: ev.Skipped}
		if ev.Item != nil {
			te.Item = *ev.Item
		}
		if ev.DurationMS != nil {
			te.Duration = time.Duration(*ev.DurationMS) * time.Millisecond
		}
		if ev.Error != nil {
			te.Error = string(ev.Error.Code)
		}
		if ev.Type == workflow.EventStepCompleted && isAgentStep(byID[ev.Workflow], ev.Step, ev.Item != nil) {
			// An agent step's result is workflow.AgentResult, its usage
			// the agent run's.
			var r struct {
				Usage struct {
					Input  int64 `json:"input_tokens"`
					Output int64 `json:"output_tokens"`
				} `json:"usage"`
			}
			if json.Unmarshal(ev.Result, &r) == nil {
				te.InputTokens, te.OutputTokens = r.Usage.Input, r.Usage.Output
			}
		}
		tel.WorkflowEvent(te)
	}
}

// isAgentStep says whether wf's step id (its for_each's inner step, for
// an item's event) is an agent step.
func isAgentStep(wf *workflow.Workflow, id string, item bool) bool {
	if wf == nil {
		return false
	}
	i := slices.IndexFunc(wf.Steps, func(s *workflow.Step) bool { return s.ID == id })
	if i < 0 {
		return false
	}
	s := wf.Steps[i]
	if item && s.ForEach != nil {
		s = s.ForEach.Step
	}
	return s != nil && s.Kind == workflow.StepAgent
}

// Usage reports the usage recorded in the daemon's store since since
// (calls, errors and latency percentiles per server and tool, runs and
// tokens per agent and workflow), the calls of the last moments included:
// what its telemetry gathered is written first. It is what
// `switchboard stats` and the API serve. With endpoint, a named endpoint's
// name, it reports the calls made through that endpoint alone
// (store.Store.Usage).
func (d *Daemon) Usage(ctx context.Context, since time.Time, endpoint string) (*store.UsageReport, error) {
	if err := d.tel.FlushUsage(ctx); err != nil {
		d.log.Warn("telemetry: usage not recorded", "err", d.red.Redact(err.Error()))
	}
	return d.store.Usage(ctx, since, endpoint)
}

// DefaultUsageWindow is the usage window of the API and the UI without
// ?window=, as `switchboard stats` without --since.
const DefaultUsageWindow = time.Hour

// MinUsageWindow is the shortest usage window: the store's rows are
// minutes.
const MinUsageWindow = time.Minute

// ParseUsageWindow reads a usage window as the API's and the UI's
// ?window= give it ("1h", "24h": a Go duration from MinUsageWindow to
// what the store keeps, store.UsageHourRetention); "" is
// DefaultUsageWindow.
func ParseUsageWindow(s string) (time.Duration, error) {
	if s == "" {
		return DefaultUsageWindow, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < MinUsageWindow || d > store.UsageHourRetention {
		return 0, fmt.Errorf("give a duration from %v to %v (1h, 24h)", MinUsageWindow, store.UsageHourRetention)
	}
	return d, nil
}

// UsageSeries reads the usage recorded in the daemon's store as series of
// points over time (store.Store.UsageSeries: bucketed to fit the window
// in at most q.Points points), the calls of the last moments included, as
// Usage: the web UI's charts.
func (d *Daemon) UsageSeries(ctx context.Context, q store.UsageSeriesQuery) (*store.UsageSeriesReport, error) {
	if err := d.tel.FlushUsage(ctx); err != nil {
		d.log.Warn("telemetry: usage not recorded", "err", d.red.Redact(err.Error()))
	}
	return d.store.UsageSeries(ctx, q)
}
