package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/switchboardmcp/switchboard/agent"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/netguard"
)

// providerCheckTimeout bounds the check that a provider answers at all. It
// asks for no model and sends no key, so any answer comes at once; a
// provider silent this long would leave the run's first model call waiting
// too.
const providerCheckTimeout = 10 * time.Second

// publicAPIs are the hosts of the providers' public APIs, which refuse
// every request without a key.
var publicAPIs = []string{"api.openai.com", "api.anthropic.com"}

// checkProvider finds, before any MCP server starts, what would make the
// run's first model call fail whatever the servers do: a public API
// without a key (free to check), and a provider nothing answers for —
// Ollama not running, a local server not started, no route (one request:
// a GET of the base URL through the provider's own client, so the guarded
// dialer and [network] proxy apply, without the key or headers; it costs a
// round trip, and its connection is reused by the first model call). Any
// HTTP answer, an error status included, is an answer: whether the key
// and the model are good only a model call says, and it costs tokens.
func (e *env) checkProvider(ctx context.Context, pc *chosenProvider) error {
	base := pc.lc.BaseURL
	if base == "" {
		base = llm.Defaults(e.getenv)[pc.lc.Type].BaseURL // the type's public API, as the SDK's default
	}
	u, err := url.Parse(base)
	if err != nil {
		return usageErr("provider %s: base_url %q: %v", pc.name, base, err)
	}
	if pc.lc.APIKey == "" && slices.Contains(publicAPIs, u.Hostname()) {
		return &exitError{kind: daemon.KindNoAPIKey, err: errors.New(noKeyHelp(pc))}
	}
	cctx, cancel := context.WithTimeout(ctx, providerCheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, base, nil)
	if err != nil {
		return usageErr("provider %s: base_url %q: %v", pc.name, base, err)
	}
	client := pc.lc.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if resp != nil {
		// An answer (a refused redirect comes with the response it refused).
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // so the connection is reused
		resp.Body.Close()
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err() // interrupted: Main says so
	}
	return &exitError{kind: daemon.KindProvider, err: unreachable(pc, u, err)}
}

// noKeyHelp says how to give a provider its key.
func noKeyHelp(pc *chosenProvider) string {
	secretName := pc.name + "_api_key"
	if pc.builtin {
		return fmt.Sprintf("provider %s has no API key: set %s, or keep the key in the secret store with 'switchboard secrets set %s' and add to the configuration\n"+
			"  [providers.%s]\n  type = %q\n  api_key = \"{{secrets.%s}}\"",
			pc.name, pc.lc.KeySource, secretName, pc.name, pc.lc.Type, secretName)
	}
	return fmt.Sprintf("[providers.%s] has no api_key, and the public API of type %q needs one: add api_key = \"{{secrets.%s}}\" to it and run 'switchboard secrets set %s' (or use {{env.NAME}})",
		pc.name, pc.lc.Type, secretName, secretName)
}

// unreachable says that nothing answered for a provider, and what to do.
func unreachable(pc *chosenProvider, u *url.URL, err error) error {
	why := err
	var ue *url.Error
	if errors.As(err, &ue) {
		why = ue.Err
	}
	if errors.Is(err, netguard.ErrRefused) {
		return fmt.Errorf("provider %s: %v", pc.name, why) // the policy's own words
	}
	var oe *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		why = errors.New("connection refused")
	case errors.Is(err, context.DeadlineExceeded):
		why = fmt.Errorf("no answer within %s", providerCheckTimeout)
	case errors.As(err, &oe) && oe.Err != nil:
		why = oe.Err
	}
	where := u.Redacted()
	if pc.name == "ollama" || u.Port() == "11434" {
		return fmt.Errorf("provider %s: nothing answers at %s (%v): is Ollama running? Start it (the Ollama app, or 'ollama serve'), and fetch the model with 'ollama pull %s'",
			pc.name, where, why, pc.model)
	}
	if _, local, _ := netguard.ParseHost(u.Hostname()); local {
		return fmt.Errorf("provider %s: nothing answers at %s (%v): is the model server running?", pc.name, where, why)
	}
	return fmt.Errorf("provider %s: cannot reach %s: %v", pc.name, where, why)
}

// missingTools says why tools the run names (the agent's tools, --tools)
// are not offered: an allowlist that excludes them (the agent's, or the
// configuration's), another reason the host skipped them for, or no
// server has them at all.
func (e *env) missingTools(cfg *config.Config, a *agent.Agent, plan *agent.Plan, h *host.Host, missing []string) error {
	format := h.ToolNameFormat()
	var why []string
	for _, name := range missing {
		why = append(why, whyMissing(cfg, a, plan, h, format, name))
	}
	return &exitError{kind: daemon.KindUnknownTool, err: fmt.Errorf("agent %s: %s", a.ID, strings.Join(why, "; "))}
}

func whyMissing(cfg *config.Config, a *agent.Agent, plan *agent.Plan, h *host.Host, format, name string) string {
	for _, st := range h.Servers() {
		for _, sk := range st.Skipped {
			if host.ToolName(format, st.ID, sk.Tool) != name {
				continue
			}
			i := slices.IndexFunc(plan.Servers, func(s config.Server) bool { return s.ID == st.ID })
			if i < 0 || plan.Servers[i].ToolsAllowlist == nil || slices.Contains(plan.Servers[i].ToolsAllowlist, sk.Tool) {
				return fmt.Sprintf("%s is not offered: %s", name, sk.Reason)
			}
			if c, ok := cfg.Server(st.ID); ok && c.ToolsAllowlist != nil && !slices.Contains(c.ToolsAllowlist, sk.Tool) {
				return fmt.Sprintf("%s is not offered: server %q's tools_allowlist (%s) excludes %q", name, st.ID, c.Source, sk.Tool)
			}
			where := a.File
			if j := slices.IndexFunc(a.Servers, func(e agent.ServerEntry) bool { return e.ID() == st.ID }); j >= 0 {
				where = a.Servers[j].Pos.String()
				if f := a.Servers[j].Pos.Field; f != "" {
					where += " " + f + ".tools_allowlist"
				}
			}
			return fmt.Sprintf("%s is not offered: the agent's tools_allowlist for server %q (%s) excludes %q; add it there to use it",
				name, st.ID, where, sk.Tool)
		}
	}
	return fmt.Sprintf("no server offers %s (run 'switchboard tools' to list them)%s", name, didYouMean(name, toolCandidates(h.Tools())))
}
