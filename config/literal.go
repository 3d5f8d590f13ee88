package config

import (
	"math"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/secret"
)

// A Literal is a value in a server's declaration that looks like a
// credential written out in full: a token in env, an Authorization header,
// a password in a URL, an API key among the args. Config files are shared,
// committed and backed up, so `switchboard import` and `add` never write
// one: env and headers values move to the secret store behind a
// {{secrets.NAME}} placeholder, anything else is refused.
//
// The judgement is a heuristic, told by the value's shape (the prefixes
// of the common services' tokens, a JSON Web Token, a private key, a
// password in a URL, a long random-looking string) and by the name it is
// given (API_KEY, GITHUB_TOKEN, Authorization, --password). It errs
// towards calling a value a credential: a false alarm costs a `switchboard
// secrets set`, a miss leaks a key. Paths, numbers, booleans, words and
// placeholders are never credentials.
type Literal struct {
	// Field is where the value is, relative to the server: "env.API_KEY",
	// "headers.Authorization", "args[3]", "url".
	Field string
	// Why says what makes the value look like a credential, without
	// quoting it: "its name says so", "it looks like a GitHub token".
	Why string
	// Movable reports whether a placeholder may take its place: env and
	// headers values.
	Movable bool
	// Keep is the part of the value that stays when it moves ("Bearer "
	// of an Authorization header); Value is the credential itself. Value
	// is never printed: String leaves it out, and so does JSON.
	Keep  string `json:"-"`
	Value string `json:"-"`

	table, key string // "env" or "headers" and the key, for a movable one
}

func (l Literal) String() string { return l.Field + ": " + l.Why }

// SecretName is the secret a movable credential of server id goes to:
// github_token for GITHUB_TOKEN of github, search_authorization for the
// Authorization header of search.
func (l Literal) SecretName(id string) string { return secretName(id, l) }

// Literals returns the values of s that look like credentials written out,
// in field order.
func Literals(s Server) []Literal {
	var out []Literal
	for _, k := range sortedMapKeys(s.Env) {
		if why := valueWhy(k, s.Env[k]); why != "" {
			// A value that mixes a placeholder with a credential cannot
			// move whole: a secret's value is not expanded again.
			out = append(out, Literal{Field: decode.KeyPath("env", k), Why: why, Movable: !hasPlaceholder(s.Env[k]), Value: s.Env[k], table: "env", key: k})
		}
	}
	for _, k := range sortedMapKeys(s.Headers) {
		v := s.Headers[k]
		keep, cred := splitScheme(v)
		why := valueWhy(k, v)
		if why == "" && keep != "" {
			why = "it is an Authorization value"
		}
		if why != "" {
			out = append(out, Literal{Field: decode.KeyPath("headers", k), Why: why, Movable: !hasPlaceholder(cred), Keep: keep, Value: cred, table: "headers", key: k})
		}
	}
	for i, a := range s.Args {
		why := ""
		value := a
		if name, v, ok := flagValue(a); ok {
			if isSecretName(name, true) && plausible(v) {
				why, value = "it follows "+name+"=", v
			}
		} else if i > 0 {
			prev := s.Args[i-1]
			if strings.HasPrefix(prev, "-") && !strings.Contains(prev, "=") && !strings.HasPrefix(a, "-") &&
				isSecretName(strings.TrimLeft(prev, "-"), true) && plausible(a) {
				why = "it follows " + prev
			}
		}
		if why == "" {
			why = shapeWhy(a, true)
		}
		if why != "" {
			out = append(out, Literal{Field: decode.IndexPath("args", i), Why: why, Value: value})
		}
	}
	if why := shapeWhy(s.URL, true); why != "" {
		out = append(out, Literal{Field: "url", Why: why, Value: s.URL})
	}
	return out
}

// splitScheme splits an Authorization-style value "Bearer abc" into the
// scheme that stays and the credential; keep is "" for another value.
func splitScheme(v string) (keep, cred string) {
	scheme, rest, ok := strings.Cut(v, " ")
	if ok && rest != "" && !strings.ContainsAny(rest, " \t") && !hasPlaceholder(rest) {
		switch strings.ToLower(scheme) {
		case "bearer", "basic", "token", "bot", "apikey", "key":
			return scheme + " ", rest
		}
	}
	return "", v
}

// flagValue splits "--api-key=abc" into its name and value.
func flagValue(a string) (name, value string, ok bool) {
	if !strings.HasPrefix(a, "-") {
		return "", "", false
	}
	name, value, ok = strings.Cut(a, "=")
	return strings.TrimLeft(name, "-"), value, ok && value != ""
}

// valueWhy says why the value of a variable or header named name looks
// like a credential, or "".
func valueWhy(name, v string) string {
	if !plausible(v) {
		return ""
	}
	if hasPlaceholder(v) {
		// "Bearer {{secrets.x}}": the name says a credential goes here,
		// and a placeholder brings it; only what is written beside it
		// can be one.
		if ps, err := secret.Parse(v); err == nil {
			for i := len(ps) - 1; i >= 0; i-- {
				v = v[:ps[i].Start] + " " + v[ps[i].End:]
			}
		}
		for _, w := range strings.FieldsFunc(v, func(r rune) bool { return !tokenChars(string(r)) }) {
			if why := shapeWhy(w, false); why != "" {
				return why
			}
		}
		return ""
	}
	if why := shapeWhy(v, false); why != "" {
		return why
	}
	if isSecretName(name, false) {
		return "its name says so"
	}
	return ""
}

// plausible reports whether v could be a credential at all: not empty or
// tiny, not a placeholder, a number, a boolean or a path.
func plausible(v string) bool {
	// Another client's variables (${env:X}, ${input:Y}) are references.
	v = varRef().ReplaceAllString(v, "")
	if ps, err := secret.Parse(v); err == nil && len(ps) > 0 {
		// What is left around the placeholders ("Bearer ") is no credential.
		for i := len(ps) - 1; i >= 0; i-- {
			v = v[:ps[i].Start] + v[ps[i].End:]
		}
	}
	v = strings.TrimSpace(v)
	switch strings.ToLower(v) {
	case "", "true", "false", "yes", "no", "on", "off", "null", "none":
		return false
	}
	if len(v) < secret.MinLen {
		return false
	}
	if strings.IndexFunc(v, func(r rune) bool { return !unicode.IsDigit(r) && r != '.' && r != '-' }) < 0 {
		return false // a number, a version, a date
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") ||
		len(v) > 2 && v[1] == ':' && (v[2] == '\\' || v[2] == '/') {
		return false // a path
	}
	return true
}

// shapeWhy says what credential v looks like by its shape alone, or "".
// strict (for args and URLs, where a false alarm refuses the server)
// calls a string random only when it mixes cases and digits at length.
func shapeWhy(v string, strict bool) string {
	if v == "" || hasPlaceholder(v) {
		return ""
	}
	if strings.Contains(v, "-----BEGIN") && strings.Contains(v, "PRIVATE KEY") {
		return "it is a private key"
	}
	if strings.Contains(v, "://") {
		return urlWhy(v)
	}
	for _, p := range secret.TokenPrefixes {
		if strings.HasPrefix(v, p.Prefix) && len(v) >= len(p.Prefix)+12 && tokenChars(v[len(p.Prefix):]) {
			return "it looks like " + p.What
		}
	}
	if isJWT(v) {
		return "it looks like a JSON Web Token"
	}
	if randomLooking(v, strict) {
		return "it looks like a random key"
	}
	return ""
}

// urlWhy says why a URL holds a credential: a password, a secret-named
// query parameter, a token in its path.
func urlWhy(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if _, ok := u.User.Password(); ok {
		return "it is a URL with a password"
	}
	if u.User != nil && plausible(u.User.Username()) && randomLooking(u.User.Username(), false) {
		return "it is a URL with a key before its host"
	}
	for k, vs := range u.Query() {
		for _, v := range vs {
			if plausible(v) && (isSecretName(k, true) || shapeWhy(v, true) != "") {
				return "it is a URL with a credential in its query (" + k + ")"
			}
		}
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if plausible(seg) && shapeWhy(seg, true) != "" {
			return "it is a URL with a token in its path"
		}
	}
	return ""
}

func tokenChars(s string) bool { return secret.TokenChars(s) }

func isJWT(v string) bool { return secret.IsJWT(v) }

// randomLooking reports whether v has the length and disorder of a
// generated key: hexadecimal of at least 32 digits, or at least 20
// characters of the base64 alphabets with at least 4.2 bits of entropy a
// character (detect-secrets' measure). strict asks for 32 characters
// mixing upper and lower case and digits, and 4.5 bits.
func randomLooking(v string, strict bool) bool {
	if strings.ContainsAny(v, " \t/") {
		return false
	}
	isHex := strings.IndexFunc(v, func(r rune) bool { return !strings.ContainsRune("0123456789abcdefABCDEF", r) }) < 0
	if isHex {
		return !strict && len(v) >= 32 && entropy(v) >= 3.0
	}
	if !tokenChars(v) {
		return false
	}
	var upper, lower, digit bool
	for _, r := range v {
		upper = upper || unicode.IsUpper(r)
		lower = lower || unicode.IsLower(r)
		digit = digit || unicode.IsDigit(r)
	}
	if strict {
		return len(v) >= 32 && upper && lower && digit && entropy(v) >= 4.5
	}
	return len(v) >= 20 && digit && (upper || lower) && entropy(v) >= 4.2
}

// entropy is the Shannon entropy of s, in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	var h float64
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}

// strongWords name a credential in any name; weakWords only next to
// another word that says so (API KEY, ACCESS KEY).
var (
	strongWords = []string{"TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASSPHRASE", "PWD", "APIKEY",
		"CREDENTIAL", "CREDENTIALS", "COOKIE", "PAT", "AUTHORIZATION", "BEARER", "PRIVATE", "AUTHTOKEN", "ACCESSTOKEN"}
	keyWords = []string{"API", "ACCESS", "AUTH", "SECRET", "PRIVATE", "CLIENT", "APP", "SERVICE", "MASTER", "SIGNING", "ENCRYPTION", "LICENSE", "SUBSCRIPTION"}
)

// isSecretName reports whether a variable, header, flag or query
// parameter name says it holds a credential. strict (flags and query
// parameters) leaves out KEY alone, which names many things there.
func isSecretName(name string, strict bool) bool {
	words := nameWords(name)
	if len(words) == 1 && strings.EqualFold(name, "PWD") {
		return false // the working directory, in every shell
	}
	for i, w := range words {
		if slices.Contains(strongWords, w) {
			return true
		}
		if w == "KEY" {
			if i > 0 && slices.Contains(keyWords, words[i-1]) {
				return true
			}
			if !strict && len(words) == 1 {
				return true
			}
		}
		if w == "AUTH" && !strict && i == len(words)-1 {
			return true // X-Auth, SERVICE_AUTH; not AUTH_MODE
		}
	}
	return false
}

// nameWords splits a name into upper-case words at non-letters and at
// camelCase humps: "x-api-key" and "apiKey" are API KEY.
func nameWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToUpper(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1]):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return words
}
