package transport

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboardmcp/switchboard/internal/wire"
)

// lineConn is a Command's connection to its child: one JSON-RPC message a
// line on the child's stdout, as messageLines hands them on, and one a
// line written to its stdin. It is what the SDK's IOTransport does for
// these lines, decoding each message once with wire.DecodeMessage instead
// of twice (as a batch, then as a message) through the SDK's decoder and
// its 32 KiB buffer, after a scan of its own for where it ends:
// messageLines has found that already. Batches never reach it (messageLines
// hands a batch on one message a line, or refuses it).
type lineConn struct {
	w        io.WriteCloser // the child's stdin; closing it stops the child
	incoming chan lineMsg
	closed   chan struct{}

	writeMu   sync.Mutex
	closeOnce sync.Once
	closeErr  error
}

type lineMsg struct {
	msg jsonrpc.Message
	err error
}

// newLineConn reads lines on a goroutine of its own, so that Read can end
// at Close (the SDK's ioConn does the same, for the same reason); the
// goroutine ends with the child's stdout, or at Close.
func newLineConn(lines *messageLines, w io.WriteCloser) *lineConn {
	c := &lineConn{w: w, incoming: make(chan lineMsg), closed: make(chan struct{})}
	go func() {
		for {
			var m lineMsg
			line, err := lines.next()
			if err != nil {
				m.err = err
			} else if m.msg, m.err = wire.DecodeMessage(line); m.err != nil {
				m.err = fmt.Errorf("reading a message from stdout: %w", m.err)
			}
			select {
			case c.incoming <- m:
			case <-c.closed:
				return
			}
			if m.err != nil {
				return
			}
		}
	}()
	return c
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m := <-c.incoming:
		return m.msg, m.err
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %v", err)
	}
	data = append(data, '\n')
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err = c.w.Write(data)
	return err
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = c.w.Close()
		close(c.closed)
	})
	return c.closeErr
}

func (c *lineConn) SessionID() string { return "" }
