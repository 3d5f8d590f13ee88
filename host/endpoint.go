package host

import "context"

// endpointKey is the context key of the gateway endpoint a call is made
// for.
type endpointKey struct{}

// WithEndpoint returns ctx marked as a request of the gateway endpoint
// named name ("" for the default one). The gateway marks each request it
// serves; a tool call the host makes under that context is the
// endpoint's: guardrail rules scoped by endpoint apply to it, and its
// usage counts under the endpoint's name (telemetry).
func WithEndpoint(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, endpointKey{}, name)
}

// EndpointOf is the endpoint WithEndpoint marked ctx with, or "".
func EndpointOf(ctx context.Context) string {
	n, _ := ctx.Value(endpointKey{}).(string)
	return n
}
