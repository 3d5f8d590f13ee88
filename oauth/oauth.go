// Package oauth signs Switchboard in to remote MCP servers that require
// OAuth 2.1, as the MCP authorization spec (2025-11-25) describes, on top
// of the go-sdk's auth package: protected resource metadata (from
// WWW-Authenticate, then the well-known paths), authorization server
// metadata with the 2025-03-26 fallbacks, client ID metadata documents,
// dynamic registration or a pre-registered client, PKCE S256, the resource
// indicator, step-up on insufficient_scope and issuer checks are the
// go-sdk's ([auth.AuthorizationCodeHandler], [extauth.ClientCredentialsHandler]);
// refresh is golang.org/x/oauth2's.
//
// What this package adds: tokens kept in the secret store keyed by
// (resource URL, issuer, client id) and written back at every refresh under
// a file lock, each refresh token spent once across processes ([Tokens]);
// the loopback callback of a browser sign-in, which tells the browser what
// came of it ([Login]); the refusal of an authorization server without
// PKCE S256; a handler that, where no sign-in can run (a serve, a call),
// refreshes once on a 401 and otherwise fails with a [LoginRequiredError]
// naming the command to run ([NewHandler]); every OAuth request through the
// guarded dialer ([GuardedClient]); and [Transport], which carries a handler
// over the transports the go-sdk gives none (legacy SSE, WebSocket).
package oauth
