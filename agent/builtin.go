package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/netguard"
)

// BuiltinServerID is the id of the in-process server of built-in tools
// (tools named mcp_builtin_read_file and so on with the default format). A
// configured server cannot use it in a run that grants built-in tools.
const BuiltinServerID = "builtin"

// Bounds of the built-in tools.
const (
	// maxFileBytes bounds what read_file reads: the model gets at most
	// MaxResultBytes anyway, and a huge file must not be read whole.
	maxFileBytes = 1 << 20
	// maxDirEntries bounds what list_directory lists.
	maxDirEntries = 1000
	// maxHTTPBody bounds the response body http_request reads.
	maxHTTPBody = 1 << 20
	// httpTimeout bounds one http_request, so a slow site cannot hold the
	// run until the tool call's own timeout.
	httpTimeout = 30 * time.Second
)

// BuiltinOptions configures the built-in tools.
type BuiltinOptions struct {
	// Workspace is the folder read_file and list_directory are confined to;
	// "" means the current directory.
	Workspace string
	// HTTPClient sends http_request's requests; nil means a client that
	// ignores proxies and dials only public addresses. Tests use it to
	// reach httptest servers. Its CheckRedirect is replaced by the tool's
	// own in every case: redirects only to allowed https hosts, no
	// Referer, and none of the request's headers to another origin.
	HTTPClient *http.Client
	// Network is the operator's network policy ([network]: allow and deny
	// CIDRs, an explicit proxy) for http_request; nil means none.
	Network *netguard.Network
}

// Builtins is the in-process MCP server of the built-in tools an agent
// grants. Each tool exists only when granted. Close releases the workspace.
type Builtins struct {
	server  *mcp.Server
	granted []string
	hosts   []string
	network *netguard.Network
	root    *os.Root
	client  *http.Client

	mu      sync.Mutex
	host    *host.Host
	allowed map[string]bool
}

// NewBuiltins returns the built-in tools a grants, or nil when it grants
// none.
func NewBuiltins(a *Agent, o *BuiltinOptions) (*Builtins, error) {
	if len(a.Builtins) == 0 {
		return nil, nil
	}
	if o == nil {
		o = &BuiltinOptions{}
	}
	b := &Builtins{granted: slices.Clone(a.Builtins), hosts: slices.Clone(a.HTTPAllow), network: o.Network}
	b.server = mcp.NewServer(&mcp.Implementation{Name: "switchboard-builtin", Version: host.Version}, nil)
	for _, g := range a.Builtins {
		switch g {
		case BuiltinMCPCall:
			mcp.AddTool(b.server, &mcp.Tool{Name: BuiltinMCPCall,
				Description: "Call a tool of a configured MCP server by its server id and the tool's own name."}, b.mcpCall)
		case BuiltinReadFile, BuiltinListDirectory:
			if b.root == nil {
				ws := o.Workspace
				if ws == "" {
					ws = "."
				}
				root, err := os.OpenRoot(ws)
				if err != nil {
					return nil, fmt.Errorf("workspace: %w", err)
				}
				b.root = root
			}
			if g == BuiltinReadFile {
				mcp.AddTool(b.server, &mcp.Tool{Name: BuiltinReadFile,
					Description: "Read a text file in the workspace, by its path relative to the workspace root."}, b.readFile)
			} else {
				mcp.AddTool(b.server, &mcp.Tool{Name: BuiltinListDirectory,
					Description: "List a folder of the workspace, by its path relative to the workspace root (\".\" for the root). Folders end in /."}, b.listDirectory)
			}
		case BuiltinHTTPRequest:
			c := o.HTTPClient
			if c == nil {
				c = guardedClient(o.Network)
			}
			// A copy: whatever client sends the requests, the tool's
			// redirect policy applies.
			cc := *c
			cc.CheckRedirect = b.checkRedirect
			b.client = &cc
			mcp.AddTool(b.server, &mcp.Tool{Name: BuiltinHTTPRequest,
				Description: "Make an HTTPS request to one of these hosts: " + strings.Join(b.hosts, ", ") + "."}, b.httpRequest)
		}
	}
	return b, nil
}

// InProcess is the server to pass in host.Options.InProcess.
func (b *Builtins) InProcess() host.InProcessServer {
	return host.InProcessServer{ID: BuiltinServerID, Server: b.server}
}

// Close releases the workspace. It is idempotent.
func (b *Builtins) Close() error {
	if b == nil || b.root == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	err := b.root.Close()
	if errors.Is(err, os.ErrClosed) {
		err = nil
	}
	return err
}

func (b *Builtins) owns(t host.Tool) bool { return b != nil && t.Server == BuiltinServerID }

// bind gives mcp_call its host and the tools it may call.
func (b *Builtins) bind(h *host.Host, allowed map[string]bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.host, b.allowed = h, allowed
}

func errResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

type mcpCallIn struct {
	Server string         `json:"server" jsonschema:"the id of a configured MCP server"`
	Tool   string         `json:"tool" jsonschema:"the tool's own name on that server"`
	Args   map[string]any `json:"args,omitempty" jsonschema:"the tool's arguments"`
}

// mcpCall calls a configured server's tool through the host, so that the
// call is validated and timed out like any other. It reaches only the
// run's tools: it can never widen what the agent's tools allow.
func (b *Builtins) mcpCall(ctx context.Context, _ *mcp.CallToolRequest, in mcpCallIn) (*mcp.CallToolResult, any, error) {
	b.mu.Lock()
	h, allowed := b.host, b.allowed
	b.mu.Unlock()
	if h == nil {
		return errResult("mcp_call is not available outside a run"), nil, nil
	}
	if in.Server == BuiltinServerID {
		return errResult("mcp_call cannot call the built-in tools"), nil, nil
	}
	var name string
	var tools []string
	for _, t := range h.Tools() {
		if t.Server != in.Server || !allowed[t.Name] {
			continue
		}
		tools = append(tools, t.Tool.Name)
		if t.Tool.Name == in.Tool {
			name = t.Name
		}
	}
	if name == "" {
		if len(tools) == 0 {
			return errResult("no server %q among this run's servers", in.Server), nil, nil
		}
		return errResult("server %q has no tool %q this run may call (it may call: %s)", in.Server, in.Tool, strings.Join(tools, ", ")), nil, nil
	}
	var args json.RawMessage
	if in.Args != nil {
		args, _ = json.Marshal(in.Args)
	}
	res, err := h.CallTool(ctx, name, args, nil)
	if err != nil {
		return errResult("%s", h.Redactor().Redact(err.Error())), nil, nil
	}
	return res, nil, nil
}

type pathIn struct {
	Path string `json:"path" jsonschema:"a path relative to the workspace root"`
}

// workspacePath checks a path the model gave: relative, no "..". The
// os.Root it is opened in refuses symlinks that lead out of the workspace.
func workspacePath(p string) (string, error) {
	if p == "" {
		p = "."
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) {
		return "", fmt.Errorf("%q is absolute; give a path relative to the workspace root", p)
	}
	for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return "", fmt.Errorf("%q leaves the workspace (..)", p)
		}
	}
	return path.Clean(filepath.ToSlash(p)), nil
}

func (b *Builtins) readFile(_ context.Context, _ *mcp.CallToolRequest, in pathIn) (*mcp.CallToolResult, any, error) {
	p, err := workspacePath(in.Path)
	if err != nil {
		return errResult("read_file: %v", err), nil, nil
	}
	f, err := b.root.Open(p)
	if err != nil {
		return errResult("read_file: %v", cleanFSErr(err)), nil, nil
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return errResult("read_file: %q is a folder; use list_directory", p), nil, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return errResult("read_file: %v", cleanFSErr(err)), nil, nil
	}
	more := ""
	if len(data) > maxFileBytes {
		data = data[:maxFileBytes]
		more = fmt.Sprintf("\n[read_file: only the first %d bytes were read]", maxFileBytes)
	}
	if !utf8.Valid(data) && !utf8.Valid(data[:max(0, len(data)-3)]) {
		return errResult("read_file: %q is not a text file", p), nil, nil
	}
	return textResult(string(data) + more), nil, nil
}

func (b *Builtins) listDirectory(_ context.Context, _ *mcp.CallToolRequest, in pathIn) (*mcp.CallToolResult, any, error) {
	p, err := workspacePath(in.Path)
	if err != nil {
		return errResult("list_directory: %v", err), nil, nil
	}
	f, err := b.root.Open(p)
	if err != nil {
		return errResult("list_directory: %v", cleanFSErr(err)), nil, nil
	}
	defer f.Close()
	ents, err := f.ReadDir(maxDirEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return errResult("list_directory: %v", cleanFSErr(err)), nil, nil
	}
	more := ""
	if len(ents) > maxDirEntries {
		ents = ents[:maxDirEntries]
		more = fmt.Sprintf("[only the first %d entries are listed]\n", maxDirEntries)
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
		if e.IsDir() {
			names[i] += "/"
		}
	}
	slices.Sort(names)
	return textResult(strings.Join(names, "\n") + "\n" + more), nil, nil
}

// cleanFSErr drops the absolute workspace path from an error.
func cleanFSErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", pe.Path, pe.Err)
	}
	return err
}

type httpIn struct {
	URL     string            `json:"url" jsonschema:"an https:// URL on one of the allowed hosts"`
	Method  string            `json:"method,omitempty" jsonschema:"GET (default), HEAD or POST"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
}

// checkHTTPURL allows https URLs to the allowed hosts only (no userinfo, no
// other port but 443), and never a local or private address.
func checkHTTPURL(raw string, hosts []string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not a URL: %v", err)
	}
	if u.Scheme != "https" {
		return nil, fmt.Errorf("only https:// URLs are allowed, not %q", u.Scheme+"://")
	}
	if u.User != nil {
		return nil, errors.New("credentials in the URL are not allowed")
	}
	if p := u.Port(); p != "" && p != "443" {
		return nil, fmt.Errorf("port %s is not allowed", p)
	}
	if !slices.Contains(hosts, strings.ToLower(u.Hostname())) {
		return nil, fmt.Errorf("host %q is not allowed (http_allow: %s)", u.Hostname(), strings.Join(hosts, ", "))
	}
	if err := netguard.CheckURL(raw, false); err != nil {
		return nil, err
	}
	return u, nil
}

func (b *Builtins) httpRequest(ctx context.Context, _ *mcp.CallToolRequest, in httpIn) (*mcp.CallToolResult, any, error) {
	u, err := checkHTTPURL(in.URL, b.hosts)
	if err != nil {
		return errResult("http_request: %v", err), nil, nil
	}
	method := strings.ToUpper(in.Method)
	if method == "" {
		method = http.MethodGet
	}
	if method != http.MethodGet && method != http.MethodHead && method != http.MethodPost {
		return errResult("http_request: method %q is not allowed (GET, HEAD or POST)", in.Method), nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, httpTimeout)
	defer cancel()
	var body io.Reader
	if in.Body != "" {
		body = strings.NewReader(in.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return errResult("http_request: %v", err), nil, nil
	}
	for k, v := range in.Headers {
		req.Header.Set(k, v)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return errResult("http_request: %v", err), nil, nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPBody+1))
	if err != nil {
		return errResult("http_request: reading the body: %v", err), nil, nil
	}
	var out strings.Builder
	fmt.Fprintf(&out, "HTTP %s\ncontent-type: %s\n\n", resp.Status, resp.Header.Get("Content-Type"))
	if len(data) > maxHTTPBody {
		data = data[:maxHTTPBody]
		defer fmt.Fprintf(&out, "\n[http_request: only the first %d bytes were read]", maxHTTPBody)
	}
	if utf8.Valid(data) {
		out.Write(data)
	} else {
		fmt.Fprintf(&out, "[binary body, %d bytes]", len(data))
	}
	res := textResult(out.String())
	res.IsError = resp.StatusCode >= 400
	return res, nil, nil
}

// guardedClient dials through netguard's Dialer (resolve once, refuse
// private, loopback and metadata addresses, dial the checked address) and
// ignores proxies (a proxy would hide the real target).
func guardedClient(n *netguard.Network) *http.Client {
	// Bounds resolving the proxy's name, once.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return &http.Client{Transport: n.Transport(ctx, &netguard.Dialer{})}
}

// checkRedirect is http_request's redirect policy: each hop must be an
// https URL of an allowed host (checkHTTPURL); netguard's policy bounds
// the hops, removes the Referer (the previous URL, query included) and,
// on a hop to another origin, every header of the first request: the
// headers the model set were meant for the host it named.
func (b *Builtins) checkRedirect(req *http.Request, via []*http.Request) error {
	if _, err := checkHTTPURL(req.URL.String(), b.hosts); err != nil {
		return err
	}
	p := netguard.RedirectPolicy{
		AllowCrossOrigin:  true,
		CredentialHeaders: slices.Collect(maps.Keys(via[0].Header)),
		Network:           b.network,
	}
	return p.CheckRedirect(req, via)
}
