package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/secret"
)

// Resolve returns a copy of s whose env and headers values have their
// placeholders expanded: {{env.NAME}} through getenv (default
// os.LookupEnv) and {{secrets.NAME}} through secrets (nil: none, typically
// a [secret.EnvStore]). Every resolved value — each secret, and each
// environment variable's but those of [secret.PublicEnv] — is registered
// with red (when non-nil) before Resolve returns.
//
// Every unresolved placeholder is reported, each naming the server and the
// field ("server "gh": env.GITHUB_TOKEN: ..."), never a value.
func (s Server) Resolve(getenv func(string) (string, bool), secrets secret.Store, red *secret.Redactor) (Server, error) {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	out := s
	out.Args = slices.Clone(s.Args)
	out.ToolsAllowlist = slices.Clone(s.ToolsAllowlist)
	out.Roots = slices.Clone(s.Roots)
	var errs []error
	expand := func(field string, in map[string]string) map[string]string {
		if in == nil {
			return nil
		}
		m := make(map[string]string, len(in))
		for _, k := range slices.Sorted(maps.Keys(in)) {
			v, err := secret.Expand(in[k], getenv, secrets, red)
			if err != nil {
				// One error per placeholder, each with its own context.
				each := []error{err}
				if j, ok := err.(interface{ Unwrap() []error }); ok {
					each = j.Unwrap()
				}
				for _, e := range each {
					errs = append(errs, fmt.Errorf("server %q: %s: %w", s.ID, decode.KeyPath(field, k), e))
				}
				continue
			}
			m[k] = v
		}
		return m
	}
	out.Env = expand("env", s.Env)
	out.Headers = expand("headers", s.Headers)
	if s.OAuth != nil {
		o := *s.OAuth
		o.Scopes = slices.Clone(s.OAuth.Scopes)
		if o.ClientSecret != "" {
			o.ClientSecret = expand("oauth", map[string]string{"client_secret": o.ClientSecret})["client_secret"]
		}
		if o.PrivateKey != "" {
			o.PrivateKey = expand("oauth", map[string]string{"private_key": o.PrivateKey})["private_key"]
		}
		out.OAuth = &o
	}
	if len(errs) > 0 {
		return Server{}, errors.Join(errs...)
	}
	return out, nil
}

// expandCredential expands in, the value of field, and registers what it
// resolved to with red (when non-nil): Expand leaves a public variable
// ({{env.USER}}) unregistered, and as a credential it is one all the
// same. A value without placeholders is returned as it is, unregistered.
// An error names field, never a value.
func expandCredential(field, in string, getenv func(string) (string, bool), secrets secret.Store, red *secret.Redactor) (string, error) {
	v, err := secret.Expand(in, getenv, secrets, red)
	if err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	if v != in && v != "" && red != nil {
		red.Add(v)
	}
	return v, nil
}

// RegisterSecrets resolves every placeholder of the configuration — each
// server's env, headers and OAuth credentials, the gateway's and the
// endpoints' auth_token, the providers' keys and headers, the network
// proxy, the state database
// and encryption keys — and registers what each resolves to with red (as
// Resolve does), without starting anything. A process that reads what
// others wrote, such as stored workflow runs, redacts with it the secrets
// a server, a template or an agent may have put there. It returns the
// placeholders that did not resolve, each naming its field; the others
// are registered all the same.
func (c *Config) RegisterSecrets(getenv func(string) (string, bool), secrets secret.Store, red *secret.Redactor) error {
	if red == nil {
		return nil
	}
	var errs []error
	for _, s := range c.Servers {
		_, err := s.Resolve(getenv, secrets, red)
		errs = append(errs, err)
	}
	_, err := c.Gateway.ResolveAuthToken(getenv, secrets, red)
	errs = append(errs, err)
	for _, e := range c.Endpoints {
		_, err := e.ResolveAuthToken(getenv, secrets, red)
		errs = append(errs, err)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Providers)) {
		_, err := c.Providers[name].Resolve(getenv, secrets, red)
		errs = append(errs, err)
	}
	_, err = c.Network.Resolve(getenv, secrets, red)
	errs = append(errs, err)
	_, err = c.State.ResolveDatabase(getenv, secrets, red)
	errs = append(errs, err)
	_, err = c.State.ResolveEncryptionKey(getenv, secrets, red)
	errs = append(errs, err)
	_, err = c.State.ResolveEncryptionKeyFallbacks(getenv, secrets, red)
	errs = append(errs, err)
	return errors.Join(errs...)
}
