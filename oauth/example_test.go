package oauth_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/testkit/testauth"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/oauth"
	"github.com/switchboardmcp/switchboard/secret"
)

// A client of an MCP server that requires OAuth, with client credentials:
// the handler discovers the authorization server from the server's 401
// and asks it for a token; the go-sdk's transport sends it. The servers
// are a real authorization server and the MCP server it protects, on
// loopback (which the guarded client refuses unless the network admits
// it).
func Example() {
	as, stop := testauth.New(nil)
	defer stop()
	network := &netguard.Network{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}

	h, err := oauth.NewHandler(as.URL, &config.OAuth{
		Grant:        config.GrantClientCredentials,
		ClientID:     as.ClientID,
		ClientSecret: as.ClientSecret,
	}, oauth.Options{Server: "protected", HTTPClient: oauth.GuardedClient(nil, network)})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: as.URL, OAuthHandler: h}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: user-1
}

// A browser sign-in (the authorization code grant, as `switchboard auth
// login` runs it): the authorization URL is shown, the browser comes back
// to the loopback callback, and the tokens are stored in the secret store
// under the server's URL, where a later handler — a serve without a
// browser — finds them. Here an HTTP client plays the browser whose user
// approves at once.
func ExampleListen() {
	as, stop := testauth.New(nil)
	defer stop()
	network := &netguard.Network{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	dir, _ := os.MkdirTemp("", "oauth-example")
	defer os.RemoveAll(dir)
	vault, err := secret.OpenStore(&secret.StoreOptions{Dir: dir, Backend: secret.BackendFile})
	if err != nil {
		fmt.Println(err)
		return
	}
	tokens := &oauth.Tokens{Vault: vault, LockPath: dir + "/oauth.lock"}

	login, err := oauth.Listen()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer login.Close()
	browser := make(chan error, 1)
	login.Show = func(authURL string) {
		fmt.Println("visit the authorization URL")
		go func() { browser <- testauth.Authorize(context.Background(), authURL) }()
	}
	conf := &config.OAuth{ClientID: as.ClientID, ClientSecret: as.ClientSecret}
	h, err := oauth.NewHandler(as.URL, conf, oauth.Options{
		Server: "protected", Tokens: tokens, HTTPClient: oauth.GuardedClient(nil, network),
		Fetch: login.Fetch, RedirectURL: login.RedirectURL,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: as.URL, OAuthHandler: h}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	cs.Close()
	fmt.Println("browser:", <-browser)

	// Later, without a browser: the stored login is used.
	rec, _ := tokens.Load(as.URL, as.ClientID)
	fmt.Println("stored for the issuer:", rec.Issuer == as.Issuer, "refreshable:", rec.RefreshToken != "")
	h, _ = oauth.NewHandler(as.URL, conf, oauth.Options{Server: "protected", Tokens: tokens, HTTPClient: oauth.GuardedClient(nil, network)})
	cs, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: as.URL, OAuthHandler: h}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// visit the authorization URL
	// browser: <nil>
	// stored for the issuer: true refreshable: true
	// user-1
}
