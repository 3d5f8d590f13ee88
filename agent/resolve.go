package agent

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboardmcp/switchboard/config"
)

// Overrides are a run's flags, the last layer of resolution.
type Overrides struct {
	// MCP replaces the agent's servers with these ids (--mcp ID,…), each
	// an agent's server or a configured one. Nil keeps the agent's; empty
	// but non-nil (--mcp none) means no server.
	MCP []string
	// Tools narrows the tools further (--tools NAME,…); nil keeps the
	// agent's. It can never name a tool the agent's tools leave out.
	Tools []string
}

// Plan is what a run uses: the servers to start and the tools the model may
// see.
type Plan struct {
	Servers []config.Server
	// Tools are the host names of the tools the model may see; nil means
	// every tool the servers offer.
	Tools []string
}

// Resolve applies the layers in order — the configuration, the agent file,
// the run's flags — each replacing what the previous one said about the
// servers, and each narrowing the tools:
//
//  1. cfg: every configured server, every tool.
//  2. the agent: when it has mcp_servers, exactly those (a ref takes the
//     configured server, with tools_allowlist narrowed when given; an inline
//     server is used as declared); its tools narrow the tools.
//  3. o: --mcp replaces the servers by id (the agent's or configured
//     ones; --mcp none: none); --tools narrows the tools further.
//
// A plain run (o nil) thus uses the agent's servers and tools. An inline
// server whose id a configured server has, with other settings, is an error
// naming both places. cfg may be nil (no configuration file).
func Resolve(cfg *config.Config, a *Agent, o *Overrides) (*Plan, error) {
	if cfg == nil {
		cfg = &config.Config{}
	}
	if o == nil {
		o = &Overrides{}
	}
	var errs []error
	servers := slices.Clone(cfg.Servers)
	var own []config.Server // the agent's, for --mcp
	if a.Servers != nil {
		servers = nil
		for _, e := range a.Servers {
			s, err := entryServer(cfg, e)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			servers = append(servers, s)
			own = append(own, s)
		}
	}
	if o.MCP != nil {
		servers = nil
		for _, id := range o.MCP {
			if i := slices.IndexFunc(own, func(s config.Server) bool { return s.ID == id }); i >= 0 {
				servers = append(servers, own[i])
			} else if s, ok := cfg.Server(id); ok {
				servers = append(servers, s)
			} else {
				errs = append(errs, fmt.Errorf("--mcp: no server %q in the agent or the configuration (%s)", id, known(own, cfg)))
			}
		}
	}

	tools := a.Tools
	if o.Tools != nil {
		for _, t := range o.Tools {
			if tools != nil && !slices.Contains(tools, t) {
				errs = append(errs, fmt.Errorf("--tools: %q is not among the agent's tools (%s); --tools can only narrow them", t, strings.Join(tools, ", ")))
			}
		}
		tools = o.Tools
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if servers == nil {
		servers = []config.Server{}
	}
	return &Plan{Servers: servers, Tools: slices.Clone(tools)}, nil
}

// entryServer is the server an mcp_servers entry stands for.
func entryServer(cfg *config.Config, e ServerEntry) (config.Server, error) {
	if e.Ref == "" {
		if c, ok := cfg.Server(e.Server.ID); ok && !c.Equal(e.Server) {
			return config.Server{}, conflict(e, c.Source)
		}
		// An inline server's URL meets the configuration's [network]
		// policy, as a configured server's does.
		if err := cfg.CheckServerURL(e.Server); err != nil {
			return config.Server{}, err
		}
		return e.Server, nil
	}
	s, ok := cfg.Server(e.Ref)
	if !ok {
		return config.Server{}, &config.Problem{Pos: e.Pos, Field: e.Pos.Field + ".ref",
			Msg: fmt.Sprintf("no server %q in the configuration (%s)", e.Ref, known(nil, cfg))}
	}
	if e.ToolsAllowlist != nil {
		for _, t := range e.ToolsAllowlist {
			if s.ToolsAllowlist != nil && !slices.Contains(s.ToolsAllowlist, t) {
				return config.Server{}, &config.Problem{Pos: e.Pos, Field: e.Pos.Field + ".tools_allowlist",
					Msg: fmt.Sprintf("%q is not in server %q's own tools_allowlist (%s); an agent can only narrow it", t, s.ID, s.Source)}
			}
		}
		s.ToolsAllowlist = slices.Clone(e.ToolsAllowlist)
	}
	return s, nil
}

func known(own []config.Server, cfg *config.Config) string {
	var ids []string
	for _, s := range own {
		ids = append(ids, s.ID)
	}
	for _, s := range cfg.Servers {
		if !slices.Contains(ids, s.ID) {
			ids = append(ids, s.ID)
		}
	}
	if len(ids) == 0 {
		return "none configured"
	}
	return "known: " + strings.Join(ids, ", ")
}
