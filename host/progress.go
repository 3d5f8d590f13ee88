package host

import (
	"bytes"
	"context"
	"encoding/json"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/secret"
)

// tap wraps a server's transport so that progress notifications, and log
// messages that belong to a call, are routed to their call as they are read
// off the wire, in wire order. The go-sdk hands notifications to a handler
// goroutine while it delivers responses directly, so a call could return
// before its last notification was handled; reading them here, before the
// response that follows them, means a caller sees every notification a
// server sent before its result.
func (s *server) tap(t mcp.Transport) mcp.Transport { return &progressTap{Transport: t, s: s} }

type progressTap struct {
	mcp.Transport
	s *server
}

func (t *progressTap) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &progressConn{Connection: conn, s: t.s}, nil
}

type progressConn struct {
	mcp.Connection
	s *server
}

func (c *progressConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || req.IsCall() {
			return msg, nil
		}
		switch req.Method {
		case "notifications/progress":
			var p mcp.ProgressNotificationParams
			if json.Unmarshal(req.Params, &p) == nil {
				c.s.h.progress(secret.RedactValue(c.s.h.red, &p))
			}
		case "notifications/message":
			// A log message of a call goes to the call, and not also to
			// the SDK's handler; the others go on to Options.Log.
			var p mcp.LoggingMessageParams
			if json.Unmarshal(req.Params, &p) != nil {
				break
			}
			if call := c.s.route(context.Background(), func(c *call) bool { return c.opts.Log != nil }); call != nil {
				call.opts.Log(c.s.cfg.ID, secret.RedactValue(c.s.h.red, c.s.h.lim.cleanLog(&p)))
				continue
			}
		}
		return msg, nil
	}
}

// sseProgressTap routes the progress notifications of a Streamable HTTP
// event stream as the SDK reads the bytes, so that they are handled before
// the response that follows them in the stream. It looks only at "data:"
// lines that mention notifications/progress; everything passes through
// unchanged. A line longer than the SDK's own event bound is skipped.
type sseProgressTap struct {
	rc   io.ReadCloser
	h    *Host
	line []byte
	skip bool // the current line is too long to hold
}

// maxTapLine bounds the bytes the tap holds for one line.
const maxTapLine = 64 << 10

func (t *sseProgressTap) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	for _, b := range p[:n] {
		if b == '\n' {
			if !t.skip {
				t.scan(t.line)
			}
			t.line, t.skip = t.line[:0], false
			continue
		}
		if t.skip {
			continue
		}
		if len(t.line) >= maxTapLine {
			t.skip = true
			continue
		}
		t.line = append(t.line, b)
	}
	return n, err
}

func (t *sseProgressTap) scan(line []byte) {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok || !bytes.Contains(data, []byte("notifications/progress")) {
		return
	}
	var msg struct {
		Method string                         `json:"method"`
		Params mcp.ProgressNotificationParams `json:"params"`
	}
	if json.Unmarshal(bytes.TrimSpace(data), &msg) == nil && msg.Method == "notifications/progress" {
		t.h.progress(secret.RedactValue(t.h.red, &msg.Params))
	}
}

func (t *sseProgressTap) Close() error { return t.rc.Close() }
