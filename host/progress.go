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

// Write sends msg, a tools/call to be made a task as one (task.go).
func (c *progressConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	return c.Connection.Write(ctx, taskOutgoing(msg))
}

func (c *progressConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			// A result: what the go-sdk would drop of tasks kept (task.go).
			return taskIncoming(msg), nil
		}
		if req.IsCall() {
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
// the response that follows them in the stream, and rewrites what the
// go-sdk would drop of tasks in the stream's results (task.go). It holds
// each line until its end (the SDK acts on an event only at the blank
// line after it), up to the host's message bound, the SDK's own bound of
// an event; a longer line passes through as read, unlooked at. Every
// other byte passes through unchanged.
type sseProgressTap struct {
	rc   io.ReadCloser
	h    *Host
	line []byte // the current line, held until its end
	pass bool   // the current line is too long to hold: it passes as read
	out  []byte // what is ready to be read, from off on
	off  int
	err  error // the body's, once it has one
}

// maxTapLine is the longest line the tap holds: the host's message bound.
func (t *sseProgressTap) maxTapLine() int {
	if t.h.opts.MaxMessageBytes > 0 {
		return t.h.opts.MaxMessageBytes
	}
	return DefaultMaxMessageBytes
}

func (t *sseProgressTap) Read(p []byte) (int, error) {
	for t.off == len(t.out) && t.err == nil && len(p) > 0 {
		t.out, t.off = t.out[:0], 0
		n, err := t.rc.Read(p) // p is scratch until the copy below
		t.feed(p[:n])
		if err != nil {
			// A last line without its end passes as it came.
			t.out = append(t.out, t.line...)
			t.line, t.err = t.line[:0], err
		}
	}
	if t.off < len(t.out) {
		n := copy(p, t.out[t.off:])
		t.off += n
		return n, nil
	}
	return 0, t.err
}

// feed takes bytes read from the body.
func (t *sseProgressTap) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		seg := b
		if i >= 0 {
			seg = b[:i]
		}
		switch {
		case t.pass:
			t.out = append(t.out, seg...)
		case len(t.line)+len(seg) > t.maxTapLine():
			t.out = append(append(t.out, t.line...), seg...)
			t.line, t.pass = t.line[:0], true
		default:
			t.line = append(t.line, seg...)
		}
		if i < 0 {
			return
		}
		if !t.pass {
			t.out = append(t.out, t.scan(t.line)...)
		}
		t.out = append(t.out, '\n')
		t.line, t.pass = t.line[:0], false
		b = b[i+1:]
	}
}

// scan routes a line's progress notification and returns the line, or
// what replaces it (task.go).
func (t *sseProgressTap) scan(line []byte) []byte {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return line
	}
	if bytes.Contains(data, []byte("notifications/progress")) {
		var msg struct {
			Method string                         `json:"method"`
			Params mcp.ProgressNotificationParams `json:"params"`
		}
		if json.Unmarshal(bytes.TrimSpace(data), &msg) == nil && msg.Method == "notifications/progress" {
			t.h.progress(secret.RedactValue(t.h.red, &msg.Params))
		}
		return line
	}
	if b, ok := taskIncomingBytes(bytes.TrimSpace(data)); ok {
		out := append([]byte("data: "), b...)
		if bytes.HasSuffix(line, []byte("\r")) {
			out = append(out, '\r')
		}
		return out
	}
	return line
}

func (t *sseProgressTap) Close() error { return t.rc.Close() }
