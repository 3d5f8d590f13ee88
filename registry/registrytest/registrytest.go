// Package registrytest serves the read API of an MCP registry from
// recorded entries, for tests: GET /v0.1/servers (search, version=latest,
// updated_since, include_deleted, cursor and limit) and
// /v0.1/servers/{name}/versions[/{version}], each answer with an ETag that
// If-None-Match is checked against, as the official registry's API
// (docs/reference/api/openapi.yaml in modelcontextprotocol/registry)
// describes them.
package registrytest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Record is one entry as the API returns it.
type Record struct {
	Server json.RawMessage            `json:"server"`
	Meta   map[string]json.RawMessage `json:"_meta,omitempty"`
}

type official struct {
	Status          string `json:"status,omitempty"`
	StatusMessage   string `json:"statusMessage,omitempty"`
	StatusChangedAt string `json:"statusChangedAt,omitempty"`
	PublishedAt     string `json:"publishedAt,omitempty"`
	UpdatedAt       string `json:"updatedAt,omitempty"`
	IsLatest        bool   `json:"isLatest"`
}

const officialKey = "io.modelcontextprotocol.registry/official"

// Registry is a fake registry on a loopback httptest.Server.
type Registry struct {
	*httptest.Server
	// Token, when set before the first request, is the bearer token every
	// request must carry.
	Token string

	mu          sync.Mutex
	records     []Record
	requests    int
	notModified int
	queries     []string
}

// Load reads a fixture file: {"servers": [Record...]}, as /v0.1/servers
// answers.
func Load(file string) ([]Record, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var l struct {
		Servers []Record `json:"servers"`
	}
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return l.Servers, nil
}

// New starts a registry serving records. Close it when done.
func New(records []Record) *Registry {
	r := &Registry{records: append([]Record(nil), records...)}
	for i := range r.records {
		if _, ok := r.records[i].Meta[officialKey]; !ok {
			r.setMeta(i, official{Status: "active", IsLatest: true})
		}
	}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// Requests is how many requests the registry answered, and how many of
// them with 304 Not Modified.
func (r *Registry) Requests() (all, notModified int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, r.notModified
}

// Queries are the query strings of the requests answered, in order.
func (r *Registry) Queries() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.queries...)
}

// Publish adds a version of a server (a server.json document) as its
// latest, as publishing to a registry does.
func (r *Registry) Publish(server json.RawMessage) error {
	var s struct{ Name, Version string }
	if err := json.Unmarshal(server, &s); err != nil || s.Name == "" || s.Version == "" {
		return fmt.Errorf("registrytest: publish: not a server.json with name and version")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for i := range r.records {
		if name, _ := r.nameVersion(i); name == s.Name {
			o := r.meta(i)
			o.IsLatest = false
			r.setMeta(i, o)
		}
	}
	rec := Record{Server: server}
	r.records = append(r.records, rec)
	r.setMeta(len(r.records)-1, official{Status: "active", PublishedAt: now, UpdatedAt: now, IsLatest: true})
	return nil
}

func (r *Registry) nameVersion(i int) (string, string) {
	var s struct{ Name, Version string }
	json.Unmarshal(r.records[i].Server, &s)
	return s.Name, s.Version
}

func (r *Registry) meta(i int) official {
	var o official
	if raw, ok := r.records[i].Meta[officialKey]; ok {
		json.Unmarshal(raw, &o)
	}
	if o.Status == "" {
		o.Status = "active"
	}
	return o
}

func (r *Registry) setMeta(i int, o official) {
	raw, _ := json.Marshal(o)
	m := map[string]json.RawMessage{}
	for k, v := range r.records[i].Meta {
		m[k] = v
	}
	m[officialKey] = raw
	r.records[i].Meta = m
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	r.queries = append(r.queries, req.URL.RawQuery)
	if r.Token != "" && req.Header.Get("Authorization") != "Bearer "+r.Token {
		r.answer(w, req, http.StatusUnauthorized, map[string]string{"error": "unauthorized"})
		return
	}
	if req.Method != http.MethodGet {
		r.answer(w, req, http.StatusMethodNotAllowed, map[string]string{"error": "method not allowed"})
		return
	}
	q := req.URL.Query()
	deleted := q.Get("include_deleted") == "true"
	rest, ok := strings.CutPrefix(req.URL.EscapedPath(), "/v0.1/servers")
	if !ok {
		r.answer(w, req, http.StatusNotFound, map[string]string{"error": "not found"})
		return
	}
	if rest == "" || rest == "/" {
		r.list(w, req, q)
		return
	}
	parts := strings.Split(strings.TrimPrefix(rest, "/"), "/")
	name, err := url.PathUnescape(parts[0])
	if err != nil || len(parts) < 2 || parts[1] != "versions" || len(parts) > 3 {
		r.answer(w, req, http.StatusNotFound, map[string]string{"error": "not found"})
		return
	}
	var found []Record
	for i := range r.records {
		n, v := r.nameVersion(i)
		o := r.meta(i)
		if n != name || (o.Status == "deleted" && !deleted) {
			continue
		}
		if len(parts) == 3 {
			want, _ := url.PathUnescape(parts[2])
			if (want == "latest" && !o.IsLatest) || (want != "latest" && want != v) {
				continue
			}
		}
		found = append(found, r.records[i])
	}
	switch {
	case len(found) == 0:
		r.answer(w, req, http.StatusNotFound, map[string]string{"error": "Server not found"})
	case len(parts) == 3:
		r.answer(w, req, http.StatusOK, found[len(found)-1])
	default:
		r.answer(w, req, http.StatusOK, map[string]any{"servers": found, "metadata": map[string]any{"count": len(found)}})
	}
}

func (r *Registry) list(w http.ResponseWriter, req *http.Request, q url.Values) {
	search := strings.ToLower(q.Get("search"))
	since := q.Get("updated_since")
	deleted := q.Get("include_deleted") == "true" || since != ""
	var t time.Time
	if since != "" {
		var err error
		if t, err = time.Parse(time.RFC3339, since); err != nil {
			r.answer(w, req, http.StatusBadRequest, map[string]string{"error": "invalid updated_since"})
			return
		}
	}
	var match []Record
	for i := range r.records {
		n, v := r.nameVersion(i)
		o := r.meta(i)
		switch {
		case search != "" && !strings.Contains(strings.ToLower(n), search),
			q.Get("version") == "latest" && !o.IsLatest,
			q.Get("version") != "" && q.Get("version") != "latest" && q.Get("version") != v,
			o.Status == "deleted" && !deleted:
			continue
		}
		if since != "" {
			u, err := time.Parse(time.RFC3339, o.UpdatedAt)
			if err != nil || u.Before(t) {
				continue
			}
		}
		match = append(match, r.records[i])
	}
	start, _ := strconv.Atoi(q.Get("cursor"))
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit <= 0 {
		limit = 30
	}
	start = min(max(start, 0), len(match))
	end := min(start+limit, len(match))
	meta := map[string]any{"count": end - start}
	if end < len(match) {
		meta["nextCursor"] = strconv.Itoa(end)
	}
	r.answer(w, req, http.StatusOK, map[string]any{"servers": match[start:end], "metadata": meta})
}

func (r *Registry) answer(w http.ResponseWriter, req *http.Request, code int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if code == http.StatusOK {
		sum := sha256.Sum256(body)
		etag := `"` + hex.EncodeToString(sum[:8]) + `"`
		w.Header().Set("ETag", etag)
		if req.Header.Get("If-None-Match") == etag {
			r.notModified++
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.WriteHeader(code)
	w.Write(body)
}
