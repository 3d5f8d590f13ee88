// Package registry reads MCP registries and turns their entries into
// Switchboard server entries.
//
// An MCP registry (the official one at registry.modelcontextprotocol.io, or
// a sub-registry that implements the same API) lists servers as server.json
// documents: a name (io.github.user/server), a version, the packages it can
// be installed from (npm, PyPI, OCI images, NuGet, MCPB bundles), each with
// its runtime and package arguments and environment variables, and the
// remotes it is served at (streamable-http or sse URLs, which may be
// templates with {variables}). Registry metadata beside each entry says
// whether it is active, deprecated or deleted.
//
// A [Client] reads one registry's API (GET /v0.1/servers and
// /v0.1/servers/{name}/versions/{version}) through the guarded network
// layer ([netguard]), bounds every answer, caches answers by ETag (and a
// search's result, refreshed with updated_since), and
// validates every entry against the server.json schema vendored beside
// this file (server.schema.json, from modelcontextprotocol/registry
// v1.8.9, docs/reference/server-json/draft): an entry that does not
// validate comes back with [Entry.Invalid] set and cannot be converted.
//
// [Convert] turns one validated entry into a pinned config.Server: an npm
// package runs as `npx -y pkg@version`, a PyPI one as `uvx pkg==version`,
// an OCI image as `docker run -i --rm image` (or podman), a remote as an
// http or sse server with its URL template filled in. [Variables] lists
// what the user must supply first; the caller stores the secret ones in the
// secret store and passes {{secrets.NAME}} placeholders, so that nothing
// secret is written to a config file. The entry records where it came from
// (config.RegistrySource), which is how [Client.Get] with "latest" finds
// that a server is outdated.
package registry

import (
	"encoding/json"
	"errors"
)

// Status values of an entry (Official.Status).
const (
	StatusActive     = "active"
	StatusDeprecated = "deprecated"
	StatusDeleted    = "deleted"
)

// OfficialMeta is the key of the registry-managed metadata in _meta.
const OfficialMeta = "io.modelcontextprotocol.registry/official"

// Server is a server.json document (the schema's ServerDetail).
type Server struct {
	Schema      string      `json:"$schema,omitempty"`
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	Title       string      `json:"title,omitempty"`
	Version     string      `json:"version"`
	WebsiteURL  string      `json:"websiteUrl,omitempty"`
	Repository  *Repository `json:"repository,omitempty"`
	Packages    []Package   `json:"packages,omitempty"`
	Remotes     []Transport `json:"remotes,omitempty"`
}

// Repository is where the server's source is.
type Repository struct {
	URL       string `json:"url,omitempty"`
	Source    string `json:"source,omitempty"`
	Subfolder string `json:"subfolder,omitempty"`
}

// Package is one way to install and run a server locally.
type Package struct {
	RegistryType         string          `json:"registryType"`
	RegistryBaseURL      string          `json:"registryBaseUrl,omitempty"`
	Identifier           string          `json:"identifier"`
	Version              string          `json:"version,omitempty"`
	FileSHA256           string          `json:"fileSha256,omitempty"`
	RuntimeHint          string          `json:"runtimeHint,omitempty"`
	Transport            Transport       `json:"transport"`
	RuntimeArguments     []Argument      `json:"runtimeArguments,omitempty"`
	PackageArguments     []Argument      `json:"packageArguments,omitempty"`
	EnvironmentVariables []KeyValueInput `json:"environmentVariables,omitempty"`
}

// Transport is a package's transport or a remote: stdio, streamable-http
// or sse, the latter two with a URL template and headers.
type Transport struct {
	Type      string           `json:"type"`
	URL       string           `json:"url,omitempty"`
	Headers   []KeyValueInput  `json:"headers,omitempty"`
	Variables map[string]Input `json:"variables,omitempty"`
}

// Input is a value the user may or must supply, or a fixed one (Value,
// with {variables} of its own).
type Input struct {
	Description string           `json:"description,omitempty"`
	IsRequired  bool             `json:"isRequired,omitempty"`
	IsSecret    bool             `json:"isSecret,omitempty"`
	Format      string           `json:"format,omitempty"`
	Default     string           `json:"default,omitempty"`
	Placeholder string           `json:"placeholder,omitempty"`
	Value       string           `json:"value,omitempty"`
	Choices     []string         `json:"choices,omitempty"`
	Variables   map[string]Input `json:"variables,omitempty"`
}

// KeyValueInput is an environment variable or a header.
type KeyValueInput struct {
	Input
	Name string `json:"name"`
}

// Argument is a positional or named (--flag value) command-line argument.
type Argument struct {
	Input
	Type       string `json:"type"` // "positional" or "named"
	Name       string `json:"name,omitempty"`
	ValueHint  string `json:"valueHint,omitempty"`
	IsRepeated bool   `json:"isRepeated,omitempty"`
}

// Official is the registry-managed metadata of one entry.
type Official struct {
	Status          string `json:"status,omitempty"`
	StatusMessage   string `json:"statusMessage,omitempty"`
	StatusChangedAt string `json:"statusChangedAt,omitempty"`
	PublishedAt     string `json:"publishedAt,omitempty"`
	UpdatedAt       string `json:"updatedAt,omitempty"`
	IsLatest        bool   `json:"isLatest,omitempty"`
}

// Entry is one server version as a registry answers it: the server.json,
// its metadata, and whether it validated.
type Entry struct {
	Server Server
	// Raw is the server.json as the registry sent it.
	Raw json.RawMessage
	// Official is the registry's metadata (zero when it sent none).
	Official Official
	// Registry is the base URL of the registry it came from.
	Registry string
	// Invalid, when not nil, is why the entry does not validate against
	// the server.json schema; such an entry is listed but never converted.
	Invalid error
}

// Status is the entry's status, active when the registry says none.
func (e Entry) Status() string {
	if e.Official.Status == "" {
		return StatusActive
	}
	return e.Official.Status
}

// Kinds lists the ways the entry can be run: its packages' registry types
// and its remotes' transport types, each once, in order.
func (s Server) Kinds() []string {
	var ks []string
	add := func(k string) {
		for _, x := range ks {
			if x == k {
				return
			}
		}
		ks = append(ks, k)
	}
	for _, p := range s.Packages {
		add(p.RegistryType)
	}
	for _, r := range s.Remotes {
		add(r.Type)
	}
	return ks
}

// ErrNotFound is what [Client.Get] returns for a server or version the
// registry does not have.
var ErrNotFound = errors.New("registry: not found")
