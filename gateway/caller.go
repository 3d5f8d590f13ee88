package gateway

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/host"
)

// Who calls: the gateway names each tools/call's caller for the host
// (host.CallOptions.Caller), which tells in-process servers alone (a
// published workflow scopes a client's idempotency key to it). The name
// comes from how the request was authenticated, never from what the
// client says of itself:
//
//   - "oauth:SUBJECT" (and " client:ID" when the token names a client
//     other than its subject) for a request with an OAuth access token;
//   - "owner" for the owner: a request with the auth token (or the web
//     UI's session cookie), through a Local guard or on a
//     guard.LocalContext (the daemon's owner-only socket), or on a
//     session served on a guard.OwnerContext (stdio, whose client started
//     the process);
//   - "endpoint:NAME" for a request let in by the endpoint NAME's own
//     token (guard.EndpointOf);
//   - "session:ID" for anyone else on a session of its own;
//   - host.CallerAnonymous for a request with none of these (a 2026-07-28
//     request or a WebSocket connection, anonymous on loopback).

// callerOf names who req comes from (see above).
func callerOf(ctx context.Context, req mcp.Request) string {
	if ti := tokenInfo(ctx, req); ti != nil && ti.UserID != "" {
		c := "oauth:" + ti.UserID
		claims, _ := ti.Extra["claims"].(map[string]any)
		client, _ := claims["client_id"].(string)
		if client == "" {
			client, _ = claims["azp"].(string)
		}
		if client != "" && client != ti.UserID {
			c += " client:" + client
		}
		return c
	}
	if guard.IsOwner(ctx) {
		return "owner"
	}
	if name, ok := guard.EndpointOf(ctx); ok {
		return "endpoint:" + name
	}
	if ss := req.GetSession(); ss != nil && !reflect.ValueOf(ss).IsNil() {
		if id := ss.ID(); id != "" {
			return "session:" + id
		}
	}
	return host.CallerAnonymous
}

// idempotencyKey is the key a call names in its _meta
// (host.MetaKeyIdempotencyKey): a string as it is, another JSON value as
// its JSON text; "" for none.
func idempotencyKey(req *mcp.CallToolRequest) string {
	v, ok := req.Params.GetMeta()[host.MetaKeyIdempotencyKey]
	if !ok || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
