package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/transport"
)

// TestNoSecretReachesClients is the canary test of every face of the
// gateway: a careless upstream puts the canary secret it was given in every
// field it can fill, another prints it to stderr and dies mid-call, and a
// client sends it back in names the gateway then quotes in its errors. No
// byte any client receives, over any transport, holds it.
func TestNoSecretReachesClients(t *testing.T) {
	canary := interop.NewCanary(t)
	t.Setenv("SWITCHBOARD_SECRET_CANARY", canary)
	leaky := fixture(t, "leaky", "-leak", "TOKEN")
	leaky.Env = map[string]string{"TOKEN": "{{secrets.canary}}"}
	crashy := fixture(t, "crashy", "-print-env", "-crash-on-call")
	crashy.Env = map[string]string{"TOKEN": "{{secrets.canary}}"}
	g, base := serve(t, []config.Server{leaky, crashy}, nil, nil)

	faces := []struct {
		name    string
		version string
		connect func(t *testing.T, c *mcp.Client, rec *recorder, version string) *mcp.ClientSession
	}{
		{"streamable HTTP 2025-11-25", "2025-11-25", func(t *testing.T, c *mcp.Client, rec *recorder, v string) *mcp.ClientSession {
			return dial(t, c, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: rec.httpClient()}, v)
		}},
		{"streamable HTTP 2026-07-28", "2026-07-28", func(t *testing.T, c *mcp.Client, rec *recorder, v string) *mcp.ClientSession {
			return dial(t, c, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: rec.httpClient()}, v)
		}},
		{"SSE", "2025-11-25", func(t *testing.T, c *mcp.Client, rec *recorder, v string) *mcp.ClientSession {
			return dial(t, c, &mcp.SSEClientTransport{Endpoint: base + "/sse", HTTPClient: rec.httpClient()}, v)
		}},
		{"WebSocket", "2025-11-25", func(t *testing.T, c *mcp.Client, rec *recorder, v string) *mcp.ClientSession {
			ws := &transport.WebSocket{URL: "ws" + strings.TrimPrefix(base, "http") + "/ws"}
			return dial(t, c, rec.wrap(ws), v)
		}},
		{"stdio", "2025-11-25", func(t *testing.T, c *mcp.Client, rec *recorder, v string) *mcp.ClientSession {
			// serve --stdio: the gateway's server over a pair of pipes.
			upR, upW := io.Pipe()
			downR, downW := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				g.Server().Run(ctx, &mcp.IOTransport{Reader: upR, Writer: downW})
			}()
			t.Cleanup(func() { cancel(); upW.Close(); downR.Close(); <-done })
			return dial(t, c, &mcp.IOTransport{Reader: io.NopCloser(io.TeeReader(downR, rec)), Writer: upW}, v)
		}},
	}
	for _, face := range faces {
		t.Run(face.name, func(t *testing.T) {
			rec := &recorder{}
			c := mcp.NewClient(&mcp.Implementation{Name: "canary-client", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "decline"}, nil
				},
				CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "ok"}}, nil
				},
				LoggingMessageHandler:       func(context.Context, *mcp.LoggingMessageRequest) {},
				ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {},
			})
			cs := face.connect(t, c, rec, face.version)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if face.version < "2026-07-28" {
				if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
					t.Fatalf("SetLoggingLevel: %v", err)
				}
			}
			cs.ListTools(ctx, nil)
			for _, name := range []string{"mcp_leaky_leak", "mcp_leaky_leak_error", "mcp_leaky_leak_tool_error",
				"mcp_leaky_leak_elicit", "mcp_leaky_leak_sample", "mcp_crashy_echo",
				"mcp_" + canary, // unknown: quoted in the error
			} {
				p := &mcp.CallToolParams{Name: name, Arguments: map[string]any{}}
				if strings.HasSuffix(name, "_echo") {
					p.Arguments = map[string]any{"text": "x"}
				}
				if name == "mcp_leaky_leak" {
					p.Arguments = map[string]any{"x": canary} // the client's own copy comes back redacted
				}
				p.SetProgressToken("canary-progress")
				cs.CallTool(ctx, p)
			}
			cs.ListResources(ctx, nil)
			cs.ListResourceTemplates(ctx, nil)
			cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://leak"})
			cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://" + canary})
			cs.ListPrompts(ctx, nil)
			cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp_leaky_leak"})
			cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: canary})
			cs.Close()

			got := rec.String()
			for _, leak := range interop.Leaks(got, canary) {
				t.Errorf("a client over %s received %s", face.name, leak)
			}
			// The paths were taken: their redacted values are there.
			for _, want := range []string{"text [REDACTED]", "refused: [REDACTED]", "resource [REDACTED]", "prompt text [REDACTED]", "Leaks [REDACTED]"} {
				if !strings.Contains(got, want) {
					t.Errorf("over %s no client received %q: a path was not exercised", face.name, want)
				}
			}
			// The crashed child's error, with its stderr tail, came down
			// (over 2026-07-28 from the call's own connection).
			if !strings.Contains(got, "connection lost") && !strings.Contains(got, "connection was lost") {
				t.Errorf("over %s no client received the crashed child's error: a path was not exercised", face.name)
			}
			if testing.Verbose() {
				t.Logf("received over %s:\n%s", face.name, got)
			}
		})
	}
}

func dial(t *testing.T, c *mcp.Client, tr mcp.Transport, version string) *mcp.ClientSession {
	t.Helper()
	// Not a context with a deadline: the go-sdk's SSE client keeps its
	// event stream on the context given to Connect.
	cs, err := c.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// recorder keeps every byte a client received: HTTP response bodies and
// headers, or the messages read off a connection.
type recorder struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

func (r *recorder) httpClient() *http.Client {
	return &http.Client{Transport: recordingRoundTripper{r}}
}

type recordingRoundTripper struct{ r *recorder }

func (rt recordingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Header.Write(rt.r)
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, rt.r), resp.Body}
	return resp, nil
}

func (r *recorder) wrap(t mcp.Transport) mcp.Transport { return recordingTransport{t, r} }

type recordingTransport struct {
	mcp.Transport
	r *recorder
}

func (t recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return recordingConn{c, t.r}, nil
}

type recordingConn struct {
	mcp.Connection
	r *recorder
}

func (c recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if msg != nil {
		if b, e := jsonrpc.EncodeMessage(msg); e == nil {
			c.r.Write(append(b, '\n'))
		} else {
			json.NewEncoder(c.r).Encode(msg)
		}
	}
	return msg, err
}
