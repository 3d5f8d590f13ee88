package agent

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// startBuiltins starts a host with the fixture server "t" and the granted
// built-in tools, bound as a run would bind them.
func startBuiltins(t *testing.T, a *Agent, o *BuiltinOptions, allowed ...string) (*host.Host, *Builtins) {
	t.Helper()
	b, err := NewBuiltins(a, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := host.Start(ctx, []config.Server{{ID: "t", Command: interop.Build(t, fixturePkg)}},
		&host.Options{InProcess: []host.InProcessServer{b.InProcess()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	m := map[string]bool{}
	for _, n := range allowed {
		m[n] = true
	}
	b.bind(h, m)
	return h, b
}

func call(t *testing.T, h *host.Host, name, args string) (string, bool) {
	t.Helper()
	res, err := h.CallTool(context.Background(), name, json.RawMessage(args), nil)
	if err != nil {
		t.Fatalf("CallTool(%s, %s): %v", name, args, err)
	}
	return Summarize(res), res.IsError
}

func TestBuiltinFiles(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("hello"), 0o644)
	os.Mkdir(filepath.Join(ws, "sub"), 0o755)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("top secret"), 0o644)
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "escape.txt"))
	os.Symlink(outside, filepath.Join(ws, "escape-dir"))
	h, _ := startBuiltins(t, &Agent{Builtins: []string{BuiltinReadFile, BuiltinListDirectory}}, &BuiltinOptions{Workspace: ws})

	if out, isErr := call(t, h, "mcp_builtin_read_file", `{"path":"notes.txt"}`); isErr || out != "hello" {
		t.Errorf("read_file(notes.txt) = %q, %v", out, isErr)
	}
	if out, isErr := call(t, h, "mcp_builtin_list_directory", `{"path":"."}`); isErr || !strings.Contains(out, "notes.txt\n") || !strings.Contains(out, "sub/") {
		t.Errorf("list_directory(.) = %q, %v", out, isErr)
	}
	for _, p := range []string{"../" + filepath.Base(outside) + "/secret.txt", "sub/../../x", filepath.Join(outside, "secret.txt"), "escape.txt", "escape-dir/secret.txt"} {
		out, isErr := call(t, h, "mcp_builtin_read_file", `{"path":`+jsonString(p)+`}`)
		if !isErr || strings.Contains(out, "top secret") {
			t.Errorf("read_file(%q) = %q, %v; want refused", p, out, isErr)
		}
	}
	if out, isErr := call(t, h, "mcp_builtin_list_directory", `{"path":"escape-dir"}`); !isErr {
		t.Errorf("list_directory(escape-dir) = %q; want refused", out)
	}
	if _, ok := h.Tool("mcp_builtin_http_request"); ok {
		t.Error("http_request offered without being granted")
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestBuiltinMCPCall(t *testing.T) {
	h, _ := startBuiltins(t, &Agent{Builtins: []string{BuiltinMCPCall}}, nil, "mcp_t_add")
	if out, isErr := call(t, h, "mcp_builtin_mcp_call", `{"server":"t","tool":"add","args":{"a":2,"b":3}}`); isErr || !strings.Contains(out, "5") {
		t.Errorf("mcp_call add = %q, %v", out, isErr)
	}
	// Not among the run's tools: mcp_call cannot widen them.
	if out, isErr := call(t, h, "mcp_builtin_mcp_call", `{"server":"t","tool":"echo","args":{"text":"x"}}`); !isErr || !strings.Contains(out, "no tool") {
		t.Errorf("mcp_call echo = %q, %v; want refused", out, isErr)
	}
	if out, isErr := call(t, h, "mcp_builtin_mcp_call", `{"server":"t","tool":"add","args":{"a":"x"}}`); !isErr || !strings.Contains(out, "invalid arguments") {
		t.Errorf("mcp_call with invalid args = %q, %v; want the host's validation error", out, isErr)
	}
}

func TestBuiltinHTTP(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-other":
			http.Redirect(w, r, "https://other.example.com/landing", http.StatusFound)
			return
		case "/to-same":
			http.Redirect(w, r, "/landing", http.StatusFound)
			return
		case "/to-evil":
			http.Redirect(w, r, "https://evil.example.com/landing", http.StatusFound)
			return
		case "/landing":
			// What a redirect target got: the host it was sent to, the
			// Referer and the model's header.
			w.Write([]byte("landed at " + r.Host + " referer=" + r.Header.Get("Referer") + " key=" + r.Header.Get("X-Api-Key")))
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("pong " + r.Method))
	}))
	defer srv.Close()
	client := srv.Client()
	// Every allowed host dials the test server.
	tr := client.Transport.(*http.Transport).Clone()
	addr := srv.Listener.Addr().String()
	dial := tr.DialContext
	if dial == nil {
		dial = (&netDialer{}).DialContext
	}
	tr.DialContext = func(ctx context.Context, network, _ string) (netConn, error) { return dial(ctx, network, addr) }
	tr.TLSClientConfig.InsecureSkipVerify = true
	client = &http.Client{Transport: tr}
	h, _ := startBuiltins(t, &Agent{Builtins: []string{BuiltinHTTPRequest}, HTTPAllow: []string{"api.example.com", "other.example.com"}}, &BuiltinOptions{HTTPClient: client})

	if out, isErr := call(t, h, "mcp_builtin_http_request", `{"url":"https://api.example.com/ping"}`); isErr || !strings.Contains(out, "pong GET") {
		t.Errorf("http_request(allowed) = %q, %v", out, isErr)
	}
	// A redirect target gets no Referer (it would carry the token in the
	// query), and another origin none of the model's headers (issue 11 §5).
	for _, tc := range []struct{ path, want string }{
		{"/to-other", "landed at other.example.com referer= key="},
		{"/to-same", "landed at api.example.com referer= key=k-123456"},
	} {
		args := `{"url":"https://api.example.com` + tc.path + `?token=t-123456","headers":{"X-Api-Key":"k-123456"}}`
		if out, isErr := call(t, h, "mcp_builtin_http_request", args); isErr || !strings.Contains(out, tc.want) {
			t.Errorf("http_request(%s) = %q, %v; want %q", tc.path, out, isErr, tc.want)
		}
	}
	if out, isErr := call(t, h, "mcp_builtin_http_request", `{"url":"https://api.example.com/to-evil"}`); !isErr || strings.Contains(out, "landed") {
		t.Errorf("http_request redirected to a host not allowed = %q, %v; want refused", out, isErr)
	}
	for _, u := range []string{"http://api.example.com/", "https://evil.example.com/", "https://api.example.com:8443/", "https://user:pw@api.example.com/", "https://127.0.0.1/"} {
		if out, isErr := call(t, h, "mcp_builtin_http_request", `{"url":`+jsonString(u)+`}`); !isErr || strings.Contains(out, "pong") {
			t.Errorf("http_request(%s) = %q, %v; want refused", u, out, isErr)
		}
	}
}

type netConn = net.Conn
type netDialer = net.Dialer
