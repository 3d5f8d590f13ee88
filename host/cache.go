package host

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/schema"
)

// The tool-list cache lets a lazy server offer its tools before it is
// started. One file per server under Options.CacheDir, named by the server id
// and a hash of its launch spec: transport, command, args, cwd, url, and the
// names (never the values) of its env and headers. A changed spec is a
// different file, so a stale list is never used for a changed server. Every
// successful listing rewrites it; a server's own list lifetime (2026-07-28
// ttlMs) bounds how long it is trusted.

// toolCache is what a cache file holds.
type toolCache struct {
	Version int         `json:"version"`
	Server  string      `json:"server"`
	Spec    string      `json:"spec"`
	Saved   time.Time   `json:"saved"`
	TTLMs   int         `json:"ttl_ms,omitempty"`
	Tools   []*mcp.Tool `json:"tools"`
}

const cacheVersion = 1

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

func (s *server) cacheFile() string {
	if s.h.opts.CacheDir == "" || s.cfg.Transport == transportInProcess {
		return ""
	}
	return filepath.Join(s.h.opts.CacheDir, "tools", s.cfg.ID+"-"+specHash(s.cfg)+".json")
}

// loadCache returns the cached tools if there is a fresh list for this spec.
func (s *server) loadCache(now time.Time) ([]*mcp.Tool, bool) {
	file := s.cacheFile()
	if file == "" {
		return nil, false
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, false
	}
	var c toolCache
	if err := json.Unmarshal(raw, &c); err != nil || c.Version != cacheVersion || c.Spec != specHash(s.cfg) {
		return nil, false
	}
	if c.TTLMs > 0 && now.After(c.Saved.Add(time.Duration(c.TTLMs)*time.Millisecond)) {
		return nil, false
	}
	return c.Tools, true
}

// saveCache records the server's tools, atomically. Failures are logged:
// the cache only saves time.
func (s *server) saveCache(tools []discovered, ttlMs int) {
	file := s.cacheFile()
	if file == "" {
		return
	}
	c := toolCache{Version: cacheVersion, Server: s.cfg.ID, Spec: specHash(s.cfg), Saved: time.Now().UTC(), TTLMs: ttlMs}
	for _, d := range tools {
		c.Tools = append(c.Tools, d.tool)
	}
	err := func() error {
		raw, err := json.Marshal(c)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return err
		}
		tmp, err := os.CreateTemp(filepath.Dir(file), ".tools-*")
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		if _, err := tmp.Write(raw); err != nil {
			tmp.Close()
			return err
		}
		if err := tmp.Close(); err != nil {
			return err
		}
		return os.Rename(tmp.Name(), file)
	}()
	if err != nil {
		s.log.Warn("saving the tool cache", "file", file, "err", err)
	}
}

// startLazy makes a lazy server with a fresh cached list lazy-idle, offering
// the cached tools; it reports whether it did.
func (s *server) startLazy() bool {
	if !s.cfg.Lazy {
		return false
	}
	tools, ok := s.loadCache(time.Now())
	if !ok {
		return false // the first run of a server always connects
	}
	s.mu.Lock()
	s.tools = compileTools(tools)
	s.mu.Unlock()
	s.setState(StateLazy, nil)
	s.log.Info("lazy: offering cached tools until a call needs the server", "tools", len(tools))
	return true
}

// compileTools compiles each tool's input schema.
func compileTools(tools []*mcp.Tool) []discovered {
	out := make([]discovered, len(tools))
	for i, t := range tools {
		out[i].tool = t
		raw, err := json.Marshal(t.InputSchema)
		if err != nil {
			out[i].err = fmt.Errorf("input schema: %w", err)
			continue
		}
		out[i].schema, out[i].err = schema.Compile(raw)
	}
	return out
}
