package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/schema"
	"github.com/switchboardmcp/switchboard/toolscan"
)

// The tool-list cache lets a lazy server offer its tools before it is
// started. Options.ToolCache (a *store.Store in the CLI and the daemon)
// keeps one list per server under a hash of its launch spec: transport,
// command, args, cwd, url, and the names (never the values) of its env and
// headers. A changed spec is a different key, so a stale list is never used
// for a changed server. Every successful listing rewrites it; a server's
// own list lifetime (2026-07-28 ttlMs) bounds how long it is trusted.

// A ToolCache keeps servers' tool lists between runs. *store.Store is one.
// Its methods are called from the server's own goroutines and must be safe
// for concurrent use; an error only costs the cache.
type ToolCache interface {
	// LoadTools returns the list saved for server under spec, when it was
	// saved and the lifetime the server gave it (0: none); an error when
	// there is none.
	LoadTools(ctx context.Context, server, spec string) (tools json.RawMessage, saved time.Time, ttl time.Duration, err error)
	// SaveTools replaces the list saved for server.
	SaveTools(ctx context.Context, server, spec string, tools json.RawMessage, ttl time.Duration) error
}

// cacheTimeout bounds one cache read or write: the cache saves time, it
// must never cost more than it saves (a locked database, a slow disk).
const cacheTimeout = 5 * time.Second

// specHash identifies a server's launch spec without any secret value.
func specHash(s config.Server) string {
	keys := func(m map[string]string) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	spec := struct {
		Transport config.Transport
		Command   string
		Args      []string
		Cwd       string
		URL       string
		Env       []string
		Headers   []string
	}{s.Transport, s.Command, s.Args, s.Cwd, s.URL, keys(s.Env), keys(s.Headers)}
	raw, _ := json.Marshal(spec)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])[:16]
}

func (s *server) cache() ToolCache {
	if s.cfg.Transport == TransportInProcess {
		return nil
	}
	return s.h.opts.ToolCache
}

// cachedList is what the cache holds for a server: its tools as cleaned,
// and what the scanner found in each (by index; a tool without findings
// has no entry) under toolscan.Version, so that a start offering the list
// need not scan it again (240 cached tools took a quarter of the CPU of
// `switchboard tools` over 20 lazy servers: docs/performance.md). A list
// saved as a bare array (before findings were kept), or under another
// version of the scanner, is scanned when it is loaded.
type cachedList struct {
	Tools    []*mcp.Tool                `json:"tools"`
	Scanner  string                     `json:"scanner"`
	Findings map[int][]toolscan.Finding `json:"findings,omitempty"`
}

// loadCache returns the cached tools if there is a fresh list for this
// spec, and what the scanner found in them when they were saved (nil when
// that is not known: they must be scanned).
func (s *server) loadCache(now time.Time) ([]*mcp.Tool, map[int][]toolscan.Finding, bool) {
	c := s.cache()
	if c == nil {
		return nil, nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), cacheTimeout)
	defer cancel()
	raw, saved, ttl, err := c.LoadTools(ctx, s.cfg.ID, specHash(s.cfg))
	if err != nil {
		return nil, nil, false
	}
	if ttl > 0 && now.After(saved.Add(ttl)) {
		return nil, nil, false
	}
	var list cachedList
	if raw = bytes.TrimLeft(raw, " \t\r\n"); len(raw) > 0 && raw[0] == '[' {
		err = json.Unmarshal(raw, &list.Tools) // saved before findings were kept
	} else {
		err = json.Unmarshal(raw, &list)
	}
	if err != nil {
		s.log.Warn("ignoring an unreadable cached tool list", "err", err)
		return nil, nil, false
	}
	if list.Scanner != toolscan.Version {
		return list.Tools, nil, true
	}
	if list.Findings == nil {
		list.Findings = map[int][]toolscan.Finding{}
	}
	return list.Tools, list.Findings, true
}

// saveCache records the server's tools as cleaned (out), with what the
// scanner finds in them. scanned is what it found in each tool as listed
// (tools, before cleaning): a tool cleaning left as it was has those
// findings; one it changed is scanned again as the cache will hold it.
// Failures are logged: the cache only saves time.
func (s *server) saveCache(tools []*mcp.Tool, out []discovered, scanned map[int][]toolscan.Finding, ttlMs int) {
	c := s.cache()
	if c == nil {
		return
	}
	list := cachedList{Tools: make([]*mcp.Tool, len(out)), Scanner: toolscan.Version, Findings: map[int][]toolscan.Finding{}}
	var changed []int
	for i, d := range out {
		list.Tools[i] = d.tool
		switch {
		case d.tool != tools[i]:
			changed = append(changed, i)
		case len(scanned[i]) > 0:
			list.Findings[i] = scanned[i]
		}
	}
	raw, err := json.Marshal(list.Tools)
	if err == nil && len(changed) > 0 {
		// Scanned as a later start reads them: decoded from the cache.
		var back []*mcp.Tool
		if err = json.Unmarshal(raw, &back); err == nil {
			for _, i := range changed {
				if fs := scanTool(back[i]); len(fs) > 0 {
					list.Findings[i] = fs
				}
			}
		}
	}
	if err == nil {
		raw, err = json.Marshal(list)
	}
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), cacheTimeout)
		err = c.SaveTools(ctx, s.cfg.ID, specHash(s.cfg), raw, time.Duration(ttlMs)*time.Millisecond)
		cancel()
	}
	if err != nil {
		s.log.Warn("saving the tool cache", "err", err)
	}
}

// startLazy makes a lazy server with a fresh cached list lazy-idle, offering
// the cached tools; it reports whether it did.
func (s *server) startLazy() bool {
	if !s.cfg.Lazy {
		return false
	}
	tools, known, ok := s.loadCache(time.Now())
	if !ok {
		return false // the first run of a server always connects
	}
	pins := s.pinChecks.Load() // before the list is pinned: storeTools
	compiled, _ := s.discover(tools, known)
	s.mu.Lock()
	repin := s.storeTools(compiled, pins)
	s.mu.Unlock()
	if repin {
		s.h.recheckPins(s)
	}
	s.offer(StateLazy)
	s.log.Info("lazy: offering cached tools until a call needs the server", "tools", len(tools))
	return true
}

// compileTools cleans each tool's text and compiles its input schema, and
// says what cleaning changed. A tool without an input schema (null or
// missing: the go-sdk reads both as nil) is refused like one whose schema
// does not compile: MCP requires an object schema, and without one the
// host could not check a call's arguments. A schema that is not an object
// schema (a string, "type": "array") does not compile.
func (l *limits) compileTools(tools []*mcp.Tool) ([]discovered, []string) {
	out := make([]discovered, len(tools))
	var notes []string
	for i, t := range tools {
		out[i].tool = t
		if t == nil {
			out[i].tool = &mcp.Tool{}
			out[i].refused = "the server listed null for a tool"
			continue
		}
		ct, note, refused := l.cleanTool(t)
		if refused != "" {
			out[i].refused = refused
			continue
		}
		out[i].tool = ct
		if note != "" {
			notes = append(notes, note)
		}
		if ct.InputSchema == nil {
			out[i].refused = "no input schema (null or missing): MCP requires an object schema, and without one the arguments cannot be checked"
			continue
		}
		raw, err := json.Marshal(ct.InputSchema)
		if err != nil {
			out[i].err = fmt.Errorf("input schema: %w", err)
			continue
		}
		out[i].schema, out[i].err = schema.Compile(raw)
	}
	return out, notes
}

// ReloadCachedTools makes lazy server id, when it is not started
// (lazy-idle), offer the list its ToolCache holds now: another process
// sharing the cache (a replica that started the server) saw its tools
// change. It reports whether it took a list; a server in any other state
// is left alone (a started one lists its own: RefreshTools).
func (h *Host) ReloadCachedTools(id string) (bool, error) {
	s, err := h.server(id)
	if err != nil {
		return false, err
	}
	if s.status().State != StateLazy {
		return false, nil
	}
	tools, known, ok := s.loadCache(time.Now())
	if !ok {
		return false, nil
	}
	pins := s.pinChecks.Load() // before the list is pinned: storeTools
	compiled, _ := s.discover(tools, known)
	s.mu.Lock()
	if s.state != StateLazy {
		s.mu.Unlock()
		return false, nil // it started meanwhile, and lists its own
	}
	repin := s.storeTools(compiled, pins)
	s.mu.Unlock()
	if repin {
		defer s.h.recheckPins(s)
	}
	h.catalogMu.Lock()
	h.rebuildCatalog()
	h.catalogMu.Unlock()
	s.log.Info("lazy: offering the cached tools another process saved", "tools", len(tools))
	h.changed(Change{Server: id, Kind: ToolsChanged})
	return true, nil
}
