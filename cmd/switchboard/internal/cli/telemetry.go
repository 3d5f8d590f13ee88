package cli

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/switchboardmcp/switchboard/agent"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/telemetry"
)

// observeSteps attaches tel to the agent steps s runs: each LLM request a
// span and gen_ai metrics (through the provider), each turn a span. The
// runs themselves are recorded by workflowAgents.
func observeSteps(s *agent.Steps, tel *telemetry.Telemetry) {
	if tel == nil {
		return
	}
	resolve := s.Provider
	if resolve != nil {
		s.Provider = func(ctx context.Context, spec string) (llm.Provider, string, string, error) {
			p, name, model, err := resolve(ctx, spec)
			if err != nil {
				return nil, "", "", err
			}
			return observedProvider{p: p, tel: tel, name: name, model: model}, name, model, nil
		}
	}
	s.Turn = tel.StartTurn
}

// observedProvider records each model call of p in tel (an LLM request's
// span, its tokens and duration), under the provider's configured name
// and the model's.
type observedProvider struct {
	p           llm.Provider
	tel         *telemetry.Telemetry
	name, model string
}

func (o observedProvider) Complete(ctx context.Context, req *llm.Request, onText func(string)) (*llm.Response, error) {
	ctx, end := o.tel.StartLLMRequest(ctx, o.name, o.model)
	resp, err := o.p.Complete(ctx, req, onText)
	if err != nil {
		kind := string(llm.KindOther)
		var le *llm.Error
		if errors.As(err, &le) {
			kind = string(le.Kind)
		}
		end(0, 0, kind)
		return nil, err
	}
	end(int64(resp.Usage.InputTokens), int64(resp.Usage.OutputTokens), "")
	return resp, nil
}

// recordAgentRun records an agent step's run named name in tel: its span
// around run, its outcome and duration.
func recordAgentRun(ctx context.Context, tel *telemetry.Telemetry, name string, run func(ctx context.Context) error) error {
	if tel == nil {
		return run(ctx)
	}
	ctx, r := tel.StartRun(ctx, telemetry.KindAgent, name, "", time.Time{})
	err := run(ctx)
	outcome, errType := telemetry.OutcomeCompleted, ""
	switch {
	case err == nil:
	case ctx.Err() != nil:
		outcome = telemetry.OutcomeCancelled
	default:
		outcome, errType = telemetry.OutcomeFailed, "agent_failed"
	}
	r.End(outcome, errType, time.Time{}, 0)
	return err
}

// observedRunner records the agent runs the management API starts (an
// invoke_agent span around the run, its outcome, duration and tokens), as
// workflowAgents does a workflow's agent steps; a.tel is read per run, as
// serve sets it once the daemon exists.
type observedRunner struct {
	daemon.AgentRunner
	a *workflowAgents
}

func (r observedRunner) RunAgent(ctx context.Context, h *host.Host, name, prompt, runID string, emit func(daemon.AgentEvent)) error {
	tel := r.a.tel
	if tel == nil {
		return r.AgentRunner.RunAgent(ctx, h, name, prompt, runID, emit)
	}
	ctx, run := tel.StartRun(ctx, telemetry.KindAgent, name, runID, time.Time{})
	outcome, errType := telemetry.OutcomeFailed, "agent_failed"
	err := r.AgentRunner.RunAgent(ctx, h, name, prompt, runID, func(ev daemon.AgentEvent) {
		switch agent.EventType(ev.Type) {
		case agent.EventRunCompleted:
			outcome, errType = telemetry.OutcomeCompleted, ""
		case agent.EventRunCancelled:
			outcome, errType = telemetry.OutcomeCancelled, ""
		case agent.EventRunFailed:
			var e agent.Event
			if json.Unmarshal(ev.Data, &e) == nil && e.Error != nil {
				errType = string(e.Error.Code)
			}
		}
		emit(ev)
	})
	if err != nil {
		// It never started (no such agent, a server not here): not a run.
		return err
	}
	run.End(outcome, errType, time.Time{}, 0)
	return nil
}

// usageTelemetry is the telemetry of a command that runs agents or
// workflows in this process (run, a workflow run without a serve): no
// export, only the usage, written to the state store as serve writes its
// own, so that `switchboard stats` counts it. Nil when there is no state
// store (stateStore has said why).
func (e *env) usageTelemetry(cfg *config.Config) *telemetry.Telemetry {
	st := e.stateStore(cfg)
	if st == nil {
		return nil
	}
	tel, err := telemetry.New(&telemetry.Options{Logger: e.logger(), Redactor: e.red, Usage: st, Version: host.Version, MaxToolLabels: cfg.Telemetry.MaxToolLabels})
	if err != nil {
		e.logger().Warn("usage not recorded", "err", err)
		return nil
	}
	return tel
}

// usageFlushTimeout bounds writing a command's usage to the store at its
// end: a locked database must not hold the command's exit.
const usageFlushTimeout = 5 * time.Second

// closeTelemetry writes tel's usage to the store and stops it, even when
// the command's context was cancelled (^C): what ran is counted.
func (e *env) closeTelemetry(tel *telemetry.Telemetry) {
	ctx, cancel := context.WithTimeout(context.Background(), usageFlushTimeout)
	defer cancel()
	if err := tel.Close(ctx); err != nil {
		e.logger().Warn("usage not recorded", "err", e.red.Redact(err.Error()))
	}
}
