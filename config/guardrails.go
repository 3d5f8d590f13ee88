package config

// Decoding [[guardrails]] (see Guardrail) and turning them into the host's
// guardrail.Chain (Guardrails.Chain).

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"time"

	"github.com/switchboardmcp/switchboard/guardrail"
	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/secret"
)

// A Guardrail is one [[guardrails]] table: a rule of the ordered chain of
// filters on every tool call's arguments and results (package guardrail).
// The tables of every file run in order, the first file's first.
//
//	[[guardrails]]
//	filter    = "credentials"   # credentials | pii | size | deny | hook
//	action    = "mask"          # mask | reject | flag
//	direction = "results"       # arguments | results | both (the default)
//	servers   = ["github*"]     # globs; empty: every server
//	tools     = ["get_*"]       # the server's own tool names, globs
//	endpoints = ["support"]     # gateway endpoints; "" is the default one
//
// and per filter: kinds (pii: email, phone, card, iban; all by default),
// max_bytes (size, required), patterns (deny, RE2 regular expressions,
// required), url, timeout (default 2s), fail ("open", the default, or
// "closed"), token (a placeholder only) and allow_local_endpoint (hook).
// A hook decides its own action; action = "flag" only records its word.
type Guardrail struct {
	Name, Filter, Action, Direction string
	Servers, Tools, Endpoints       []string

	Kinds              []string
	MaxBytes           int
	Patterns           []string
	URL                string
	Timeout            time.Duration
	Fail               string
	Token              string
	AllowLocalEndpoint bool

	// Source is where the table was declared.
	Source Position
}

// maxGuardrailTimeout bounds a hook's timeout: every call it filters waits
// for it.
const maxGuardrailTimeout = time.Minute

// maxGuardrailBytes bounds max_bytes at the host's largest message.
const maxGuardrailBytes = 64 << 20

var guardrailFilters = []string{"credentials", "pii", "size", "deny", "hook"}

func oneOf(what string, allowed ...string) func(string) string {
	return func(s string) string {
		if s == "" || slices.Contains(allowed, s) {
			return ""
		}
		return fmt.Sprintf("unknown %s %q (want %s)", what, s, joinOr(allowed))
	}
}

func joinOr(s []string) string {
	if len(s) < 2 {
		return fmt.Sprint(s)
	}
	out := ""
	for i, e := range s {
		switch {
		case i == len(s)-1:
			out += " or " + e
		case i > 0:
			out += ", " + e
		default:
			out = e
		}
	}
	return out
}

func checkGlob(l []string, i int) string {
	if hasPlaceholder(l[i]) {
		return "placeholders are not allowed here"
	}
	if _, err := path.Match(l[i], ""); err != nil {
		return fmt.Sprintf("invalid glob %q: %v", l[i], err)
	}
	return ""
}

// guardrailFields declares a [[guardrails]] table.
var guardrailFields = decode.Table[Guardrail]{
	decode.String("name", decode.TOML, func(g *Guardrail) *string { return &g.Name }, noPlaceholderHere),
	decode.String("filter", decode.TOML, func(g *Guardrail) *string { return &g.Filter }, oneOf("filter", guardrailFilters...)),
	decode.String("action", decode.TOML, func(g *Guardrail) *string { return &g.Action }, oneOf("action", "mask", "reject", "flag")),
	decode.String("direction", decode.TOML, func(g *Guardrail) *string { return &g.Direction }, oneOf("direction", "arguments", "results", "both")),
	decode.StringList("servers", decode.TOML, func(g *Guardrail) *[]string { return &g.Servers }, checkGlob),
	decode.StringList("tools", decode.TOML, func(g *Guardrail) *[]string { return &g.Tools }, checkGlob),
	decode.StringList("endpoints", decode.TOML, func(g *Guardrail) *[]string { return &g.Endpoints }, checkGlob),
	decode.StringList("kinds", decode.TOML, func(g *Guardrail) *[]string { return &g.Kinds }, func(l []string, i int) string {
		if err := guardrail.CheckPIIKinds(l[i : i+1]); err != nil {
			return err.Error()
		}
		return ""
	}),
	decode.Bytes("max_bytes", decode.TOML, func(g *Guardrail) *int { return &g.MaxBytes }, 1, maxGuardrailBytes),
	decode.StringList("patterns", decode.TOML, func(g *Guardrail) *[]string { return &g.Patterns }, func(l []string, i int) string {
		if _, err := regexp.Compile(l[i]); err != nil {
			return fmt.Sprintf("invalid regular expression: %v", err)
		}
		return ""
	}),
	decode.String("url", decode.TOML, func(g *Guardrail) *string { return &g.URL }, func(u string) string {
		if u == "" {
			return ""
		}
		if hasPlaceholder(u) {
			return "placeholders are not allowed here (put a credential in token)"
		}
		if err := netguard.CheckURL(u, true); err != nil {
			return err.Error()
		}
		return ""
	}),
	decode.Duration("timeout", decode.TOML, func(g *Guardrail) *time.Duration { return &g.Timeout }, maxGuardrailTimeout),
	decode.String("fail", decode.TOML, func(g *Guardrail) *string { return &g.Fail }, oneOf("fail", "open", "closed")),
	decode.String("token", decode.TOML, func(g *Guardrail) *string { return &g.Token }, func(tok string) string {
		if tok == "" {
			return ""
		}
		return checkCredential(tok, false, `a literal token is not allowed: write "{{secrets.NAME}}" (switchboard secrets set NAME) or "{{env.NAME}}"`)
	}),
	decode.Bool("allow_local_endpoint", decode.TOML, func(g *Guardrail) *bool { return &g.AllowLocalEndpoint }),
}

// tomlGuardrails reads the [[guardrails]] tables, checking each rule's
// options against its filter.
func (r *fileResult) tomlGuardrails(p string, v any) {
	for _, t := range r.arrayOfTables(p, "guardrails", v) {
		f, m := t.path, t.m
		g := Guardrail{Source: Position{File: r.File, Line: r.LineOf(f), Field: f}}
		before := len(r.Problems)
		set := guardrailFields.DecodeAndCheck(r.Decoder, f, m, &g)
		for _, pr := range g.problems(set, m) {
			r.Errorf(decode.KeyPath(f, pr[0]), "%s", pr[1])
		}
		if len(r.Problems) > before {
			continue
		}
		r.guardrails = append(r.guardrails, g)
	}
}

// problems returns what is wrong with g as a whole, as (key, message)
// pairs; set are the keys the table set well, m all it holds (a key
// written wrong is reported already, not as missing).
func (g Guardrail) problems(set []string, m map[string]any) [][2]string {
	var out [][2]string
	add := func(k, format string, args ...any) { out = append(out, [2]string{k, fmt.Sprintf(format, args...)}) }
	missing := func(k string) bool { _, ok := m[k]; return !ok }
	if g.Filter == "" {
		if !missing("filter") {
			return out
		}
		add("filter", "missing filter (want %s)", joinOr(guardrailFilters))
		return out
	}
	if g.Action == "" && g.Filter != "hook" && missing("action") {
		add("action", "missing action (want mask, reject or flag)")
	}
	if g.Action != "" && g.Action != "flag" && g.Filter == "hook" {
		add("action", "a hook decides its own action: leave action out, or write \"flag\" to only record its word")
	}
	// Options of another filter are a mistake worth saying.
	own := map[string][]string{
		"pii":  {"kinds"},
		"size": {"max_bytes"},
		"deny": {"patterns"},
		"hook": {"url", "timeout", "fail", "token", "allow_local_endpoint"},
	}
	for filter, keys := range own {
		for _, k := range keys {
			if filter != g.Filter && slices.Contains(set, k) {
				add(k, "is an option of filter %q, not of %q", filter, g.Filter)
			}
		}
	}
	switch g.Filter {
	case "size":
		if g.MaxBytes == 0 && missing("max_bytes") {
			add("max_bytes", "missing: filter \"size\" needs max_bytes")
		}
	case "deny":
		if len(g.Patterns) == 0 && missing("patterns") {
			add("patterns", "missing: filter \"deny\" needs at least one pattern")
		}
	case "hook":
		if g.URL == "" && missing("url") {
			add("url", "missing: filter \"hook\" needs url")
		}
	}
	return out
}

// Chain turns the rules into the host's guardrail chain (nil for none):
// the hooks' tokens resolved from getenv and secrets (and registered with
// red), their URLs checked against the network policy n.
func (gs Guardrails) Chain(getenv func(string) (string, bool), secrets secret.Store, red *secret.Redactor, n *netguard.Network) (*guardrail.Chain, error) {
	if len(gs) == 0 {
		return nil, nil
	}
	rules := make([]guardrail.Rule, 0, len(gs))
	for i, g := range gs {
		field := cmpOr(g.Source.Field, decode.IndexPath("guardrails", i))
		r := guardrail.Rule{Name: g.Name, Action: guardrail.Action(g.Action), Servers: g.Servers, Tools: g.Tools, Endpoints: g.Endpoints}
		if r.Action == "" {
			r.Action = guardrail.Mask // a hook's: its own word decides
		}
		if g.Direction != "" {
			d, err := guardrail.ParseDirection(g.Direction)
			if err != nil {
				return nil, fmt.Errorf("%s.direction: %w", field, err)
			}
			r.Direction = d
		}
		switch g.Filter {
		case "credentials":
			r.Filter = guardrail.Credentials{}
		case "pii":
			r.Filter = guardrail.PII{Kinds: g.Kinds}
		case "size":
			r.Filter = guardrail.Size{MaxBytes: g.MaxBytes}
		case "deny":
			d := guardrail.Deny{}
			for j, p := range g.Patterns {
				re, err := regexp.Compile(p)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", decode.IndexPath(field+".patterns", j), err)
				}
				d.Patterns = append(d.Patterns, re)
			}
			r.Filter = d
		case "hook":
			o := &guardrail.HookOptions{Timeout: g.Timeout, FailClosed: g.Fail == "closed", AllowLocalEndpoint: g.AllowLocalEndpoint, Network: n}
			if g.Token != "" {
				tok, err := expandCredential(field+".token", g.Token, getenv, secrets, red)
				if err != nil {
					return nil, err
				}
				o.Token = tok
			}
			h, err := guardrail.NewHook(g.URL, o)
			if err != nil {
				return nil, fmt.Errorf("%s.url: %w", field, err)
			}
			r.Filter = h
		default:
			return nil, fmt.Errorf("%s.filter: unknown filter %q", field, g.Filter)
		}
		rules = append(rules, r)
	}
	return guardrail.New(rules)
}

// Guardrails are the [[guardrails]] tables, in order.
type Guardrails []Guardrail

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
