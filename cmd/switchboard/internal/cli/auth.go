package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/oauth"
	"github.com/switchboardmcp/switchboard/secret"
)

// oauthTokens is where the OAuth tokens of servers with an oauth table are
// kept: the secret store, with a lock file beside the encrypted file's
// folder; or, when [state] database is PostgreSQL, that database, which
// every replica shares, sealed under [state] encryption_key (a login made
// in the secret store before is found there until a write copies it). The
// error says why they cannot be kept. Made once per command: the login
// command and its host share one.
func (e *env) oauthTokens(cfg *config.Config) (*oauth.Tokens, error) {
	if e.tokens == nil && e.tokensErr == nil {
		e.tokens, e.tokensErr = e.newOAuthTokens(cfg)
	}
	return e.tokens, e.tokensErr
}

func (e *env) newOAuthTokens(cfg *config.Config) (*oauth.Tokens, error) {
	v, verr := e.openStore()
	t := &oauth.Tokens{LockPath: filepath.Join(e.configDir(), "oauth.lock"), Redactor: e.red}
	if verr == nil {
		t.Vault = v
	}
	if !cfg.State.Shared() {
		if verr != nil {
			return nil, fmt.Errorf("no secret store for the OAuth tokens: %w", verr)
		}
		return t, nil
	}
	st := e.stateStore(cfg)
	if st == nil {
		return nil, fmt.Errorf("OAuth tokens are kept in the state database, which cannot be opened: %w", e.stateErr)
	}
	t.Shared = st
	var secrets secret.Store = secret.EnvStore{LookupEnv: e.lookupEnv}
	if t.Vault != nil {
		secrets = t.Vault
	}
	key, err := cfg.State.ResolveEncryptionKey(e.lookupEnv, secrets, e.red)
	if err != nil {
		return nil, err
	}
	fallbacks, err := cfg.State.ResolveEncryptionKeyFallbacks(e.lookupEnv, secrets, e.red)
	if err != nil {
		return nil, err
	}
	if key != "" { // else every use says the key is missing (oauth.ErrNoSealer)
		if t.Sealer, err = secret.NewSealer(key, fallbacks...); err != nil {
			return nil, fmt.Errorf("state.encryption_key: %w", err) // "fallback key N: …" for a fallback
		}
	}
	return t, nil
}

// configDir is $XDG_CONFIG_HOME/switchboard, else ~/.config/switchboard:
// where the secret store's file lives.
func (e *env) configDir() string {
	if base, ok := e.lookupEnv("XDG_CONFIG_HOME"); ok && filepath.IsAbs(base) {
		return filepath.Join(base, "switchboard")
	}
	home, ok := e.lookupEnv("HOME")
	if !ok || home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".config", "switchboard")
}

func (e *env) authCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Sign in to remote servers that require OAuth",
		Long: `Signs in to remote MCP servers whose configuration has an oauth table, and
shows or removes the stored logins. Tokens live in the secret store (see
switchboard secrets), keyed by the server's URL, the authorization server and
the client id, and are refreshed and written back as they expire.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(e.authLoginCommand(), e.authStatusCommand(), e.authLogoutCommand())
	return cmd
}

// oauthServer is the configured server id, which must have an oauth table.
func (e *env) oauthServer(id string) (*config.Config, config.Server, error) {
	cfg, err := e.loadConfig()
	if err != nil {
		return nil, config.Server{}, err
	}
	s, ok := cfg.Server(id)
	if !ok {
		return nil, config.Server{}, unknownServer(cfg, id)
	}
	if s.OAuth == nil {
		return nil, config.Server{}, usageErr("server %q has no oauth table: add oauth = {} to sign in with OAuth", id)
	}
	return cfg, s, nil
}

func (e *env) authLoginCommand() *cobra.Command {
	var noBrowser, tokenStdin bool
	cmd := &cobra.Command{
		Use:   "login SERVER",
		Short: "Sign in to a server in the browser and store its tokens",
		Long: `Signs in to SERVER: discovers its authorization server, registers or uses the
configured client, opens the authorization page in the browser (or prints its
URL with --no-browser), receives the code on a callback at
http://127.0.0.1:PORT/callback and stores the tokens.

With --token-stdin, stores the access token read from stdin instead (CI and
servers without a browser); it is used until it expires and is not refreshed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, s, err := e.oauthServer(args[0])
			if err != nil {
				return err
			}
			tokens, err := e.oauthTokens(cfg)
			if err != nil {
				return failed(err)
			}
			if tokenStdin {
				b, err := io.ReadAll(io.LimitReader(e.stdin, maxSecretBytes))
				if err != nil {
					return failed(err)
				}
				tok := strings.TrimSpace(string(b))
				if tok == "" || strings.ContainsAny(tok, " \t\r\n") {
					return usageErr("--token-stdin: want one access token on stdin")
				}
				e.red.Add(tok)
				if err := tokens.Save(oauth.Record{Resource: s.URL, Issuer: "stdin", ClientID: s.OAuth.ClientID, AccessToken: tok, TokenType: "Bearer"}); err != nil {
					return failed(err)
				}
				fmt.Fprintf(e.stderr, "switchboard: stored the token for %s\n", s.ID)
				return nil
			}
			l, err := oauth.Listen()
			if err != nil {
				return failed(err)
			}
			defer l.Close()
			l.Show = func(u string) {
				if u == "" {
					fmt.Fprintln(e.stderr, "switchboard: the browser did not open; visit the URL above")
					return
				}
				fmt.Fprintf(e.stderr, "switchboard: sign in to %s at:\n  %s\n", s.ID, u)
			}
			if !noBrowser {
				l.Open = oauth.OpenBrowser
			}
			opts, err := e.hostOptions(cfg)
			if err != nil {
				return err
			}
			opts.OAuthLogin, opts.OAuthRedirectURL = l.Fetch, l.RedirectURL
			h, err := e.connect(cmd.Context(), []config.Server{s}, opts)
			if err != nil {
				return err
			}
			h.Close()
			fmt.Fprintf(e.stderr, "switchboard: signed in to %s\n", s.ID)
			return nil
		},
	}
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "print the sign-in URL instead of opening a browser")
	cmd.Flags().BoolVar(&tokenStdin, "token-stdin", false, "store the access token read from stdin instead of signing in")
	return cmd
}

type authStatusJSON struct {
	Server           string    `json:"server"`
	Resource         string    `json:"resource"`
	SignedIn         bool      `json:"signed_in"`
	Issuer           string    `json:"issuer,omitempty"`
	ClientID         string    `json:"client_id,omitempty"`
	Scopes           []string  `json:"scopes,omitempty"`
	Expiry           time.Time `json:"expiry,omitzero"`
	RefreshToken     bool      `json:"refresh_token"`
	ClientCredential bool      `json:"client_credentials,omitempty"`
	// Error says why the login cannot be read.
	Error string `json:"error,omitempty"`
}

func (e *env) authStatusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Say which servers are signed in, until when, with which scopes (never the tokens)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := e.loadConfig()
			if err != nil {
				return err
			}
			tokens, terr := e.oauthTokens(cfg)
			if terr != nil {
				return failed(terr)
			}
			var out []authStatusJSON
			for _, s := range cfg.Servers {
				if s.OAuth == nil {
					continue
				}
				j := authStatusJSON{Server: s.ID, Resource: s.URL, ClientCredential: s.OAuth.Grant == config.GrantClientCredentials}
				r, err := tokens.Load(s.URL, s.OAuth.ClientID)
				if err != nil {
					j.Error = err.Error() // the redactor's: never a token
				}
				if r != nil {
					j.SignedIn, j.Issuer, j.ClientID, j.Scopes, j.Expiry, j.RefreshToken = true, r.Issuer, r.ClientID, r.Scopes, r.Expiry, r.RefreshToken != ""
				}
				out = append(out, j)
			}
			if e.jsonOut {
				if out == nil {
					out = []authStatusJSON{}
				}
				return e.printJSON(out)
			}
			if len(out) > 0 {
				fmt.Fprintf(e.stderr, "switchboard: logins are kept in %s\n", tokens.Location())
			}
			for _, j := range out {
				switch {
				case j.ClientCredential:
					e.printf("%s\tclient credentials (no sign-in)\n", j.Server)
				case j.Error != "":
					e.printf("%s\tcannot read its login: %s\n", j.Server, j.Error)
				case !j.SignedIn:
					e.printf("%s\tnot signed in (switchboard auth login %s)\n", j.Server, j.Server)
				default:
					exp := "no expiry"
					if !j.Expiry.IsZero() {
						exp = "expires " + j.Expiry.Local().Format(time.RFC3339)
					}
					if j.RefreshToken {
						exp += ", refreshable"
					}
					e.printf("%s\tsigned in at %s as client %s; %s; scopes: %s\n", j.Server, j.Issuer, j.ClientID, exp, strings.Join(j.Scopes, " "))
				}
			}
			return nil
		},
	}
}

func (e *env) authLogoutCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "logout SERVER",
		Short: "Remove the tokens stored for a server",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, s, err := e.oauthServer(args[0])
			if err != nil {
				return err
			}
			tokens, err := e.oauthTokens(cfg)
			if err != nil {
				return failed(err)
			}
			n, err := tokens.Delete(s.URL)
			if err != nil {
				return failed(err)
			}
			if n == 0 {
				fmt.Fprintf(e.stderr, "switchboard: %s was not signed in\n", s.ID)
				return nil
			}
			fmt.Fprintf(e.stderr, "switchboard: signed out of %s\n", s.ID)
			return nil
		},
	}
}
