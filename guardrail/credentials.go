package guardrail

import (
	"context"
	"strings"

	"github.com/switchboardmcp/switchboard/secret"
)

// Credentials finds credentials by their format: the tokens of the
// services in [secret.TokenPrefixes] (AWS access keys, GitHub, GitLab and
// Slack tokens, "sk-" API keys, …), JSON Web Tokens and PEM private key
// blocks. The configured secrets are the host's redactor's: they never
// reach a rule.
type Credentials struct{}

func (Credentials) Name() string { return "credentials" }

// minTokenTail is the shortest run of token characters after a prefix that
// makes a token: "sk-learn" is a word, sk- and twelve more a key.
const minTokenTail = 12

func (Credentials) Scan(_ context.Context, _ Call, _ Direction, parts []Part) ([]Finding, error) {
	var fs []Finding
	for i, p := range parts {
		fs = append(fs, scanPEM(i, p.Text)...)
		eachToken(p.Text, func(start, end int) {
			if end-start < 16 {
				return // shorter than any token: most words
			}
			// A sentence's full stop or a closing slash is not the token's.
			for end > start && (p.Text[end-1] == '.' || p.Text[end-1] == '/') {
				end--
			}
			w := p.Text[start:end]
			if i := strings.IndexByte(w, '='); i > 0 && i < len(w)-1 && w[i+1] != '=' && tokenKind(w) == "" {
				// NAME=token, as in an environment's dump.
				start, w = start+i+1, w[i+1:]
			}
			if kind := tokenKind(w); kind != "" {
				fs = append(fs, Finding{Part: i, Start: start, End: start + len(w), Kind: kind})
			}
		})
	}
	return fs, nil
}

// scanPEM finds private key blocks, from BEGIN to END (or to the end of
// the text when the block is cut).
func scanPEM(part int, s string) []Finding {
	var fs []Finding
	for off := 0; ; {
		i := strings.Index(s[off:], "-----BEGIN ")
		if i < 0 {
			return fs
		}
		start := off + i
		// The header line alone: "-----BEGIN RSA PRIVATE KEY-----".
		header := s[start:min(len(s), start+80)]
		if nl := strings.IndexAny(header, "\r\n"); nl >= 0 {
			header = header[:nl]
		}
		off = start + len("-----BEGIN ")
		if !strings.Contains(header, "PRIVATE KEY") {
			continue
		}
		end := len(s)
		if j := strings.Index(s[off:], "-----END "); j >= 0 {
			end = off + j + len("-----END ")
			if k := strings.Index(s[end:], "-----"); k >= 0 {
				end += k + len("-----")
			}
		}
		fs = append(fs, Finding{Part: part, Start: start, End: end, Kind: "private-key"})
		off = end
	}
}

// tokenBytes are the bytes of secret.TokenChars, as a table: the scan
// reads every byte of every result, and a lookup is its cheapest test.
var tokenBytes = func() (t [256]bool) {
	for c := range 256 {
		t[c] = secret.TokenChars(string(rune(c))) && c < 0x80
	}
	return t
}()

// eachToken calls fn with the bounds of each maximal run of token bytes.
func eachToken(s string, fn func(start, end int)) {
	for i := 0; i < len(s); {
		if !tokenBytes[s[i]] {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && tokenBytes[s[j]] {
			j++
		}
		fn(i, j)
		i = j
	}
}

// tokenKind names the credential w is ("github-token"), or "".
func tokenKind(w string) string {
	if len(w) < 16 {
		return ""
	}
	if secret.IsJWT(w) && jwtParts(w) {
		return "jwt"
	}
	for _, p := range secret.TokenPrefixes {
		if !strings.HasPrefix(w, p.Prefix) {
			continue
		}
		tail := w[len(p.Prefix):]
		if len(tail) < minTokenTail || !strings.ContainsAny(tail, "0123456789") {
			return "" // a word that starts like a token: "sk-learn-tutorial"
		}
		switch p.Prefix {
		case "secret_":
			// Notion's: 43 letters and digits. Identifiers such as
			// secret_key_name_v2 are words joined by underscores.
			if len(tail) < 30 || strings.ContainsAny(tail, "_-.") {
				return ""
			}
		case "AKIA", "ASIA":
			// 16 upper-case letters and digits, exactly.
			if len(tail) != 16 || strings.IndexFunc(tail, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') }) >= 0 {
				return ""
			}
		}
		return kindOf(p.What)
	}
	return ""
}

// jwtParts checks a JWT's parts further: a header of at least 10
// characters, a payload starting as a JSON object too ("eyJ"), a
// signature (possibly empty for an unsigned token, "alg": "none").
func jwtParts(w string) bool {
	h, rest, _ := strings.Cut(w, ".")
	payload, _, _ := strings.Cut(rest, ".")
	return len(h) >= 10 && strings.HasPrefix(payload, "eyJ")
}

// kindOf turns "a GitHub token" into "github-token".
func kindOf(what string) string {
	what = strings.TrimPrefix(strings.TrimPrefix(what, "a "), "an ")
	what = strings.NewReplacer("(", "", ")", "", " ", "-").Replace(strings.ToLower(what))
	return strings.Trim(what, "-")
}
