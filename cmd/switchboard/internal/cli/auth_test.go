package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/cmd/switchboard/internal/cli"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
	"github.com/switchboardmcp/switchboard/internal/testkit/testpg"
)

// authEnv is a config with one server protected by a real authorization
// server (internal/testkit/testauth), a file secret store in a temporary home.
func authEnv(t *testing.T, o *testauth.Options) (*testauth.Server, string) {
	t.Helper()
	as := testauth.Start(t, o)
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("HOME", filepath.Join(dir, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("SWITCHBOARD_CONFIG", "")
	t.Setenv("SWITCHBOARD_SECRETS_BACKEND", "file")
	cfg := filepath.Join(dir, "switchboard.toml")
	// The authorization server is on another loopback port than the MCP
	// server that allow_local_endpoint admits.
	body := fmt.Sprintf(`
[network]
allow_cidrs = ["127.0.0.0/8"]

[[mcp_servers]]
id = "remote"
url = %s
allow_local_endpoint = true
connect_timeout = "20s"
oauth = { client_id = %s, client_secret = "{{secrets.as_secret}}" }
`, strconv.Quote(as.URL), strconv.Quote(as.ClientID))
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := authMain(t, strings.NewReader(as.ClientSecret), "secrets", "set", "as_secret"); code != 0 {
		t.Fatalf("secrets set: exit %d\n%s%s", code, out, errOut)
	}
	return as, cfg
}

// authMain runs the command in-process and returns its stdout, stderr and
// exit code.
func authMain(t *testing.T, stdin io.Reader, args ...string) (string, string, int) {
	t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code := cli.Main(ctx, args, stdin, &out, &errOut)
	return out.String(), errOut.String(), code
}

type authStatus struct {
	Server       string    `json:"server"`
	SignedIn     bool      `json:"signed_in"`
	Issuer       string    `json:"issuer"`
	ClientID     string    `json:"client_id"`
	Scopes       []string  `json:"scopes"`
	Expiry       time.Time `json:"expiry"`
	RefreshToken bool      `json:"refresh_token"`
}

func statusJSON(t *testing.T) (authStatus, string) {
	t.Helper()
	out, errOut, code := authMain(t, nil, "auth", "status", "--json")
	if code != 0 {
		t.Fatalf("auth status --json: exit %d\n%s", code, errOut)
	}
	var st []authStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil || len(st) != 1 {
		t.Fatalf("auth status --json = %q: %v, want one entry", out, err)
	}
	return st[0], out
}

// noToken fails if any token the servers saw is in text.
func noToken(t *testing.T, as *testauth.Server, what, text string) {
	t.Helper()
	for _, tok := range as.TokensSeen() {
		if tok != "" && strings.Contains(text, tok) {
			t.Errorf("%s contains an access token:\n%s", what, text)
		}
	}
}

// login runs auth login remote --no-browser, visiting the URL it prints as
// a browser would, and returns its stderr.
func login(t *testing.T) string {
	t.Helper()
	// Its stderr is read line by line, and the URL it prints visited.
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var errOut bytes.Buffer
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		code := cli.Main(ctx, []string{"auth", "login", "remote", "--no-browser"}, strings.NewReader(""), io.Discard, io.MultiWriter(pw, &errOut))
		pw.Close()
		done <- code
	}()
	visited := make(chan error, 1)
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "  http://"); ok {
			go func() { visited <- testauth.Authorize(context.Background(), "http://"+u) }()
		}
	}
	if code := <-done; code != 0 {
		t.Fatalf("auth login: exit %d\n%s", code, errOut.String())
	}
	if err := <-visited; err != nil {
		t.Fatalf("visiting the sign-in URL: %v\n%s", err, errOut.String())
	}
	return errOut.String()
}

// TestAuthCommands: auth login --no-browser prints the URL, a browser
// (an HTTP client) follows it to the loopback callback and the tokens are
// stored; auth status says signed in, with issuer, client, scopes and
// expiry, never a token; the stored login serves a later command; auth
// logout removes it. --token-stdin stores a token without a sign-in.
func TestAuthCommands(t *testing.T) {
	as, _ := authEnv(t, &testauth.Options{Scopes: []string{"tools"}})

	st, _ := statusJSON(t)
	if st.Server != "remote" || st.SignedIn {
		t.Fatalf("status before login = %+v, want remote not signed in", st)
	}
	if out, _, _ := authMain(t, nil, "auth", "status"); !strings.Contains(out, "not signed in (switchboard auth login remote)") {
		t.Errorf("auth status before login = %q, want the command to run", out)
	}

	errOut := login(t)
	if !strings.Contains(errOut, "signed in to remote") {
		t.Errorf("auth login stderr = %q, want it to say signed in", errOut)
	}
	noToken(t, as, "auth login's output", errOut)

	st, raw := statusJSON(t)
	if !st.SignedIn || st.Issuer != as.Issuer || st.ClientID != as.ClientID || !st.RefreshToken ||
		st.Expiry.IsZero() || strings.Join(st.Scopes, " ") != "tools" {
		t.Errorf("status after login = %+v; want signed in at %s as %s, refreshable, expiry, scopes [tools]", st, as.Issuer, as.ClientID)
	}
	noToken(t, as, "auth status --json", raw)
	text, _, _ := authMain(t, nil, "auth", "status")
	noToken(t, as, "auth status", text)

	// The stored login serves a command that cannot sign in.
	out, errText, code := authMain(t, nil, "tools", "--json")
	if code != 0 || !strings.Contains(out, "whoami") {
		t.Fatalf("tools after login: exit %d, %q\n%s", code, out, errText)
	}
	noToken(t, as, "tools output", out+errText)

	if _, errText, code := authMain(t, nil, "auth", "logout", "remote"); code != 0 || !strings.Contains(errText, "signed out of remote") {
		t.Fatalf("auth logout: exit %d, %q", code, errText)
	}
	if st, _ := statusJSON(t); st.SignedIn {
		t.Errorf("status after logout = %+v, want not signed in", st)
	}
	_, errText, code = authMain(t, nil, "tools")
	if code == 0 || !strings.Contains(errText, "switchboard auth login remote") {
		t.Errorf("tools after logout: exit %d, stderr %q; want a failure naming the command to run", code, errText)
	}

	// Headless seeding: a token from stdin is stored and never shown.
	const seeded = "seeded-access-token-8d2c"
	if _, errText, code := authMain(t, strings.NewReader(seeded+"\n"), "auth", "login", "remote", "--token-stdin"); code != 0 {
		t.Fatalf("auth login --token-stdin: exit %d, %q", code, errText)
	}
	st, raw = statusJSON(t)
	if !st.SignedIn || st.RefreshToken {
		t.Errorf("status after --token-stdin = %+v, want signed in, not refreshable", st)
	}
	// The server refuses the seeded token (it never issued it): the
	// command fails naming the login to run, without the token.
	out, errText, code = authMain(t, nil, "tools")
	if code == 0 || !strings.Contains(errText, "switchboard auth login remote") {
		t.Errorf("tools with a refused seeded token: exit %d, stderr %q", code, errText)
	}
	for what, s := range map[string]string{"auth status --json": raw, "tools output": out + errText} {
		if strings.Contains(s, seeded) {
			t.Errorf("%s contains the seeded token:\n%s", what, s)
		}
	}
	var seen bool
	for _, tok := range as.TokensSeen() {
		seen = seen || tok == seeded
	}
	if !seen {
		t.Errorf("the seeded token was never sent to the server")
	}
}

// TestAuthSharedDatabase: with a PostgreSQL state database, a login made
// on one machine serves another whose secret store is empty (a replica),
// sealed in the database under [state] encryption_key; a replica with
// another key, or with the key unset, is told so by name; a logout on
// the replica signs both out.
func TestAuthSharedDatabase(t *testing.T) {
	as, cfg := authEnv(t, nil)
	db := testpg.CreateDatabase(t, testpg.Start(t), "auth_shared")
	body, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	body = append([]byte(fmt.Sprintf("[state]\ndatabase = %q\nencryption_key = \"{{env.SB_STATE_KEY}}\"\n", db)), body...)
	// A server that does not sign in, which no trouble with the tokens
	// may touch.
	body = fmt.Appendf(body, "\n[[mcp_servers]]\nid = \"local\"\ncommand = %q\n", interop.Build(t, "github.com/switchboardmcp/switchboard/internal/testkit/testserver"))
	if err := os.WriteFile(cfg, body, 0o600); err != nil {
		t.Fatal(err)
	}
	const key = "auth-shared-test-key-0123456789abcdef"
	t.Setenv("SB_STATE_KEY", key)
	login(t)

	// Another machine: its own home, no secrets but the client's (set as
	// an environment variable, as a container is given it).
	replica := t.TempDir()
	t.Setenv("HOME", filepath.Join(replica, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(replica, "xdg"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(replica, "state"))
	t.Setenv("SWITCHBOARD_SECRET_AS_SECRET", as.ClientSecret)
	st, raw := statusJSON(t)
	if !st.SignedIn || st.Issuer != as.Issuer || !st.RefreshToken {
		t.Fatalf("the replica's status = %+v, want signed in, refreshable", st)
	}
	noToken(t, as, "the replica's auth status --json", raw)
	_, errText, _ := authMain(t, nil, "auth", "status")
	if !strings.Contains(errText, "logins are kept in the state database postgres://") || !strings.Contains(errText, "key id ") || strings.Contains(errText, key) {
		t.Errorf("auth status stderr = %q; want the database and the key id, not the key", errText)
	}
	out, errText, code := authMain(t, nil, "tools", "--json")
	if code != 0 || !strings.Contains(out, "whoami") {
		t.Fatalf("tools on the replica: exit %d, %q\n%s", code, out, errText)
	}

	// Another key: the login cannot be opened, and the error says which
	// setting to compare; no key at all: the placeholder is named.
	t.Setenv("SB_STATE_KEY", strings.Repeat("x", 40))
	if st, raw := statusJSON(t); st.SignedIn || !strings.Contains(raw, "sealed under another key") || !strings.Contains(raw, "encryption_key") {
		t.Errorf("status under another key = %s; want an error naming the key and the setting", raw)
	}
	_, errText, code = authMain(t, nil, "tools")
	if code == 0 || !strings.Contains(errText, "encryption_key") {
		t.Errorf("tools under another key: exit %d, %q; want a failure naming encryption_key", code, errText)
	}
	os.Unsetenv("SB_STATE_KEY")
	_, errText, code = authMain(t, nil, "call", "mcp_remote_whoami")
	if code == 0 || !strings.Contains(errText, "{{env.SB_STATE_KEY}} is not set") {
		t.Errorf("call remote with the key unset: exit %d, %q; want a failure naming the placeholder", code, errText)
	}
	// Only the servers that sign in fail: with remote optional, local
	// answers.
	optional := strings.Replace(string(body), "id = \"remote\"\n", "id = \"remote\"\noptional = true\n", 1)
	if err := os.WriteFile(cfg, []byte(optional), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errText, code := authMain(t, nil, "call", "mcp_local_echo", "--arg", "text=still here"); code != 0 || !strings.Contains(out, "still here") {
		t.Errorf("call local with the key unset: exit %d, %q, %q; want its answer", code, out, errText)
	}

	// The key is rotated: the new one seals, the old one is a fallback;
	// auth status reads the login and seals it again under the new key,
	// which then serves alone.
	const newKey = "auth-shared-rotated-key-0123456789abcdef"
	t.Setenv("SB_STATE_KEY", newKey)
	t.Setenv("SB_OLD_KEY", key)
	rotating := strings.Replace(optional, "encryption_key = \"{{env.SB_STATE_KEY}}\"\n", "encryption_key = \"{{env.SB_STATE_KEY}}\"\nencryption_key_fallbacks = [\"{{env.SB_OLD_KEY}}\"]\n", 1)
	if rotating == optional {
		t.Fatal("no encryption_key line to add the fallbacks after")
	}
	if err := os.WriteFile(cfg, []byte(rotating), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, raw := statusJSON(t); !st.SignedIn {
		t.Errorf("status with the old key as a fallback = %s; want signed in", raw)
	}
	if _, errText, _ := authMain(t, nil, "auth", "status"); !strings.Contains(errText, "also opened with ") || strings.Contains(errText, key) || strings.Contains(errText, newKey) {
		t.Errorf("auth status stderr while rotating = %q; want the fallback's key id, no key", errText)
	}
	if err := os.WriteFile(cfg, []byte(optional), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, raw := statusJSON(t); !st.SignedIn {
		t.Errorf("status with the new key alone, after the rotation = %s; want signed in", raw)
	}
	if out, errText, code := authMain(t, nil, "call", "mcp_remote_whoami"); code != 0 {
		t.Errorf("call remote with the new key alone: exit %d, %q, %q", code, out, errText)
	}

	if _, errText, code := authMain(t, nil, "auth", "logout", "remote"); code != 0 || !strings.Contains(errText, "signed out of remote") {
		t.Fatalf("auth logout on the replica: exit %d, %q", code, errText)
	}
	t.Setenv("HOME", filepath.Join(filepath.Dir(cfg), "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(filepath.Dir(cfg), "xdg"))
	if st, _ := statusJSON(t); st.SignedIn {
		t.Errorf("the first machine's status after the replica's logout = %+v, want signed out", st)
	}
}
