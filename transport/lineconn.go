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
//
// Read reads the pipe itself, on the caller's goroutine (the SDK's one
// reader of the connection), where the SDK's connection hands each
// message over from a goroutine of its own: one wake-up less per message.
// A Read waiting for the child ends when the child's stdout does, which
// Close makes happen: it stops the child.
type lineConn struct {
	lines  *messageLines
	w      io.WriteCloser // the child's stdin; closing it stops the child
	closed chan struct{}

	readErr   error // the error that ended reading; Read's alone
	writeMu   sync.Mutex
	closeOnce sync.Once
	closeErr  error
}

func newLineConn(lines *messageLines, w io.WriteCloser) *lineConn {
	return &lineConn{lines: lines, w: w, closed: make(chan struct{})}
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case <-c.closed:
		return nil, io.EOF
	default:
	}
	if c.readErr != nil {
		return nil, c.readErr
	}
	line, err := c.lines.next()
	if err != nil {
		select {
		case <-c.closed:
			err = io.EOF
		default:
		}
		c.readErr = err
		return nil, err
	}
	msg, err := wire.DecodeMessage(line)
	if err != nil {
		c.readErr = fmt.Errorf("reading a message from stdout: %w", err)
		return nil, c.readErr
	}
	return msg, nil
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
