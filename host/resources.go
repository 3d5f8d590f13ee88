package host

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resource is a resource of one server.
type Resource struct {
	Server   string
	Resource *mcp.Resource
}

// ResourceTemplate is a resource template of one server.
type ResourceTemplate struct {
	Server   string
	Template *mcp.ResourceTemplate
}

// Prompt is a prompt of one server.
type Prompt struct {
	Server string
	Prompt *mcp.Prompt
}

// Resources lists the resources of every ready server that has any, in
// server order. Servers that fail to answer are reported in the error, which
// is returned with the resources of the others; a server that does not
// implement the method (JSON-RPC -32601) has none.
func (h *Host) Resources(ctx context.Context) ([]Resource, error) {
	return collect(h, ctx, "resources/list",
		func(c *mcp.ServerCapabilities) bool { return c.Resources != nil },
		func(ctx context.Context, s *server, cs *mcp.ClientSession) ([]Resource, error) {
			rs, err := paginate(ctx, func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
				res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return res.Resources, res.NextCursor, nil
			})
			rs = s.cleanedResources(rs)
			out := make([]Resource, len(rs))
			for i, r := range rs {
				out[i] = Resource{Server: s.cfg.ID, Resource: r}
			}
			return out, err
		})
}

// ResourceTemplates lists the resource templates of every ready server,
// like Resources: a server that declares resources but does not implement
// resources/templates/list has no templates.
func (h *Host) ResourceTemplates(ctx context.Context) ([]ResourceTemplate, error) {
	return collect(h, ctx, "resources/templates/list",
		func(c *mcp.ServerCapabilities) bool { return c.Resources != nil },
		func(ctx context.Context, s *server, cs *mcp.ClientSession) ([]ResourceTemplate, error) {
			ts, err := paginate(ctx, func(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
				res, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return res.ResourceTemplates, res.NextCursor, nil
			})
			ts = s.cleanedTemplates(ts)
			out := make([]ResourceTemplate, len(ts))
			for i, t := range ts {
				out[i] = ResourceTemplate{Server: s.cfg.ID, Template: t}
			}
			return out, err
		})
}

// Prompts lists the prompts of every ready server, like Resources.
func (h *Host) Prompts(ctx context.Context) ([]Prompt, error) {
	return collect(h, ctx, "prompts/list",
		func(c *mcp.ServerCapabilities) bool { return c.Prompts != nil },
		func(ctx context.Context, s *server, cs *mcp.ClientSession) ([]Prompt, error) {
			ps, err := paginate(ctx, func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
				res, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return res.Prompts, res.NextCursor, nil
			})
			ps = s.cleanedPrompts(ps)
			out := make([]Prompt, len(ps))
			for i, p := range ps {
				out[i] = Prompt{Server: s.cfg.ID, Prompt: p}
			}
			return out, err
		})
}

// ReadResource reads a resource from the named server.
func (h *Host) ReadResource(ctx context.Context, serverID, uri string) (*mcp.ReadResourceResult, error) {
	return h.ReadResourceWith(ctx, serverID, uri, nil)
}

// ReadResourceWith is ReadResource with options.
func (h *Host) ReadResourceWith(ctx context.Context, serverID, uri string, opts *RequestOptions) (*mcp.ReadResourceResult, error) {
	o := orNone(opts)
	return requestAs(h, ctx, serverID, "resources/read", uri, o.InputRequired, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.ReadResourceResult, error) {
		p := &mcp.ReadResourceParams{URI: uri, InputResponses: o.InputResponses, RequestState: o.RequestState}
		p.Meta = maps.Clone(o.Meta)
		return cs.ReadResource(ctx, p)
	})
}

func orNone(opts *RequestOptions) RequestOptions {
	if opts == nil {
		return RequestOptions{}
	}
	return *opts
}

// GetPrompt gets a prompt from the named server. When serverID is empty the
// prompt's name must belong to exactly one server.
func (h *Host) GetPrompt(ctx context.Context, serverID, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	return h.GetPromptWith(ctx, serverID, name, args, nil)
}

// GetPromptWith is GetPrompt with options.
func (h *Host) GetPromptWith(ctx context.Context, serverID, name string, args map[string]string, opts *RequestOptions) (*mcp.GetPromptResult, error) {
	o := orNone(opts)
	if serverID == "" {
		ps, err := h.Prompts(ctx)
		var owners []string
		for _, p := range ps {
			if p.Prompt.Name == name {
				owners = append(owners, p.Server)
			}
		}
		switch len(owners) {
		case 0:
			if err != nil {
				return nil, fmt.Errorf("no server has a prompt %q (some servers did not answer: %w)", name, err)
			}
			return nil, fmt.Errorf("no server has a prompt %q", name)
		case 1:
			serverID = owners[0]
		default:
			return nil, fmt.Errorf("prompt %q is offered by several servers (%s): name one", name, strings.Join(owners, ", "))
		}
	}
	return requestAs(h, ctx, serverID, "prompts/get", name, o.InputRequired, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.GetPromptResult, error) {
		p := &mcp.GetPromptParams{Name: name, Arguments: args, InputResponses: o.InputResponses, RequestState: o.RequestState}
		p.Meta = maps.Clone(o.Meta)
		return cs.GetPrompt(ctx, p)
	})
}

// request sends one request to one server, bounded by its timeout.
func request[R any](h *Host, ctx context.Context, serverID, method, target string, do func(context.Context, *mcp.ClientSession) (R, error)) (R, error) {
	return requestAs(h, ctx, serverID, method, target, false, do)
}

// requestAs is request on the server's own connection, or on its
// 2026-07-28 one (inputRequired; see generation.go).
func requestAs[R any](h *Host, ctx context.Context, serverID, method, target string, inputRequired bool, do func(context.Context, *mcp.ClientSession) (R, error)) (R, error) {
	var zero R
	s, err := h.server(serverID)
	if err != nil {
		return zero, err
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(s.cfg.Timeout, func() { cancel(ErrTimeout) })
	defer timer.Stop()
	cs, err := s.liveSession(cctx)
	var ir *irConn
	if err == nil && inputRequired {
		if ir, err = s.inputRequiredConn(cctx); ir != nil {
			cs = ir.cs
		}
	}
	if err != nil {
		return zero, &CallError{Server: s.cfg.ID, Method: method, Target: target, Err: h.redactErr(err)}
	}
	start := time.Now()
	r, err := do(cctx, cs)
	if err != nil {
		return zero, &CallError{Server: s.cfg.ID, Method: method, Target: target, Duration: time.Since(start), Timeout: s.cfg.Timeout, Err: h.redactErr(h.callFailure(s, ir, ctx, cctx, err))}
	}
	return r, nil
}

// collect asks every ready server that has the capability, concurrently.
// A server that did not declare the capability, or answers that it does
// not implement the method, has none: not an error.
func collect[T any](h *Host, ctx context.Context, method string, has func(*mcp.ServerCapabilities) bool, list func(context.Context, *server, *mcp.ClientSession) ([]T, error)) ([]T, error) {
	results := make([][]T, len(h.servers))
	errs := make([]error, len(h.servers))
	var wg sync.WaitGroup
	for i, s := range h.servers {
		cs := s.current()
		if cs == nil {
			continue // not ready: Servers() says why
		}
		if init := cs.InitializeResult(); init != nil && init.Capabilities != nil && !has(init.Capabilities) {
			continue
		}
		wg.Go(func() {
			results[i], errs[i] = request(h, ctx, s.cfg.ID, method, "", func(ctx context.Context, cs *mcp.ClientSession) ([]T, error) {
				return list(ctx, s, cs)
			})
			if notImplemented(errs[i]) {
				s.log.Debug("the server does not implement an optional method: none", "method", method)
				results[i], errs[i] = nil, nil
			}
		})
	}
	wg.Wait()
	var out []T
	for _, r := range results {
		out = append(out, r...)
	}
	return out, errors.Join(errs...)
}

// notImplemented reports whether err is a server's answer that it does not
// implement the method (JSON-RPC -32601, "method not found"). For an
// optional method that means the server has none of what was asked, which
// is not a failure.
func notImplemented(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.CodeMethodNotFound
}
