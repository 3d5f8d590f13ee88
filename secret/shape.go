package secret

import (
	"strings"
	"unicode"
)

// A TokenPrefix is the prefix a service gives its tokens so that scanners
// find them, and what a token with it is ("a GitHub token").
type TokenPrefix struct{ Prefix, What string }

// TokenPrefixes are the known credential prefixes, the more specific of two
// that share a start first ("sk-ant-" before "sk-"). config.Literals uses
// them to refuse credentials written into a config file, and package
// guardrail to find credentials in tool calls' arguments and results.
var TokenPrefixes = []TokenPrefix{
	{"github_pat_", "a GitHub token"}, {"ghp_", "a GitHub token"}, {"gho_", "a GitHub token"},
	{"ghu_", "a GitHub token"}, {"ghs_", "a GitHub token"}, {"ghr_", "a GitHub token"},
	{"glpat-", "a GitLab token"},
	{"sk-ant-", "an Anthropic key"}, {"sk-proj-", "an OpenAI key"}, {"sk-", "an API key (sk-)"},
	{"xoxb-", "a Slack token"}, {"xoxp-", "a Slack token"}, {"xoxa-", "a Slack token"}, {"xoxe-", "a Slack token"}, {"xapp-", "a Slack token"},
	{"AKIA", "an AWS access key"}, {"ASIA", "an AWS access key"},
	{"AIza", "a Google API key"}, {"ya29.", "a Google OAuth token"},
	{"npm_", "an npm token"}, {"hf_", "a Hugging Face token"}, {"pypi-", "a PyPI token"},
	{"sk_live_", "a Stripe key"}, {"sk_test_", "a Stripe key"}, {"rk_live_", "a Stripe key"}, {"rk_test_", "a Stripe key"}, {"whsec_", "a webhook secret"},
	{"shpat_", "a Shopify token"}, {"shpss_", "a Shopify secret"},
	{"dop_v1_", "a DigitalOcean token"}, {"xai-", "an xAI key"}, {"gsk_", "a Groq key"}, {"pplx-", "a Perplexity key"},
	{"r8_", "a Replicate token"}, {"lin_api_", "a Linear key"}, {"ntn_", "a Notion token"}, {"secret_", "a Notion token"},
	{"figd_", "a Figma token"}, {"sntrys_", "a Sentry token"}, {"glc_", "a Grafana token"}, {"SG.", "a SendGrid key"},
}

// TokenChars reports whether s is made of the characters of tokens only:
// ASCII letters and digits and "_-.=+/".
func TokenChars(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_-.=+/", r)))
	}) < 0
}

// IsJWT reports whether v has the shape of a JSON Web Token: three
// dot-separated base64url parts, the header starting as a JSON object
// ("eyJ"), at least 30 characters.
func IsJWT(v string) bool {
	return strings.Count(v, ".") == 2 && strings.HasPrefix(v, "eyJ") && len(v) >= 30 && TokenChars(v)
}
