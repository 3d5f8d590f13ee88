package api

// Client: the API as a Go program uses it — the CLI, over the daemon's
// local socket (daemon.SocketClient), reads a running serve this way.
// Its errors are the daemon's as they were (a problem's cause): the same
// text, matching the same sentinels with errors.Is, a *host.CallError for
// a call's, so that a caller says and branches on them as in process.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/store"
	"github.com/switchboardmcp/switchboard/workflow"
)

// causeOf is err as a problem's cause: the host's report of it, whose
// text and conditions the client makes again; the problem's type carries
// its kind (daemon.Kind).
func causeOf(err error) *host.ErrorJSON { return host.NewErrorJSON(err) }

// A Client reads and drives a daemon through its API. Its methods are
// safe for concurrent use.
type Client struct {
	base string
	hc   *http.Client
}

// NewClient returns a client of the API of the daemon at base
// ("http://HOST:PORT"; over the local socket "http://"+daemon.SocketHost
// with daemon.SocketClient's hc). hc carries what the daemon asks of a
// caller (nothing on the local socket: the owner's); nil is
// http.DefaultClient.
func NewClient(base string, hc *http.Client) *Client {
	return &Client{base: strings.TrimSuffix(base, "/"), hc: cmp.Or(hc, http.DefaultClient)}
}

// Close closes the client's idle connections; it is idempotent.
func (c *Client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// maxAnswer bounds an answer: a result the daemon's host already bounded
// (each server's message to 4 MiB; lists to 20,000 items per server).
const maxAnswer = 256 << 20

// send makes a request of the API at path (under Prefix), with in as its
// JSON body unless nil, and returns the answer if it is a success; a
// problem is its error.
func (c *Client) send(ctx context.Context, method, path string, in any) (*http.Response, error) {
	return c.sendIf(ctx, method, path, in, 0)
}

// sendIf is send with If-Match: ifVersion's ETag when ifVersion > 0.
func (c *Client) sendIf(ctx context.Context, method, path string, in any, ifVersion int64) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+Prefix+path, body)
	if err != nil {
		return nil, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if method != http.MethodGet {
		req.Header.Set(CSRFHeader, "1")
	}
	if ifVersion > 0 {
		req.Header.Set("If-Match", etag(ifVersion))
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("switchboard serve: %w", err)
	}
	if resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var p problem
	if json.Unmarshal(b, &p) != nil || p.Title == "" {
		return nil, fmt.Errorf("switchboard serve: %s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(b))
	}
	return nil, p.err()
}

// err is the error a problem stands for: its cause, else what it says;
// of the kind its type names, matching (errors.Is) that kind's sentinels
// as the daemon's error did.
func (p *problem) err() error {
	err := fmt.Errorf("switchboard serve: %s", strings.TrimSuffix(p.Error(), ": "))
	if p.Cause != nil {
		err = p.Cause.Err()
	} else if len(p.Errors) > 0 {
		// Which fields are wrong, and why (an invalid entry).
		fs := make([]string, len(p.Errors))
		for i, f := range p.Errors {
			fs[i] = f.Detail
			if f.Field != "" {
				fs[i] = f.Field + ": " + f.Detail
			}
		}
		err = fmt.Errorf("%w (%s)", err, strings.Join(fs, "; "))
	}
	if k := daemon.KindOfType(p.Type); k != "" {
		return k.Errorf("%w", err)
	}
	return err
}

// do sends a request and decodes its answer into out unless nil.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	return c.doIf(ctx, method, path, in, out, 0)
}

// doIf is do with If-Match (sendIf).
func (c *Client) doIf(ctx context.Context, method, path string, in, out any, ifVersion int64) error {
	resp, err := c.sendIf(ctx, method, path, in, ifVersion)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAnswer)).Decode(out); err != nil {
		return fmt.Errorf("switchboard serve: %s %s: %w", method, path, err)
	}
	return nil
}

// list gets every page of the list at path (which has no query yet) as
// conv makes them, and the cause of the last page's error (the servers
// that did not answer), if any.
func list[T, R any](ctx context.Context, c *Client, path string, conv func(T) R) ([]R, error) {
	var out []R
	cursor := ""
	for {
		var p listPage[T]
		if err := c.do(ctx, http.MethodGet, path+"?limit="+strconv.Itoa(MaxLimit)+"&cursor="+url.QueryEscape(cursor), nil, &p); err != nil {
			return nil, err
		}
		for _, it := range p.Items {
			out = append(out, conv(it))
		}
		if p.NextCursor == "" {
			if p.Cause != nil {
				return out, p.Cause.Err()
			}
			return out, nil
		}
		cursor = p.NextCursor
	}
}

// State is the host's state (GET /api/v1/state).
type State struct {
	ToolNameFormat string
	Servers        []host.ServerStatus
	Tools          []host.Tool // in the host's order
}

// State reads the host's state: its tool name format, every server's
// status and its tools, as the daemon's host reports them.
func (c *Client) State(ctx context.Context) (*State, error) {
	var j stateJSON
	if err := c.do(ctx, http.MethodGet, "state", nil, &j); err != nil {
		return nil, err
	}
	st := &State{ToolNameFormat: j.ToolNameFormat}
	for _, s := range j.Servers {
		st.Servers = append(st.Servers, s.status())
	}
	for _, t := range j.Tools {
		st.Tools = append(st.Tools, host.Tool(t))
	}
	return st, nil
}

// Resources lists the resources of every ready server, as
// host.Host.Resources does.
func (c *Client) Resources(ctx context.Context) ([]host.Resource, error) {
	return list(ctx, c, "resources", func(it daemon.ResourceItem) host.Resource { return host.Resource(it) })
}

// ResourceTemplates lists the resource templates of every ready server,
// as host.Host.ResourceTemplates does.
func (c *Client) ResourceTemplates(ctx context.Context) ([]host.ResourceTemplate, error) {
	return list(ctx, c, "resources/templates", func(it daemon.TemplateItem) host.ResourceTemplate { return host.ResourceTemplate(it) })
}

// Prompts lists the prompts of every ready server, as host.Host.Prompts
// does.
func (c *Client) Prompts(ctx context.Context) ([]host.Prompt, error) {
	return list(ctx, c, "prompts", func(it daemon.PromptItem) host.Prompt { return host.Prompt(it) })
}

// ReadResource reads a resource from a server, as host.Host.ReadResource
// does.
func (c *Client) ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	var res mcp.ReadResourceResult
	if err := c.do(ctx, http.MethodPost, "resources/read", daemon.ReadRequest{Server: server, URI: uri}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// GetPrompt gets a prompt, as host.Host.GetPrompt does.
func (c *Client) GetPrompt(ctx context.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	var res mcp.GetPromptResult
	if err := c.do(ctx, http.MethodPost, "prompts/get", daemon.PromptRequest{Server: server, Name: name, Arguments: args}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// DeleteServer deletes a server added at run time, which stops it
// (daemon.Daemon.DeleteServer): a configured one's is
// daemon.ErrReadOnly.
func (c *Client) DeleteServer(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "servers/"+url.PathEscape(id), nil, nil)
}

// Usage reports the usage over the last window (daemon.Daemon.Usage), of
// every call or, with endpoint, of the calls through that named endpoint;
// a window shorter than daemon.MinUsageWindow is that (the store's rows
// are minutes).
func (c *Client) Usage(ctx context.Context, window time.Duration, endpoint string) (*store.UsageReport, error) {
	window = max(window, daemon.MinUsageWindow)
	q := url.Values{"window": {window.String()}}
	if endpoint != "" {
		q.Set("endpoint", endpoint)
	}
	var j usageJSON
	if err := c.do(ctx, http.MethodGet, "usage?"+q.Encode(), nil, &j); err != nil {
		return nil, err
	}
	rep := &store.UsageReport{Since: j.Since.Local(), Endpoint: j.Endpoint, Calls: j.Calls, Tokens: j.Tokens}
	if len(j.Endpoints) > 0 {
		rep.Endpoints = j.Endpoints
	}
	return rep, nil
}

// Workflows returns the workflows the daemon runs, id → digest.
func (c *Client) Workflows(ctx context.Context) (map[string]string, error) {
	wfs, err := list(ctx, c, "workflows", func(w workflowJSON) workflowJSON { return w })
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, w := range wfs {
		m[w.ID] = w.Digest
	}
	return m, nil
}

// Engine is the daemon's workflow engine through the API: the methods of
// a workflow.Engine a caller uses, answered by the daemon's, so that a
// run lives in the daemon. Its errors match workflow.ErrNoRun,
// ErrNotWaiting, ErrGateAnswered, ErrInputsDiffer, ErrNotInterrupted and
// daemon.ErrLiveElsewhere as the engine's do.
type Engine struct{ c *Client }

// Engine returns the daemon's workflow engine.
func (c *Client) Engine() *Engine { return &Engine{c} }

func runPath(id string) string { return "runs/" + url.PathEscape(id) }

// names is a selection as startJSON has it.
func names(s *workflow.Selection) *[]string {
	if s == nil {
		return nil
	}
	return &s.Names
}

// Start starts a run in the daemon, as Engine.Start.
func (e *Engine) Start(ctx context.Context, id string, inputs map[string]any, opts *workflow.StartOptions) (string, error) {
	req := startJSON{Inputs: inputs}
	if opts != nil {
		req.RunID, req.MCPServers, req.Tools = opts.RunID, names(opts.MCPServers), names(opts.Tools)
	}
	var st workflow.RunStatus
	if err := e.c.do(ctx, http.MethodPost, "workflows/"+url.PathEscape(id)+"/runs", req, &st); err != nil {
		return "", err
	}
	return st.ID, nil
}

// Get returns the run's status, as Engine.Get.
func (e *Engine) Get(ctx context.Context, runID string) (*workflow.RunStatus, error) {
	var st workflow.RunStatus
	if err := e.c.do(ctx, http.MethodGet, runPath(runID), nil, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// Runs lists the newest runs, as Engine.Runs.
func (e *Engine) Runs(ctx context.Context, f *workflow.RunFilter) ([]*workflow.RunStatus, error) {
	q := url.Values{}
	if f != nil && f.Workflow != "" {
		q.Set("workflow", f.Workflow)
	}
	if f != nil && f.Limit > 0 {
		q.Set("limit", strconv.Itoa(min(f.Limit, MaxLimit)))
	}
	var p page[*workflow.RunStatus]
	if err := e.c.do(ctx, http.MethodGet, "runs?"+q.Encode(), nil, &p); err != nil {
		return nil, err
	}
	return p.Items, nil
}

// Events returns the run's events after afterSeq, as Engine.Events.
func (e *Engine) Events(ctx context.Context, runID string, afterSeq int64) ([]workflow.Event, error) {
	var run struct {
		Events []workflow.Event `json:"events"`
	}
	if err := e.c.do(ctx, http.MethodGet, runPath(runID), nil, &run); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(run.Events, func(ev workflow.Event) bool { return ev.Seq <= afterSeq }), nil
}

// Follow calls fn with each of the run's events after afterSeq as the
// daemon's engine stores them, until the terminal event, fn's error or
// ctx's end, as Engine.Follow.
func (e *Engine) Follow(ctx context.Context, runID string, afterSeq int64, fn func(workflow.Event) error) error {
	resp, err := e.c.send(ctx, http.MethodGet, runPath(runID)+"/events?after="+strconv.FormatInt(afterSeq, 10), nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, maxAnswer)
	var event string
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if event == "error" {
			var p problem
			if err := json.Unmarshal([]byte(data), &p); err != nil {
				return fmt.Errorf("switchboard serve: the run's events: %w", err)
			}
			return p.err()
		}
		var ev workflow.Event
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return fmt.Errorf("switchboard serve: the run's events: %w", err)
		}
		if err := fn(ev); err != nil {
			return err
		}
		if ev.Type.Terminal() {
			return nil
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("switchboard serve: the run's events ended before the run did: %v", cmp.Or(sc.Err(), io.ErrUnexpectedEOF))
}

// Answer answers a gate, as Engine.Answer.
func (e *Engine) Answer(ctx context.Context, runID, gate string, a workflow.GateAnswer) error {
	return e.c.do(ctx, http.MethodPost, runPath(runID)+"/answer", answerJSON{gate, a}, nil)
}

// Resolve resolves a run's interrupted step, as Engine.Resolve.
func (e *Engine) Resolve(ctx context.Context, runID, step string, how workflow.Resolution) error {
	return e.c.do(ctx, http.MethodPost, runPath(runID)+"/resolve", resolveJSON{step, how}, nil)
}

// Cancel cancels a run, as Engine.Cancel.
func (e *Engine) Cancel(ctx context.Context, runID string) error {
	return e.c.do(ctx, http.MethodPost, runPath(runID)+"/cancel", nil, nil)
}

// Resume resumes a run in the daemon, as daemon.Workflows.Resume.
func (e *Engine) Resume(ctx context.Context, runID string) error {
	return e.c.do(ctx, http.MethodPost, runPath(runID)+"/resume", nil, nil)
}
