// Package transport provides the MCP transports that the go-sdk does not:
// a stdio child process that is isolated and always stopped, and WebSocket.
package transport

import (
	"context"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Command runs a stdio MCP server as a child process.
type Command struct {
	Path            string
	Args            []string
	Env             []string // the child's whole environment
	Dir             string
	Stderr          io.Writer // receives the child's stderr; nil discards it
	MaxMessageBytes int
	TerminateGrace  time.Duration
}

// Connect starts the child.
func (c *Command) Connect(ctx context.Context) (mcp.Connection, error) { panic("TODO") }

// MinimalEnv returns PATH, HOME, locale variables from the host plus extra.
func MinimalEnv(extra map[string]string) []string { panic("TODO") }
