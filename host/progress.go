package host

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tap wraps a transport so that progress notifications are routed to their
// call as they are read off the wire, in wire order. The go-sdk hands
// notifications to a handler goroutine while it delivers responses directly,
// so a call could return before its last progress notification was handled;
// reading them here, before the response that follows them, means a caller
// sees every notification a server sent before its result.
func (h *Host) tap(t mcp.Transport) mcp.Transport { return &progressTap{Transport: t, h: h} }

type progressTap struct {
	mcp.Transport
	h *Host
}

func (t *progressTap) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &progressConn{Connection: conn, h: t.h}, nil
}

type progressConn struct {
	mcp.Connection
	h *Host
}

func (c *progressConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		if req, ok := msg.(*jsonrpc.Request); ok && !req.IsCall() && req.Method == "notifications/progress" {
			var p mcp.ProgressNotificationParams
			if json.Unmarshal(req.Params, &p) == nil {
				c.h.progress(&p)
			}
		}
	}
	return msg, err
}
