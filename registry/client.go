package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboardmcp/switchboard/netguard"
)

// Bounds of what a Client reads.
const (
	// DefaultMaxBytes bounds one answer: a page of 100 server.json
	// documents is a few hundred KiB; a registry must not fill memory.
	DefaultMaxBytes = 8 << 20
	// DefaultMaxPages bounds the pages one search follows (100 entries
	// each): a registry whose cursors never end must not hold the caller.
	DefaultMaxPages = 10
	// DefaultTimeout bounds one request.
	DefaultTimeout = 30 * time.Second
	pageSize       = 100
)

// Options configure a [Client]; nil means the defaults.
type Options struct {
	// Token, when set, is sent as a bearer token (already resolved from
	// its placeholder; never logged).
	Token string
	// CacheDir, when set, keeps each answer with its ETag there, and asks
	// the registry with If-None-Match next time.
	CacheDir string
	// MaxBytes bounds one answer; 0 means DefaultMaxBytes.
	MaxBytes int64
	// MaxPages bounds the pages a search follows; 0 means DefaultMaxPages.
	MaxPages int
	// Network is the operator's network policy (nil: the floor alone).
	Network *netguard.Network
	// HTTPClient replaces the guarded client (tests of the client alone).
	HTTPClient *http.Client
}

// A Client reads one registry. It is safe for concurrent use.
type Client struct {
	base  *url.URL
	opts  Options
	hc    *http.Client
	label string
}

// New returns a client of the registry at baseURL (without /v0.1). Every
// request goes through a [netguard.Dialer]; a registry on a loopback
// address (a local sub-registry) is admitted at exactly its host:port.
func New(baseURL string, opts *Options) (*Client, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxPages <= 0 {
		o.MaxPages = DefaultMaxPages
	}
	u, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("registry %q: not an http(s) URL", baseURL)
	}
	u.Path = strings.TrimSuffix(u.Path, "/v0.1")
	c := &Client{base: u, opts: o, hc: o.HTTPClient, label: u.String()}
	if c.hc == nil {
		local := netguard.IsLoopbackName(u.Hostname())
		if a, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && a.IsLoopback() {
			local = true
		}
		if err := o.Network.CheckURL(u.String(), local); err != nil {
			return nil, fmt.Errorf("registry %s: %w", c.label, err)
		}
		d := &netguard.Dialer{}
		if local {
			d.AllowLocal, err = netguard.LocalEndpoint(context.Background(), nil, u.String())
			if err != nil {
				return nil, fmt.Errorf("registry %s: %w", c.label, err)
			}
		}
		rp := &netguard.RedirectPolicy{AllowLocal: local, Network: o.Network}
		c.hc = &http.Client{Transport: netguard.NewHTTPTransport(d), CheckRedirect: rp.CheckRedirect, Timeout: DefaultTimeout}
	}
	return c, nil
}

// URL is the registry's base URL.
func (c *Client) URL() string { return c.label }

// wire shapes of the API.
type wireEntry struct {
	Server json.RawMessage            `json:"server"`
	Meta   map[string]json.RawMessage `json:"_meta"`
}

type wireList struct {
	Servers  []wireEntry `json:"servers"`
	Metadata struct {
		NextCursor string `json:"nextCursor"`
		Count      int    `json:"count"`
	} `json:"metadata"`
}

// Search lists the latest version of each server whose name contains
// query (every server when query is ""), following the registry's cursors
// up to MaxPages pages.
//
// With a CacheDir, the result is kept with the latest updatedAt among its
// entries, and the next search of the same query asks the registry only
// for what changed since (updated_since, which also returns the versions
// deleted meanwhile), merged into what was kept: a search repeated against
// a large registry transfers its changes, not the whole list.
func (c *Client) Search(ctx context.Context, query string) ([]Entry, error) {
	idx := c.loadIndex(query)
	q := url.Values{"version": {"latest"}}
	if idx != nil {
		q.Set("updated_since", idx.Since)
	}
	ws, err := c.list(ctx, query, q)
	if err != nil {
		return nil, err
	}
	if idx != nil {
		// Merge by name: a changed server replaces its entry, a deleted
		// or superseded one leaves.
		byName := map[string]int{}
		for i, w := range idx.Servers {
			byName[nameOf(w.Server)] = i
		}
		for _, w := range ws {
			n := nameOf(w.Server)
			e := c.entry(w)
			keep := e.Status() != StatusDeleted && (e.Official.IsLatest || e.Official.PublishedAt == "")
			if i, ok := byName[n]; ok {
				if keep {
					idx.Servers[i] = w
				} else if e.Official.IsLatest || e.Status() == StatusDeleted {
					idx.Servers[i] = wireEntry{}
				}
				continue
			}
			if keep {
				byName[n] = len(idx.Servers)
				idx.Servers = append(idx.Servers, w)
			}
		}
		ws = ws[:0]
		for _, w := range idx.Servers {
			if w.Server != nil {
				ws = append(ws, w)
			}
		}
	}
	c.storeIndex(query, ws)
	out := make([]Entry, 0, len(ws))
	for _, w := range ws {
		out = append(out, c.entry(w))
	}
	return out, nil
}

// list reads every page of /v0.1/servers for query with the filters q.
func (c *Client) list(ctx context.Context, query string, q url.Values) ([]wireEntry, error) {
	var out []wireEntry
	cursor := ""
	for page := 0; ; page++ {
		if page == c.opts.MaxPages {
			return out, fmt.Errorf("registry %s: more than %d pages of results; narrow the search", c.label, c.opts.MaxPages)
		}
		q.Set("limit", fmt.Sprint(pageSize))
		if query != "" {
			q.Set("search", query)
		}
		q.Del("cursor")
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var l wireList
		if err := c.getJSON(ctx, "/v0.1/servers", q, &l); err != nil {
			return out, err
		}
		out = append(out, l.Servers...)
		if l.Metadata.NextCursor == "" || l.Metadata.NextCursor == cursor {
			return out, nil
		}
		cursor = l.Metadata.NextCursor
	}
}

func nameOf(server json.RawMessage) string {
	var s struct {
		Name string `json:"name"`
	}
	json.Unmarshal(server, &s)
	return s.Name
}

// searchIndex is a search's result kept in CacheDir, with the watermark
// the next search asks for changes since: the latest updatedAt among the
// entries, by the registry's clock.
type searchIndex struct {
	URL     string      `json:"url"`
	Query   string      `json:"query"`
	Since   string      `json:"since"`
	Servers []wireEntry `json:"servers"`
}

func (c *Client) indexFile(query string) string {
	if c.opts.CacheDir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(c.label + "\x00search\x00" + query))
	return filepath.Join(c.opts.CacheDir, "search-"+hex.EncodeToString(sum[:16])+".json")
}

func (c *Client) loadIndex(query string) *searchIndex {
	f := c.indexFile(query)
	if f == "" {
		return nil
	}
	data, err := os.ReadFile(f)
	if err != nil || int64(len(data)) > int64(c.opts.MaxPages)*c.opts.MaxBytes {
		return nil
	}
	var x searchIndex
	if json.Unmarshal(data, &x) != nil || x.URL != c.label || x.Query != query || x.Since == "" {
		return nil
	}
	return &x
}

func (c *Client) storeIndex(query string, ws []wireEntry) {
	f := c.indexFile(query)
	if f == "" {
		return
	}
	var since time.Time
	for _, w := range ws {
		var o Official
		if raw, ok := w.Meta[OfficialMeta]; ok && json.Unmarshal(raw, &o) == nil {
			t, err := time.Parse(time.RFC3339Nano, o.UpdatedAt)
			if err != nil {
				// Without every entry's time there is no safe
				// watermark: the next search reads the whole list.
				os.Remove(f)
				return
			}
			if t.After(since) {
				since = t
			}
		}
	}
	if since.IsZero() {
		os.Remove(f)
		return
	}
	data, err := json.Marshal(searchIndex{URL: c.label, Query: query, Since: since.UTC().Format(time.RFC3339Nano), Servers: ws})
	if err != nil {
		return
	}
	c.store(f, cached{}, data)
}

// Get returns one version of server name; version "latest" is the latest.
// A deleted entry is returned too (with its status), so that the caller
// can say why it will not install it. A server or version the registry
// does not have is an error matching [ErrNotFound].
func (c *Client) Get(ctx context.Context, name, version string) (Entry, error) {
	if version == "" {
		version = "latest"
	}
	var w wireEntry
	p := "/v0.1/servers/" + url.PathEscape(name) + "/versions/" + url.PathEscape(version)
	if err := c.getJSON(ctx, p, url.Values{"include_deleted": {"true"}}, &w); err != nil {
		if errors.Is(err, ErrNotFound) {
			return Entry{}, fmt.Errorf("registry %s: %s version %s: %w", c.label, name, version, ErrNotFound)
		}
		return Entry{}, err
	}
	return c.entry(w), nil
}

// entry decodes and validates one entry of an answer.
func (c *Client) entry(w wireEntry) Entry {
	e := Entry{Raw: w.Server, Registry: c.label}
	e.Server, e.Invalid = Validate(w.Server)
	if raw, ok := w.Meta[OfficialMeta]; ok {
		if err := json.Unmarshal(raw, &e.Official); err != nil && e.Invalid == nil {
			e.Invalid = fmt.Errorf("_meta %s: %v", OfficialMeta, err)
		}
	}
	return e
}

// cached is an answer kept in CacheDir.
type cached struct {
	URL  string          `json:"url"`
	ETag string          `json:"etag"`
	Body json.RawMessage `json:"body"`
}

// getJSON GETs path?q and decodes the JSON answer into v, through the
// cache.
func (c *Client) getJSON(ctx context.Context, path string, q url.Values, v any) error {
	// path is escaped (a server name's slash is %2F).
	plain, err := url.PathUnescape(path)
	if err != nil {
		return fmt.Errorf("registry %s: %w", c.label, err)
	}
	u := *c.base
	u.Path = c.base.Path + plain
	u.RawPath = c.base.EscapedPath() + path
	u.RawQuery = q.Encode()
	target := u.String()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("registry %s: %w", c.label, err)
	}
	req.Header.Set("Accept", "application/json")
	if c.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.Token)
	}
	var old *cached
	cacheFile := ""
	if c.opts.CacheDir != "" {
		sum := sha256.Sum256([]byte(target))
		cacheFile = filepath.Join(c.opts.CacheDir, hex.EncodeToString(sum[:16])+".json")
		if data, err := os.ReadFile(cacheFile); err == nil {
			var x cached
			if json.Unmarshal(data, &x) == nil && x.URL == target && x.ETag != "" {
				old = &x
				req.Header.Set("If-None-Match", x.ETag)
			}
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("registry %s: %w", c.label, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxBytes+1))
	if err != nil {
		return fmt.Errorf("registry %s: reading the answer: %w", c.label, err)
	}
	if int64(len(body)) > c.opts.MaxBytes {
		return fmt.Errorf("registry %s: answer larger than %d bytes (GET %s)", c.label, c.opts.MaxBytes, path)
	}
	switch {
	case resp.StatusCode == http.StatusNotModified && old != nil:
		body = old.Body
	case resp.StatusCode == http.StatusNotFound:
		return ErrNotFound
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("registry %s: %s: the registry wants a token (token = \"{{secrets.NAME}}\" in its [[registries]] table)", c.label, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("registry %s: GET %s: %s", c.label, path, resp.Status)
	default:
		if et := resp.Header.Get("ETag"); et != "" && cacheFile != "" && json.Valid(body) {
			c.store(cacheFile, cached{URL: target, ETag: et, Body: body})
		}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("registry %s: GET %s: not a registry answer: %v", c.label, path, err)
	}
	return nil
}

// store writes one cache file (x, or raw when given); a cache that
// cannot be written only costs the next request its If-None-Match.
func (c *Client) store(file string, x cached, raw ...[]byte) {
	data, err := json.Marshal(x)
	if len(raw) > 0 {
		data, err = raw[0], nil
	}
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return
	}
	tmp := file + ".tmp"
	if os.WriteFile(tmp, data, 0o600) == nil {
		os.Rename(tmp, file)
	}
}

// Named is a client with the name the configuration gives its registry
// ([[registries]] name), as the REST API and the web UI list them.
type Named struct {
	Name   string
	Client *Client
}

// A Summary is an entry as a search lists it, in the one shape the faces
// show (switchboard search --json, GET /api/v1/registry/search, the web
// UI's Registry page).
type Summary struct {
	Registry      string   `json:"registry"`
	Name          string   `json:"name"`
	Description   string   `json:"description"`
	Version       string   `json:"version"`
	Kinds         []string `json:"kinds"`
	Status        string   `json:"status"`
	StatusMessage string   `json:"status_message,omitempty"`
	// Invalid says why the entry does not validate against the
	// server.json schema; it is never converted.
	Invalid string `json:"invalid,omitempty"`
}

// Summarize is entry e of the registry named registry as a search lists it.
func Summarize(registry string, e Entry) Summary {
	s := Summary{Registry: registry, Name: e.Server.Name, Description: e.Server.Description, Version: e.Server.Version,
		Kinds: e.Server.Kinds(), Status: e.Status(), StatusMessage: e.Official.StatusMessage}
	if s.Kinds == nil {
		s.Kinds = []string{}
	}
	if e.Invalid != nil {
		s.Invalid = e.Invalid.Error()
	}
	return s
}

// A SearchError is a registry a search could not read.
type SearchError struct {
	Registry string `json:"registry"`
	Error    string `json:"error"`
}

// Found is what a search of several registries found: the entries of
// those that answered, and the errors of those that did not.
type Found struct {
	Servers []Summary     `json:"servers"`
	Errors  []SearchError `json:"errors"`
}

// SearchAll searches each of regs for query, in order; one that fails is
// reported in Errors and the others are still read.
func SearchAll(ctx context.Context, regs []Named, query string) Found {
	out := Found{Servers: []Summary{}, Errors: []SearchError{}}
	for _, r := range regs {
		es, err := r.Client.Search(ctx, query)
		if err != nil {
			out.Errors = append(out.Errors, SearchError{Registry: r.Name, Error: err.Error()})
		}
		for _, e := range es {
			out.Servers = append(out.Servers, Summarize(r.Name, e))
		}
	}
	return out
}
