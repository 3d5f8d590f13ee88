package replicatest

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
)

// stateKey is the replicas' [state] encryption_key, given to each as an
// environment secret, as a container is.
const stateKey = "replicatest-state-key-0123456789abcdef"

// TestReplicasShareALogin: one `switchboard auth login`, made on another
// machine (a home of its own), serves both replicas, whose secret stores
// hold nothing of it: the login is in the PostgreSQL state database,
// sealed under [state] encryption_key. When the authorization server
// revokes the access token, both replicas, called at once, are refused;
// the database's lock has one of them refresh and the other take the
// token it wrote, so the refresh token (rotated, the old one revoked at
// its first use) is spent once, and both answer.
func TestReplicasShareALogin(t *testing.T) {
	as := testauth.Start(t, nil)
	c := newCluster(t, clusterOptions{
		state: `encryption_key = "{{secrets.state_key}}"`,
		config: fmt.Sprintf(`
[network]
allow_cidrs = ["127.0.0.0/8"]

[[mcp_servers]]
id = "remote"
url = %q
allow_local_endpoint = true
oauth = { client_id = %q, client_secret = "{{secrets.as_secret}}" }
`, as.URL, as.ClientID),
		env: []string{"SWITCHBOARD_SECRET_AS_SECRET=" + as.ClientSecret, "SWITCHBOARD_SECRET_STATE_KEY=" + stateKey},
	})
	c.login(t, "remote")
	c.startReplicas(t, 2)

	call := func(r *replica, cs *mcp.ClientSession) error {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_remote_whoami"})
		if err != nil {
			return fmt.Errorf("replica %s: %v", r.name, err)
		}
		if res.IsError || len(res.Content) == 0 || res.Content[0].(*mcp.TextContent).Text != "user-1" {
			return fmt.Errorf("replica %s: whoami = %+v", r.name, res.Content)
		}
		return nil
	}
	sessions := map[*replica]*mcp.ClientSession{}
	for _, r := range c.replicas {
		sessions[r] = connect(t, r.url, "2025-11-25", nil)
		if err := call(r, sessions[r]); err != nil {
			t.Fatalf("%v; its output:\n%s", err, r.out)
		}
	}
	if n := as.Refreshes(); n != 0 {
		t.Fatalf("%d refreshes before any token expired", n)
	}

	as.RevokeAccessTokens()
	var wg sync.WaitGroup
	errs := make(chan error, len(c.replicas))
	for _, r := range c.replicas {
		wg.Go(func() { errs <- call(r, sessions[r]) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("after the revocation: %v", err)
		}
	}
	if n := as.Refreshes(); n != 1 {
		t.Errorf("%d refresh_token grants after the revocation, want 1 (the refresh token spent once by two replicas)", n)
	}
	for _, r := range c.replicas {
		for _, tok := range as.TokensSeen() {
			if strings.Contains(r.out.String(), tok) {
				t.Errorf("replica %s's output holds an access token", r.name)
			}
		}
	}
}

// login runs `switchboard auth login SERVER --no-browser` on a machine of
// its own and visits the URL it prints as a browser would.
func (c *cluster) login(t *testing.T, server string) {
	t.Helper()
	cmd, _ := c.command(t, "auth", "login", server, "--no-browser")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := interop.StartWithTest(cmd); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	visited := make(chan error, 1)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if u, ok := strings.CutPrefix(sc.Text(), "  http://"); ok {
			go func() { visited <- testauth.Authorize(context.Background(), "http://"+u) }()
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("auth login %s: %v\n%s", server, err, out.String())
	}
	if err := <-visited; err != nil {
		t.Fatalf("visiting the sign-in URL: %v\n%s", err, out.String())
	}
}
