package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/yosida95/uritemplate/v3"

	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
)

// resourceOwner is the server that can have uri: the only one that lists
// it, else the only one with a template it matches, else the only server.
// Several, or none, is an error saying what to pass (--server).
func resourceOwner(ctx context.Context, h backend, uri string) (string, error) {
	rs, err1 := h.Resources(ctx)
	var listed []string
	for _, r := range rs {
		if r.Resource.URI == uri && !slices.Contains(listed, r.Server) {
			listed = append(listed, r.Server)
		}
	}
	switch len(listed) {
	case 1:
		return listed[0], nil
	case 0:
	default:
		return "", daemon.KindUnknownResource.Errorf("several servers list %s (%s); pass --server ID", uri, strings.Join(listed, ", "))
	}
	ts, err2 := h.ResourceTemplates(ctx)
	var matched []string
	for _, t := range ts {
		if matchTemplate(t.Template.URITemplate, uri) && !slices.Contains(matched, t.Server) {
			matched = append(matched, t.Server)
		}
	}
	switch len(matched) {
	case 1:
		return matched[0], nil
	case 0:
	default:
		return "", daemon.KindUnknownResource.Errorf("%s matches the resource templates of several servers (%s); pass --server ID", uri, strings.Join(matched, ", "))
	}
	servers := h.Servers()
	if len(servers) == 1 {
		return servers[0].ID, nil // it may serve URIs it does not list
	}
	var ids []string
	for _, s := range servers {
		ids = append(ids, s.ID)
	}
	msg := fmt.Sprintf("no server lists %s or a resource template it matches (servers: %s); pass --server ID", uri, strings.Join(ids, ", "))
	if err := errors.Join(err1, err2); err != nil {
		msg += fmt.Sprintf("; some did not answer: %v", err)
	}
	return "", daemon.KindUnknownResource.Errorf("%s", msg)
}

// matchTemplate reports whether uri is an instance of the RFC 6570
// template tmpl.
func matchTemplate(tmpl, uri string) bool {
	if !strings.ContainsRune(tmpl, '{') {
		return tmpl == uri
	}
	t, err := uritemplate.New(tmpl)
	return err == nil && t.Match(uri) != nil
}

// promptRoute is a prompt as the CLI names it and the server that has it.
type promptRoute struct {
	server, name string // the server's own name for it
}

// findPrompt resolves a prompt name as the gateway publishes it
// (mcp_{server}_{prompt}, the tools' format), or as its server names it
// when only one server has it; server, when set, limits the search to that
// server.
func findPrompt(ctx context.Context, h backend, name, server string) (promptRoute, error) {
	ps, lerr := h.Prompts(ctx)
	format := h.ToolNameFormat()
	var raw []promptRoute
	var cands []candidate
	for _, p := range ps {
		if server != "" && p.Server != server {
			continue
		}
		hostName := host.ToolName(format, p.Server, p.Prompt.Name)
		if hostName == name {
			return promptRoute{p.Server, p.Prompt.Name}, nil
		}
		if p.Prompt.Name == name {
			raw = append(raw, promptRoute{p.Server, p.Prompt.Name})
		}
		cands = append(cands, candidate{name: hostName, alias: []string{p.Prompt.Name}})
	}
	switch len(raw) {
	case 1:
		return raw[0], nil
	case 0:
		if server != "" && lerr == nil {
			// The server may have prompts it does not list; ask it.
			return promptRoute{server, name}, nil
		}
		msg := fmt.Sprintf("no server has a prompt %q; run 'switchboard prompts' to list them%s", name, didYouMean(name, cands))
		if lerr != nil {
			msg += fmt.Sprintf(" (some servers did not answer: %v)", lerr)
		}
		return promptRoute{}, daemon.KindUnknownPrompt.Errorf("%s", msg)
	}
	var names []string
	for _, r := range raw {
		names = append(names, host.ToolName(format, r.server, r.name))
	}
	return promptRoute{}, daemon.KindUnknownPrompt.Errorf("several servers have a prompt %q: name one of %s, or pass --server ID", name, strings.Join(names, ", "))
}
