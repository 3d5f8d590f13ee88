package guardrail

import "context"

// endpointKey is the context key of the gateway endpoint a call came
// through.
type endpointKey struct{}

// WithEndpoint returns ctx marked as a request of the gateway endpoint
// named name ("" for the default one), for rules scoped by endpoint: the
// gateway marks each request's context, and the host reads the mark when
// it calls a tool for the request.
func WithEndpoint(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, endpointKey{}, name)
}

// EndpointOf is the endpoint WithEndpoint marked ctx with, or "".
func EndpointOf(ctx context.Context) string {
	n, _ := ctx.Value(endpointKey{}).(string)
	return n
}
