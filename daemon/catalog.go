package daemon

// The host's catalog as the faces show it: its tools, resources, resource
// templates and prompts, each with the id of the server that offers it,
// and the requests that read a resource and get a prompt. The REST API
// (/api/v1/) answers with these, so that a CLI command, a script and the
// web UI see the same thing.

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/host"
)

// ToolItem is a host.Tool: its host name, its server and the tool as the
// server described it (with the host's name).
type ToolItem struct {
	Name   string    `json:"name"`
	Server string    `json:"server"`
	Tool   *mcp.Tool `json:"tool"`
}

// ResourceItem is a host.Resource.
type ResourceItem struct {
	Server   string        `json:"server"`
	Resource *mcp.Resource `json:"resource"`
}

// TemplateItem is a host.ResourceTemplate.
type TemplateItem struct {
	Server   string                `json:"server"`
	Template *mcp.ResourceTemplate `json:"template"`
}

// PromptItem is a host.Prompt.
type PromptItem struct {
	Server string      `json:"server"`
	Prompt *mcp.Prompt `json:"prompt"`
}

// ReadRequest reads a resource from a server (host.Host.ReadResource).
type ReadRequest struct {
	Server string `json:"server"`
	URI    string `json:"uri"`
}

// PromptRequest gets a prompt (host.Host.GetPrompt); Server "" means the
// one server that has a prompt of that name.
type PromptRequest struct {
	Server    string            `json:"server"`
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// Read answers r from h.
func (r ReadRequest) Read(ctx context.Context, h *host.Host) (*mcp.ReadResourceResult, error) {
	return h.ReadResource(ctx, r.Server, r.URI, nil)
}

// Get answers r from h.
func (r PromptRequest) Get(ctx context.Context, h *host.Host) (*mcp.GetPromptResult, error) {
	return h.GetPrompt(ctx, r.Server, r.Name, r.Arguments, nil)
}

// ResourceItems lists the resources of h's ready servers; the error names
// the servers that failed to answer, and comes with the others' resources.
func ResourceItems(ctx context.Context, h *host.Host) ([]ResourceItem, error) {
	rs, err := h.Resources(ctx)
	out := make([]ResourceItem, len(rs))
	for i, x := range rs {
		out[i] = ResourceItem{x.Server, x.Resource}
	}
	return out, err
}

// TemplateItems lists the resource templates of h's ready servers, like
// ResourceItems.
func TemplateItems(ctx context.Context, h *host.Host) ([]TemplateItem, error) {
	ts, err := h.ResourceTemplates(ctx)
	out := make([]TemplateItem, len(ts))
	for i, x := range ts {
		out[i] = TemplateItem{x.Server, x.Template}
	}
	return out, err
}

// PromptItems lists the prompts of h's ready servers, like ResourceItems.
func PromptItems(ctx context.Context, h *host.Host) ([]PromptItem, error) {
	ps, err := h.Prompts(ctx)
	out := make([]PromptItem, len(ps))
	for i, x := range ps {
		out[i] = PromptItem{x.Server, x.Prompt}
	}
	return out, err
}
