package oauth_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
	"github.com/switchboardmcp/switchboard/internal/testkit/testpg"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/oauth"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/store"

	_ "github.com/jackc/pgx/v5/stdlib"
)

var loopback = &netguard.Network{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}

// Environment of a refreshing child process (TestRefreshChild).
const (
	childEnv    = "SWITCHBOARD_OAUTH_REFRESH_CHILD" // the store's folder
	childURLEnv = "SWITCHBOARD_OAUTH_REFRESH_URL"   // the resource
	childIDEnv  = "SWITCHBOARD_OAUTH_REFRESH_CLIENT"
	childSecEnv = "SWITCHBOARD_OAUTH_REFRESH_SECRET"
	childDBEnv  = "SWITCHBOARD_OAUTH_REFRESH_DB"  // a shared database, if any
	childForEnv = "SWITCHBOARD_OAUTH_REFRESH_FOR" // how long to keep using tokens (a duration); one use if unset
)

// sealerKey seals the records in a shared database.
const sealerKey = "oauth-test-sealer-key-0123456789abcdef"

// openTokens opens the token store of a process: the secret store in dir,
// and, when db is not "", the shared state database in front of it.
func openTokens(t testing.TB, dir, db string) *oauth.Tokens {
	t.Helper()
	v, err := secret.OpenStore(&secret.StoreOptions{Dir: dir, Backend: secret.BackendFile})
	if err != nil {
		t.Fatal(err)
	}
	tokens := &oauth.Tokens{Vault: v, LockPath: filepath.Join(dir, "oauth.lock")}
	if db != "" {
		st, err := store.Open(context.Background(), db, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		sealer, err := secret.NewSealer(sealerKey)
		if err != nil {
			t.Fatal(err)
		}
		tokens.Shared, tokens.Sealer = st, sealer
	}
	return tokens
}

func tokenHash(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:8])
}

// TestTwoProcessesRefresh: two processes find the stored access token
// expired at the same moment. The lock makes one refresh and the other
// take the token it wrote: the refresh token (rotated, the old one revoked
// at its first use) is spent once, and both end with the same valid token.
//
// Two set-ups: two processes of one machine sharing the secret store (the
// lock file beside it); and two replicas, each with a secret store of its
// own, sharing a login in the PostgreSQL state database (its advisory
// lock), where the tokens are sealed.
//
// And with access tokens of 4 s (issue 23 §6), in both set-ups: the two
// keep using tokens for 9 s, finding each expiry at about the same moment
// (they poll in step), and each refresh token is still spent once (the
// one that waited for the lock takes the token the other stored, though
// it lives less than golang.org/x/oauth2's 10 s margin), each token is
// accepted by the server, and tokens are used for most of their life,
// not refreshed at every use.
func TestTwoProcessesRefresh(t *testing.T) {
	t.Run("secret_store", func(t *testing.T) { testTwoProcessesRefresh(t, "", 0) })
	t.Run("shared_database", func(t *testing.T) {
		testTwoProcessesRefresh(t, testpg.CreateDatabase(t, testpg.Start(t), "oauth"), 0)
	})
	t.Run("short_lived", func(t *testing.T) { testTwoProcessesRefresh(t, "", 4*time.Second) })
	t.Run("short_lived_shared_database", func(t *testing.T) {
		testTwoProcessesRefresh(t, testpg.CreateDatabase(t, testpg.Start(t), "oauth"), 4*time.Second)
	})
}

// shortRun is how long the children of a short-lived run keep using
// tokens: two expiries and more.
const shortRun = 9 * time.Second

func testTwoProcessesRefresh(t *testing.T, db string, exp time.Duration) {
	as := testauth.Start(t, &testauth.Options{AccessTokenExp: exp})
	dir := t.TempDir()
	tokens := openTokens(t, dir, db)

	// A login, as auth login stores it: a code grant through the real
	// authorization server, then the access token taken for expired.
	login(t, as, tokens)
	rec, err := tokens.Load(as.URL, as.ClientID)
	if err != nil || rec == nil {
		t.Fatalf("no stored login: %v", err)
	}
	rec.Expiry = time.Now().Add(-time.Minute)
	if err := tokens.Save(*rec); err != nil {
		t.Fatal(err)
	}
	before := as.Refreshes()

	type child struct {
		cmd   *exec.Cmd
		in    io.WriteCloser
		lines *bufio.Scanner
	}
	var children []child
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRefreshChild$", "-test.v")
		childDir := dir
		if db != "" {
			childDir = t.TempDir() // a replica: its own secret store, empty
		}
		cmd.Env = append(os.Environ(), childEnv+"="+childDir, childURLEnv+"="+as.URL, childIDEnv+"="+as.ClientID, childSecEnv+"="+as.ClientSecret, childDBEnv+"="+db)
		if exp > 0 {
			cmd.Env = append(cmd.Env, childForEnv+"="+shortRun.String())
		}
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		children = append(children, child{cmd, in, bufio.NewScanner(out)})
	}
	// Both ready (store opened, expired token loaded), then both go.
	for _, c := range children {
		if !waitLine(c.lines, "ready") {
			t.Fatal("a child never said ready")
		}
	}
	for _, c := range children {
		fmt.Fprintln(c.in, "go")
	}
	var got []string
	for i, c := range children {
		var tok string
		var said []string // what else it said: its failure
		for c.lines.Scan() {
			if h, ok := strings.CutPrefix(c.lines.Text(), "token "); ok {
				tok = h
			} else {
				said = append(said, c.lines.Text())
			}
		}
		if err := c.cmd.Wait(); err != nil || tok == "" {
			t.Fatalf("child %d: %v, token hash %q\n%s", i, err, tok, strings.Join(said, "\n"))
		}
		got = append(got, tok)
	}
	if n := as.RefreshTokenReuses(); n != 0 {
		t.Errorf("%d refresh_token grants presented a refresh token spent already, want 0", n)
	}
	if exp > 0 {
		// 4 s tokens renewed a quarter of their life early, over 9 s: about
		// one refresh every 3 s between the two, the first at once.
		n := as.Refreshes() - before
		if most := int(shortRun/(exp*3/4)) + 2; n < 2 || n > most {
			t.Errorf("refresh_token grants = %d over %s of 4 s tokens, want 2 to %d: each token refreshed once, when due", n, shortRun, most)
		}
		return // the children checked each token with the server
	}
	if n := as.Refreshes() - before; n != 1 {
		t.Errorf("refresh_token grants = %d, want 1 (the refresh token spent once)", n)
	}
	stored, _ := openTokens(t, dir, db).Load(as.URL, as.ClientID)
	if stored == nil || got[0] != tokenHash(stored.AccessToken) || got[1] != got[0] {
		t.Errorf("children's tokens %v, stored %v: want both the one stored", got, stored != nil)
	}
	if stored != nil && !stored.Token().Valid() {
		t.Errorf("the stored token is not valid")
	}
	// The server accepts it.
	req, _ := http.NewRequest(http.MethodPost, as.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+stored.AccessToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		t.Errorf("the MCP server refused the refreshed token: %s", resp.Status)
	}
	if db != "" {
		checkSealed(t, db, stored)
	}
}

// checkSealed reads the database around the store: the row of the login
// holds neither token nor the client secret in the clear.
func checkSealed(t *testing.T, db string, rec *oauth.Record) {
	t.Helper()
	value := loginRow(t, db, rec.Resource)
	for what, v := range map[string]string{"access token": rec.AccessToken, "refresh token": rec.RefreshToken, "client id": rec.ClientID} {
		if v != "" && strings.Contains(value, v) {
			t.Errorf("the database holds the %s in the clear", what)
		}
	}
	if !strings.HasPrefix(value, "sb1.") {
		t.Errorf("the row is %.12q…, want a sealed value (sb1.…)", value)
	}
}

func waitLine(sc *bufio.Scanner, want string) bool {
	for sc.Scan() {
		if sc.Text() == want {
			return true
		}
	}
	return false
}

// TestRefreshChild is one process of TestTwoProcessesRefresh.
func TestRefreshChild(t *testing.T) {
	dir := os.Getenv(childEnv)
	if dir == "" {
		t.Skip("run by TestTwoProcessesRefresh")
	}
	tokens := openTokens(t, dir, os.Getenv(childDBEnv))
	d := &netguard.Dialer{}
	h, err := oauth.NewHandler(os.Getenv(childURLEnv), &config.OAuth{ClientID: os.Getenv(childIDEnv), ClientSecret: os.Getenv(childSecEnv)},
		oauth.Options{Server: "remote", Tokens: tokens, HTTPClient: oauth.GuardedClient(d, loopback)})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := h.TokenSource(context.Background())
	if err != nil || ts == nil {
		t.Fatalf("no stored token: %v", err)
	}
	fmt.Println("ready")
	if !waitLine(bufio.NewScanner(os.Stdin), "go") {
		t.Fatal("no go")
	}
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := time.ParseDuration(os.Getenv(childForEnv)); d > 0 {
		// Keep using tokens, checking each new one with the server.
		end := time.Now().Add(d)
		last := ""
		for {
			if tok.AccessToken != last {
				if err := accepted(os.Getenv(childURLEnv), tok.AccessToken); err != nil {
					t.Fatal(err)
				}
				last = tok.AccessToken
				fmt.Println("token " + tokenHash(tok.AccessToken))
			}
			if time.Now().After(end) {
				return
			}
			time.Sleep(100 * time.Millisecond) // a process using its token now and then
			if tok, err = ts.Token(); err != nil {
				t.Fatal(err)
			}
		}
	}
	fmt.Println("token " + tokenHash(tok.AccessToken))
}

// accepted says whether the MCP server at url accepts the access token.
func accepted(url, token string) error {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return fmt.Errorf("the MCP server refused the token: %s", resp.Status)
	}
	return nil
}

// login signs in through the authorization server, driving the
// authorization URL as a browser would, and stores the tokens.
func login(t *testing.T, as *testauth.Server, tokens *oauth.Tokens) {
	t.Helper()
	l, err := oauth.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	errc := make(chan error, 1)
	l.Show = func(u string) { go func() { errc <- testauth.Authorize(context.Background(), u) }() }
	h, err := oauth.NewHandler(as.URL, &config.OAuth{ClientID: as.ClientID, ClientSecret: as.ClientSecret}, oauth.Options{
		Server: "remote", Tokens: tokens, HTTPClient: oauth.GuardedClient(&netguard.Dialer{}, loopback),
		Fetch: l.Fetch, RedirectURL: l.RedirectURL,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The server's 401, as a request without a token gets it.
	resp, err := http.Post(as.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, as.URL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Authorize(ctx, req, resp); err != nil {
		t.Fatalf("login: %v", err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("driving the authorization URL: %v", err)
	}
}

// loginRow reads the value the database holds for resource's login, as
// whoever reads the database would.
func loginRow(t *testing.T, db, resource string) string {
	t.Helper()
	raw, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var value string
	if err := raw.QueryRow(`SELECT value FROM secrets WHERE name = $1`, oauth.SecretName(resource)).Scan(&value); err != nil {
		t.Fatalf("the login's row: %v", err)
	}
	return value
}
