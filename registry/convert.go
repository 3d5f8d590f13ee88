package registry

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/switchboardmcp/switchboard/config"
)

// Kinds of entry [Convert] can write, as --kind names them.
const (
	KindNPM    = "npm"
	KindPyPI   = "pypi"
	KindOCI    = "oci"
	KindRemote = "remote"
)

// preference is the order Convert picks a kind in when none is asked for:
// a package pinned by version first (npm, PyPI), then an image, then a
// remote (which pins nothing the user runs).
var preference = []string{KindNPM, KindPyPI, KindOCI, KindRemote}

// ConvertOptions say how to convert an entry.
type ConvertOptions struct {
	// ID is the server's id; "" means one derived from the entry's name
	// ([DefaultID]).
	ID string
	// Kind picks the package or remote: npm, pypi, oci or remote; ""
	// means the first of those the entry has.
	Kind string
	// Values are what the user supplied, by variable key ([Variable.Key]):
	// plain values, or a {{secrets.NAME}} placeholder for a secret one.
	Values map[string]string
	// ContainerRuntime is "docker" or "podman", the one found on PATH; ""
	// refuses an OCI image.
	ContainerRuntime string
	// Force converts a deprecated or deleted entry all the same.
	Force bool
}

// A Variable is one value an entry needs from the user: an environment
// variable, a header, a URL template variable or an argument.
type Variable struct {
	// Key is how ConvertOptions.Values names it: the environment
	// variable's or header's name, the URL variable's name, the
	// argument's valueHint or name.
	Key string
	// Where is "env", "header", "url" or "argument".
	Where string
	Input
}

// RefusedError is an entry Convert will not turn into a server, and why.
type RefusedError struct {
	Name, Version string
	Reason        string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Name, e.Version, e.Reason)
}

// ErrRefused matches every [RefusedError].
var ErrRefused = errors.New("registry: refused")

func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

func refuse(s Server, format string, args ...any) error {
	return &RefusedError{Name: s.Name, Version: s.Version, Reason: fmt.Sprintf(format, args...)}
}

// DefaultID derives a server id from a registry name: its last segment,
// with characters an id may not have as '-', bounded to 64 characters.
func DefaultID(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	id := strings.Trim(badID().ReplaceAllString(name, "-"), "-")
	if len(id) > 64 {
		id = id[:64]
	}
	if id == "" {
		id = "server"
	}
	return id
}

var badID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]+`) })

// pick returns the package (or nil and the remote) Convert uses for kind.
func pick(s Server, kind string) (*Package, *Transport, string, error) {
	kinds := preference
	if kind != "" {
		if !slices.Contains(preference, kind) {
			return nil, nil, "", refuse(s, "unknown kind %q: want npm, pypi, oci or remote", kind)
		}
		kinds = []string{kind}
	}
	for _, k := range kinds {
		if k == KindRemote {
			for i := range s.Remotes {
				if s.Remotes[i].Type == "streamable-http" || s.Remotes[i].Type == "sse" {
					return nil, &s.Remotes[i], k, nil
				}
			}
			continue
		}
		for i := range s.Packages {
			if s.Packages[i].RegistryType == k {
				return &s.Packages[i], nil, k, nil
			}
		}
	}
	have := s.Kinds()
	if len(have) == 0 {
		return nil, nil, "", refuse(s, "the entry has neither a package nor a remote: nothing to run")
	}
	if kind != "" {
		return nil, nil, "", refuse(s, "no %s package or remote; the entry has %s", kind, strings.Join(have, ", "))
	}
	return nil, nil, "", refuse(s, "Switchboard runs npm, PyPI and OCI packages and remotes; the entry has only %s (%s)", strings.Join(have, ", "), unsupportedWhy(have))
}

func unsupportedWhy(have []string) string {
	var why []string
	for _, k := range have {
		switch k {
		case "mcpb":
			why = append(why, "an MCPB bundle must be downloaded and unpacked by a client that checks its fileSha256")
		case "nuget":
			why = append(why, "a NuGet package runs with dnx, which Switchboard does not write yet")
		default:
			why = append(why, fmt.Sprintf("no runner for %q", k))
		}
	}
	return strings.Join(why, "; ")
}

// Variables lists what the user must or may supply to convert e with kind
// ("" as in [Convert]): the required ones first.
func Variables(s Server, kind string) ([]Variable, error) {
	p, r, _, err := pick(s, kind)
	if err != nil {
		return nil, err
	}
	var vs []Variable
	seen := map[string]bool{}
	add := func(key, where string, in Input) {
		if key == "" || seen[key] {
			return
		}
		seen[key] = true
		vs = append(vs, Variable{Key: key, Where: where, Input: in})
	}
	addVars := func(where string, m map[string]Input) {
		for _, k := range sortedKeys(m) {
			add(k, where, m[k])
		}
	}
	if r != nil {
		addVars("url", r.Variables)
		for _, h := range r.Headers {
			if h.Value != "" {
				addVars("header", h.Variables)
				continue
			}
			add(h.Name, "header", h.Input)
		}
	} else {
		for _, a := range append(slices.Clone(p.RuntimeArguments), p.PackageArguments...) {
			if a.Value != "" {
				addVars("argument", a.Variables)
				continue
			}
			if a.Type == "named" && a.Default == "" && !a.IsRequired && a.Format == "boolean" {
				continue
			}
			add(argKey(a), "argument", a.Input)
		}
		for _, e := range p.EnvironmentVariables {
			if e.Value != "" {
				addVars("env", e.Variables)
				continue
			}
			add(e.Name, "env", e.Input)
		}
	}
	slices.SortStableFunc(vs, func(a, b Variable) int {
		switch {
		case a.IsRequired == b.IsRequired:
			return 0
		case a.IsRequired:
			return -1
		}
		return 1
	})
	return vs, nil
}

func argKey(a Argument) string {
	if a.ValueHint != "" {
		return a.ValueHint
	}
	return a.Name
}

func sortedKeys(m map[string]Input) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// Convert turns entry e into a pinned server entry. It refuses, with a
// [RefusedError] saying why, an entry that did not validate, one that is
// deprecated or deleted (unless Force), a kind Switchboard cannot run, an
// OCI image without a container runtime, a secret that would end up on a
// command line or in a URL, and a required value not supplied.
func Convert(e Entry, opts *ConvertOptions) (config.Server, error) {
	var o ConvertOptions
	if opts != nil {
		o = *opts
	}
	s := e.Server
	if err := Installable(e, o.Force); err != nil {
		return config.Server{}, err
	}
	p, r, kind, err := pick(s, o.Kind)
	if err != nil {
		return config.Server{}, err
	}
	id := o.ID
	if id == "" {
		id = DefaultID(s.Name)
	}
	c := &converter{s: s, values: o.Values}
	out := config.Server{
		ID:          id,
		Description: strings.ReplaceAll(s.Description, "{{", "{ {"),
		Registry:    &config.RegistrySource{Name: s.Name, Version: s.Version, URL: e.Registry},
	}
	if r != nil {
		err = c.remote(&out, r)
	} else {
		err = c.pkg(&out, p, kind, o.ContainerRuntime)
	}
	if err != nil {
		return config.Server{}, err
	}
	if len(c.missing) > 0 {
		return config.Server{}, refuse(s, "required: %s (give each with --var NAME=VALUE, or answer the prompt)", strings.Join(c.missing, ", "))
	}
	return out, nil
}

// Installable refuses, with a [RefusedError], an entry that did not
// validate, and a deprecated or deleted one unless force.
func Installable(e Entry, force bool) error {
	s := e.Server
	if e.Invalid != nil {
		why := e.Invalid
		var ie *InvalidError
		if errors.As(why, &ie) {
			why = ie.Err
		}
		return refuse(s, "the entry does not validate against the server.json schema, so it is not installed: %v", why)
	}
	if st := e.Status(); st != StatusActive && !force {
		msg := ""
		if e.Official.StatusMessage != "" {
			msg = ": " + e.Official.StatusMessage
		}
		return refuse(s, "the registry marks this version %s%s (--force installs it all the same)", st, msg)
	}
	return nil
}

type converter struct {
	s       Server
	values  map[string]string
	missing []string
}

// value resolves one input: the user's value, else the fixed value with
// its variables filled in, else the default. ok is false when there is
// none (a missing required one is recorded).
func (c *converter) value(key string, in Input) (string, bool) {
	if in.Value != "" {
		return c.fill(in.Value, in.Variables), true
	}
	if v, ok := c.values[key]; ok && v != "" {
		return v, true
	}
	if in.Default != "" {
		return in.Default, true
	}
	if in.IsRequired {
		c.missing = append(c.missing, key)
	}
	return "", false
}

var templateVar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_-]*)\}`) })

// fill replaces {name} in t with the values of vars; a name not among
// vars stays as written, as the schema says.
func (c *converter) fill(t string, vars map[string]Input) string {
	return templateVar().ReplaceAllStringFunc(t, func(m string) string {
		name := m[1 : len(m)-1]
		in, ok := vars[name]
		if !ok {
			return m
		}
		v, _ := c.value(name, in)
		return v
	})
}

// secretIn reports the first secret among vars that t references.
func secretIn(t string, vars map[string]Input) (string, bool) {
	for _, m := range templateVar().FindAllStringSubmatch(t, -1) {
		if in, ok := vars[m[1]]; ok && in.IsSecret {
			return m[1], true
		}
	}
	return "", false
}

func (c *converter) remote(out *config.Server, r *Transport) error {
	out.Transport = config.TransportHTTP
	if r.Type == "sse" {
		out.Transport = config.TransportSSE
	}
	if v, ok := secretIn(r.URL, r.Variables); ok {
		return refuse(c.s, "the remote's URL carries secret variable %s, and Switchboard writes no secret into a URL", v)
	}
	out.URL = c.fill(r.URL, r.Variables)
	if templateVar().MatchString(out.URL) && len(c.missing) == 0 {
		return refuse(c.s, "the remote's URL %q keeps a variable the entry does not declare", out.URL)
	}
	for _, h := range r.Headers {
		var v string
		var ok bool
		if h.Value != "" {
			v, ok = c.fill(h.Value, h.Variables), true
		} else {
			v, ok = c.value(h.Name, h.Input)
		}
		if !ok {
			continue
		}
		if h.IsSecret && !isPlaceholder(v) && h.Value == "" {
			return refuse(c.s, "header %s is secret: give it as a {{secrets.NAME}} placeholder", h.Name)
		}
		if out.Headers == nil {
			out.Headers = map[string]string{}
		}
		out.Headers[h.Name] = v
	}
	return nil
}

func isPlaceholder(v string) bool {
	return strings.Contains(v, "{{secrets.") || strings.Contains(v, "{{env.")
}

func (c *converter) pkg(out *config.Server, p *Package, kind, runtime string) error {
	if p.Transport.Type != "stdio" {
		return refuse(c.s, "its %s package serves %s itself (%s): Switchboard starts packages over stdio only; use its remote if it has one (--kind remote)", kind, p.Transport.Type, p.Transport.URL)
	}
	rt, err := c.args(p.RuntimeArguments, "runtime")
	if err != nil {
		return err
	}
	pa, err := c.args(p.PackageArguments, "package")
	if err != nil {
		return err
	}
	switch kind {
	case KindNPM:
		if p.Version == "" {
			return refuse(c.s, "its npm package %s names no version to pin", p.Identifier)
		}
		out.Command = "npx"
		args := slices.Clone(rt)
		if !slices.Contains(args, "-y") && !slices.Contains(args, "--yes") {
			args = append([]string{"-y"}, args...)
		}
		if b := strings.TrimSuffix(p.RegistryBaseURL, "/"); b != "" && b != "https://registry.npmjs.org" {
			args = append(args, "--registry", b)
		}
		out.Args = append(append(args, p.Identifier+"@"+p.Version), pa...)
	case KindPyPI:
		if p.Version == "" {
			return refuse(c.s, "its PyPI package %s names no version to pin", p.Identifier)
		}
		out.Command = "uvx"
		args := slices.Clone(rt)
		if b := strings.TrimSuffix(p.RegistryBaseURL, "/"); b != "" && b != "https://pypi.org" {
			args = append(args, "--index-url", b+"/simple")
		}
		out.Args = append(append(args, p.Identifier+"=="+p.Version), pa...)
	case KindOCI:
		if runtime == "" {
			return refuse(c.s, "its package is the OCI image %s, and neither docker nor podman is on PATH", p.Identifier)
		}
		out.Command = runtime
		args := []string{"run", "-i", "--rm"}
		args = append(args, rt...)
		// Each variable is passed by name: its value reaches the
		// container from the runtime's environment, never from argv.
		for _, e := range p.EnvironmentVariables {
			if _, ok := c.peek(e); ok {
				args = append(args, "-e", e.Name)
			}
		}
		out.Args = append(append(args, p.Identifier), pa...)
	}
	for _, e := range p.EnvironmentVariables {
		v, ok := c.value(e.Name, e.Input)
		if !ok {
			continue
		}
		if e.IsSecret && !isPlaceholder(v) {
			return refuse(c.s, "environment variable %s is secret: give it as a {{secrets.NAME}} placeholder", e.Name)
		}
		if out.Env == nil {
			out.Env = map[string]string{}
		}
		out.Env[e.Name] = v
	}
	return nil
}

// peek reports whether an environment variable will have a value, without
// recording it as missing.
func (c *converter) peek(e KeyValueInput) (string, bool) {
	if e.Value != "" {
		return e.Value, true
	}
	if v, ok := c.values[e.Name]; ok && v != "" {
		return v, true
	}
	return e.Default, e.Default != ""
}

// args renders runtime or package arguments.
func (c *converter) args(as []Argument, which string) ([]string, error) {
	var out []string
	for _, a := range as {
		if a.IsSecret {
			return nil, refuse(c.s, "its %s argument %s is secret, and a command line is no place for a secret (every user on the machine can read it)", which, argKey(a))
		}
		if v, ok := secretIn(a.Value, a.Variables); ok {
			return nil, refuse(c.s, "its %s argument %s carries secret variable %s on the command line", which, argKey(a), v)
		}
		v, ok := c.value(argKey(a), a.Input)
		switch a.Type {
		case "named":
			if !ok {
				continue
			}
			if a.Format == "boolean" {
				if v == "true" {
					out = append(out, a.Name)
				}
				continue
			}
			out = append(out, a.Name, v)
		default:
			if ok {
				out = append(out, v)
			}
		}
	}
	return out, nil
}

// CheckValues checks values given for entry s converted as kind, where
// no secret may be typed in (the REST API, the web UI): a key the entry
// does not ask for, and a secret value that is not a {{secrets.NAME}} or
// {{env.NAME}} placeholder. It returns one problem per key, nil when
// there is none.
func CheckValues(s Server, kind string, values map[string]string) (map[string]string, error) {
	vars, err := Variables(s, kind)
	if err != nil {
		return nil, err
	}
	known := map[string]Variable{}
	for _, v := range vars {
		known[v.Key] = v
	}
	var problems map[string]string
	for k, val := range values {
		msg := ""
		v, ok := known[k]
		switch {
		case !ok:
			msg = "the entry does not ask for it"
		case v.IsSecret && val != "" && !isPlaceholder(val):
			msg = "secret: store it in the secret store (switchboard secrets set NAME) and give {{secrets.NAME}}"
		}
		if msg != "" {
			if problems == nil {
				problems = map[string]string{}
			}
			problems[k] = msg
		}
	}
	return problems, nil
}

// SecretName is the name a secret value an entry asks for is stored
// under for server id: "<id>_<key>", lower-cased, each character a secret
// name may not have as '_', starting with a letter (see
// secret.ValidateName).
func SecretName(id, key string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(id + "_" + key) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	name := strings.Trim(b.String(), "_")
	if name == "" || name[0] < 'a' || name[0] > 'z' {
		name = "s_" + name
	}
	// A secret name is at most 128 bytes (secret.ValidateName).
	return name[:min(len(name), 128)]
}
