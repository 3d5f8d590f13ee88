package host

import (
	"context"
	"fmt"
	"maps"
	"strings"

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
			if err == nil { // a failed listing keeps what the last one found
				rs = s.cleanedResources(rs)
			}
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
			if err == nil { // a failed listing keeps what the last one found
				ts = s.cleanedTemplates(ts)
			}
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
			if err == nil { // a failed listing keeps what the last one found
				ps = s.cleanedPrompts(ps)
			}
			out := make([]Prompt, len(ps))
			for i, p := range ps {
				out[i] = Prompt{Server: s.cfg.ID, Prompt: p}
			}
			return out, err
		})
}

// ReadResource reads a resource from the named server, bounded by its
// timeout. opts may be nil.
func (h *Host) ReadResource(ctx context.Context, serverID, uri string, opts *RequestOptions) (*mcp.ReadResourceResult, error) {
	o := orNone(opts)
	if err := h.heldBack(serverID, "resources/read", FindingResource, uri); err != nil {
		return nil, err
	}
	return requestAs(h, ctx, serverID, "resources/read", uri, o.InputRequired, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.ReadResourceResult, error) {
		p := &mcp.ReadResourceParams{URI: uri, InputResponses: o.InputResponses, RequestState: o.RequestState}
		p.Meta = maps.Clone(o.Meta)
		return cs.ReadResource(ctx, p)
	})
}

// heldBack refuses a prompt or resource that the server's scan setting
// holds back or drops (scan.go), saying why; nil for any other, or an
// unknown server (which the request reports).
func (h *Host) heldBack(serverID, method, kind, id string) error {
	s, err := h.server(serverID)
	if err != nil {
		return nil
	}
	if why := s.heldDeclared(kind, id); why != "" {
		return &CallError{Server: serverID, Method: method, Target: shown(id), Err: fmt.Errorf("not offered: %s", why)}
	}
	return nil
}

func orNone(opts *RequestOptions) RequestOptions {
	if opts == nil {
		return RequestOptions{}
	}
	return *opts
}

// GetPrompt gets a prompt from the named server, bounded by its timeout.
// When serverID is empty the prompt's name must belong to exactly one
// server. opts may be nil.
func (h *Host) GetPrompt(ctx context.Context, serverID, name string, args map[string]string, opts *RequestOptions) (*mcp.GetPromptResult, error) {
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
	if err := h.heldBack(serverID, "prompts/get", FindingPrompt, name); err != nil {
		return nil, err
	}
	return requestAs(h, ctx, serverID, "prompts/get", name, o.InputRequired, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.GetPromptResult, error) {
		p := &mcp.GetPromptParams{Name: name, Arguments: args, InputResponses: o.InputResponses, RequestState: o.RequestState}
		p.Meta = maps.Clone(o.Meta)
		return cs.GetPrompt(ctx, p)
	})
}
