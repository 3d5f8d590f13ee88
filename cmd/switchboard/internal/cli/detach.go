package cli

// switchboard call --detach: the call made as a task of the running serve
// of this configuration (the MCP tasks extension, issue 29), its id
// printed, so that "switchboard tasks show ID" follows it. Only a serve
// can keep a call running after the command ends: without one the command
// refuses rather than starting servers that would stop with it.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/host"
)

// detachProtocolVersion is the protocol of a detached call: the tasks
// extension is 2026-07-28's.
const detachProtocolVersion = "2026-07-28"

// maxDetachAnswerBytes bounds the serve's answer to a detached call: a
// task handle, or the result of a call that ended before it became one
// (the host's bound on one message).
const maxDetachAnswerBytes = 4 << 20

// callDetached calls tool name with --args and --arg as a task of the
// running serve, and prints the task's id; a call that ended before it
// became a task (within [gateway] task_wait) prints its result, as a
// plain call does.
func (e *env) callDetached(ctx context.Context, name, argsJSON string, kvs []string) error {
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	c, err := e.dialServe(ctx, cfg)
	if err != nil {
		return failed(err)
	}
	if c == nil {
		return &exitError{kind: daemon.KindUnavailable, err: fmt.Errorf("call --detach %s: no switchboard serve of this configuration runs: a detached call is a task of the serve, which keeps it running after this command ends; start switchboard serve first", name)}
	}
	defer c.Close()
	t, ok := c.Tool(name)
	if !ok {
		return failed(fmt.Errorf("%w %q; run 'switchboard tools' to list them%s", host.ErrUnknownTool, name, didYouMean(name, toolCandidates(c.Tools()))))
	}
	if s, ok := cfg.Server(t.Server); ok && s.TaskMode(t.Tool.Name) == config.TaskNever {
		return usageErr("call --detach %s: server %q's tool %s has task mode never (task, tool_tasks): it cannot run as a task", name, t.Server, t.Tool.Name)
	}
	args, err := buildArgs(argsJSON, kvs, t.Tool.InputSchema)
	if err != nil {
		return usageErr("%v", err)
	}
	params := map[string]any{"name": name, "_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    detachProtocolVersion,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "switchboard", "version": host.Version},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{gateway.TasksExtension: map[string]any{}}},
	}}
	if len(args) > 0 {
		params["arguments"] = args
	}
	answer, err := postDetached(ctx, c.hc, name, params)
	if err != nil {
		return failed(&host.CallError{Server: t.Server, Tool: t.Tool.Name, Method: "tools/call", Err: err})
	}
	var handle struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
		Status     string `json:"status"`
	}
	if err := json.Unmarshal(answer, &handle); err != nil {
		return failed(fmt.Errorf("call --detach %s: the serve's answer: %v", name, err))
	}
	if handle.ResultType == "task" && handle.TaskID != "" {
		if e.jsonOut {
			var v any
			json.Unmarshal(answer, &v)
			return e.printJSON(v)
		}
		e.printf("%s\n", handle.TaskID)
		fmt.Fprintf(e.stderr, "switchboard: %s runs as task %s (%s); follow it with: switchboard tasks show %s\n", name, handle.TaskID, handle.Status, handle.TaskID)
		return nil
	}
	// Ended before it became a task: its result, as a plain call's.
	var res mcp.CallToolResult
	if err := json.Unmarshal(answer, &res); err != nil {
		return failed(fmt.Errorf("call --detach %s: the serve's answer: %v", name, err))
	}
	fmt.Fprintf(e.stderr, "switchboard: %s ended before it became a task ([gateway] task_wait); its result follows\n", name)
	if e.jsonOut {
		if err := e.printJSON(&res); err != nil {
			return err
		}
	} else {
		e.printf("%s", renderContent(res.Content, res.StructuredContent))
	}
	if res.IsError {
		return &exitError{kind: daemon.KindFailed}
	}
	return nil
}

// postDetached sends one 2026-07-28 tools/call to the serve's MCP
// endpoint over hc (its local socket), statelessly, and returns the
// answer's result; a JSON-RPC error as a *jsonrpc.Error.
func postDetached(ctx context.Context, hc *http.Client, name string, params map[string]any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	id, err := jsonrpc.MakeID(float64(1))
	if err != nil {
		return nil, err
	}
	body, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: id, Method: "tools/call", Params: raw})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", "http://"+daemon.SocketHost+gateway.DefaultEndpoint.Path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", detachProtocolVersion)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", name)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := answerOf(resp)
	if err != nil {
		return nil, err
	}
	if data == nil {
		return nil, fmt.Errorf("the serve answered %s without a JSON-RPC answer", resp.Status)
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		if resp.StatusCode >= 400 {
			return nil, fmt.Errorf("the serve answered %s: %s", resp.Status, firstLine(string(data)))
		}
		return nil, fmt.Errorf("the serve's answer (%s): %v", resp.Status, err)
	}
	r, ok := msg.(*jsonrpc.Response)
	if !ok {
		return nil, fmt.Errorf("the serve's answer (%s) is not a response", resp.Status)
	}
	if r.Error != nil {
		var je *jsonrpc.Error
		if errors.As(r.Error, &je) {
			return nil, &protocolError{je}
		}
		return nil, r.Error
	}
	return r.Result, nil
}

// answerOf is the JSON-RPC answer in resp's body: the body itself, or the
// data of the SSE event that answers the request (the stream may carry
// notifications first).
func answerOf(resp *http.Response) ([]byte, error) {
	body := io.LimitReader(resp.Body, maxDetachAnswerBytes)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(body)
		if len(bytes.TrimSpace(b)) == 0 {
			return nil, err
		}
		return b, err
	}
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, maxDetachAnswerBytes)
	for sc.Scan() {
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal([]byte(d), &m) == nil && len(m.ID) > 0 && string(m.ID) != "null" {
			return []byte(d), nil
		}
	}
	return nil, sc.Err()
}
