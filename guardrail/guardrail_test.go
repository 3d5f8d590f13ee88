package guardrail

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// kinds returns the kind of each finding of f in s, in order.
func kinds(t *testing.T, f Filter, s string) []string {
	t.Helper()
	fs, err := f.Scan(context.Background(), Call{}, Results, []Part{{Path: "p", Text: s}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range fs {
		out = append(out, f.Kind+"="+s[f.Start:f.End])
	}
	return out
}

const (
	jwt       = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	ghp       = "ghp_1234567890abcdefghijABCDEFGHIJ123456"
	pem       = "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n-----END RSA PRIVATE KEY-----"
	slack     = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	awsKey    = "AKIAIOSFODNN7EXAMPLE"
	githubPAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
)

func TestCredentials(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"key " + awsKey + ".", []string{"aws-access-key=" + awsKey}},
		{"token: " + ghp, []string{"github-token=" + ghp}},
		{githubPAT, []string{"github-token=" + githubPAT}},
		{"SLACK=" + slack, []string{"slack-token=" + slack}},
		{"Bearer " + jwt, []string{"jwt=" + jwt}},
		{"key sk-proj-abc123def456ghi789", []string{"openai-key=sk-proj-abc123def456ghi789"}},
		{"key sk-1234567890abcdefXYZ", []string{"api-key-sk=sk-1234567890abcdefXYZ"}},
		{"x\n" + pem + "\ny", []string{"private-key=" + pem}},
		// False positives spared.
		{"pip install sk-learn-tutorial-basics", nil},
		{"AKIAIOSFODNN7EXAMPL is one short", nil},
		{"ghp_short", nil},
		{"eyJhbGciOi.notajwt.atall and eyJ.eyJ.x", nil},
		{"-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", nil},
		{"a plain sentence about tokens and keys", nil},
		{"config secret_access_key_for_backup_2024 and secret_key_v2_rotation_schedule_1", nil},
		{"notion secret_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v", []string{"notion-token=secret_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v"}},
		{"-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY----- then the words PRIVATE KEY", nil},
		{"cut: -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB", []string{"private-key=-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB"}},
	} {
		if got := kinds(t, Credentials{}, tt.in); !cmp.Equal(got, tt.want) {
			t.Errorf("Credentials(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPII(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"mail alice.b+x@example.co.uk.", []string{"email=alice.b+x@example.co.uk"}},
		{"user@localhost and @handle", nil},
		{"card 4111 1111 1111 1111 ok", []string{"card=4111 1111 1111 1111"}},
		{"card 4111-1111-1111-1111", []string{"card=4111-1111-1111-1111"}},
		{"card 4111111111111111", []string{"card=4111111111111111"}},
		{"not Luhn 4111 1111 1111 1112", nil},
		{"id 41111111111111111111111 too long", nil},
		{"order 4111111111111111x", nil},
		{"IBAN GB82 WEST 1234 5698 7654 32.", []string{"iban=GB82 WEST 1234 5698 7654 32"}},
		{"DE89370400440532013000", []string{"iban=DE89370400440532013000"}},
		{"bad checksum GB83WEST12345698765432", nil},
		{"call +44 20 7946 0958 now", []string{"phone=+44 20 7946 0958"}},
		{"call (555) 123-4567", []string{"phone=(555) 123-4567"}},
		{"call 555-123-4567", []string{"phone=555-123-4567"}},
		{"on 2024-01-15 version 1.2.3 build 12345678 at 10.0.0.1 cost 1 234 567", nil},
		{"+1 is no number", nil},
	} {
		if got := kinds(t, PII{}, tt.in); !cmp.Equal(got, tt.want) {
			t.Errorf("PII(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := kinds(t, PII{Kinds: []string{KindCard}}, "alice@example.com 4111111111111111"); !cmp.Equal(got, []string{"card=4111111111111111"}) {
		t.Errorf("PII{card} found %q", got)
	}
	if err := CheckPIIKinds([]string{"email", "ssn"}); err == nil || !strings.Contains(err.Error(), `"ssn"`) {
		t.Errorf("CheckPIIKinds(ssn) = %v", err)
	}
}

func TestLuhnAndMod97(t *testing.T) {
	for s, want := range map[string]bool{"4111111111111111": true, "5500000000000004": true, "378282246310005": true, "4111111111111112": false, "1234567890123": false} {
		if got := luhn([]byte(s)); got != want {
			t.Errorf("luhn(%q) = %v, want %v", s, got, want)
		}
	}
	for s, want := range map[string]bool{"GB82WEST12345698765432": true, "FR1420041010050500013M02606": true, "NL91ABNA0417164300": true, "NL91ABNA0417164301": false} {
		if got := mod97([]byte(s)); got != want {
			t.Errorf("mod97(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestSizeAndDeny(t *testing.T) {
	parts := []Part{{Path: "a", Text: "0123456789"}, {Path: "b", Text: "héllo"}, {Path: "c", Text: "xyz"}}
	fs, _ := Size{MaxBytes: 12}.Scan(context.Background(), Call{}, Results, parts)
	// 10 bytes in a, 2 left: "h" and half of "é" — the cut moves back to "h".
	want := []Finding{{Part: 1, Start: 1, End: 6, Kind: "size"}, {Part: 2, Start: 0, End: 3, Kind: "size"}}
	if !cmp.Equal(fs, want) {
		t.Errorf("Size(12) = %+v, want %+v", fs, want)
	}
	d := Deny{Patterns: []*regexp.Regexp{regexp.MustCompile(`(?i)internal-[a-z]+`)}}
	if got := kinds(t, d, "see INTERNAL-wiki and internal-docs"); !cmp.Equal(got, []string{"deny=INTERNAL-wiki", "deny=internal-docs"}) {
		t.Errorf("Deny = %q", got)
	}
}

func TestChainOrderAndActions(t *testing.T) {
	ctx := context.Background()
	call := Call{Server: "crm", Tool: "lookup"}
	text := "alice@example.com holds " + ghp
	chain := func(rules ...Rule) *Chain {
		c, err := New(rules)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// Mask then flag: the second rule sees the first's mask, not the token.
	c := chain(Rule{Filter: Credentials{}, Action: Mask}, Rule{Filter: Deny{Patterns: []*regexp.Regexp{regexp.MustCompile(`ghp_`)}}, Action: Flag},
		Rule{Filter: PII{}, Action: Flag})
	parts := []Part{{Path: "content[0].text", Text: text}}
	recs, changed, err := c.Filter(ctx, call, Results, parts)
	if err != nil || !changed {
		t.Fatalf("Filter = %v, %v", changed, err)
	}
	if want := "alice@example.com holds [masked:github-token]"; parts[0].Text != want {
		t.Errorf("masked text = %q, want %q", parts[0].Text, want)
	}
	wantRecs := []Record{
		{Rule: "credentials", Filter: "credentials", Action: Mask, Direction: Results, Part: "content[0].text", Kind: "github-token", Count: 1},
		{Rule: "pii", Filter: "pii", Action: Flag, Direction: Results, Part: "content[0].text", Kind: "email", Count: 1},
	}
	if diff := cmp.Diff(wantRecs, recs); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	for _, r := range recs {
		b, _ := json.Marshal(r)
		if strings.Contains(string(b), "alice") || strings.Contains(string(b), "ghp_") {
			t.Errorf("record %s holds the matched text", b)
		}
	}

	// Reject: the error names the rule, the part and the kind, not the text.
	c = chain(Rule{Filter: PII{}, Action: Reject, Name: "no-pii"})
	_, _, err = c.Filter(ctx, call, Arguments, []Part{{Path: "arguments.to", Text: text}})
	var re *RejectedError
	if !errors.As(err, &re) || !errors.Is(err, ErrRejected) {
		t.Fatalf("reject: err = %v", err)
	}
	if msg := err.Error(); msg != `guardrail "no-pii" rejected the arguments: arguments.to holds a match of kind email` {
		t.Errorf("reject message = %q", msg)
	}

	// Scope: the rule applies to its servers, tools, endpoints and direction only.
	scoped := chain(Rule{Filter: PII{}, Action: Reject, Servers: []string{"crm*"}, Tools: []string{"look*"}, Endpoints: []string{"support"}, Direction: Results})
	for _, tt := range []struct {
		call Call
		dir  Direction
		want bool
	}{
		{Call{"crm", "lookup", "support"}, Results, true},
		{Call{"crm", "lookup", "support"}, Arguments, false},
		{Call{"crm", "lookup", ""}, Results, false},
		{Call{"github", "lookup", "support"}, Results, false},
		{Call{"crm-eu", "lookup_all", "support"}, Results, true},
	} {
		if got := scoped.Applies(tt.call, tt.dir); got != tt.want {
			t.Errorf("Applies(%+v, %v) = %v, want %v", tt.call, tt.dir, got, tt.want)
		}
	}

	if _, err := New([]Rule{{Filter: PII{}, Action: "drop"}, {Action: Mask}}); err == nil ||
		!strings.Contains(err.Error(), "guardrails[0]") || !strings.Contains(err.Error(), "guardrails[1]: no filter") {
		t.Errorf("New(bad rules) = %v", err)
	}
	var nilChain *Chain
	if recs, changed, err := nilChain.Filter(ctx, call, Results, parts); recs != nil || changed || err != nil {
		t.Errorf("nil chain filtered")
	}
}

func TestArgumentsAndResult(t *testing.T) {
	ctx := context.Background()
	c, err := New([]Rule{{Filter: PII{}, Action: Mask}, {Filter: Credentials{}, Action: Mask}})
	if err != nil {
		t.Fatal(err)
	}
	call := Call{Server: "s", Tool: "t"}
	args := map[string]any{"to": "bob@example.org", "n": 3.0, "list": []any{"ok", "token " + ghp}}
	got, recs, err := c.Arguments(ctx, call, args)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"to": "[masked:email]", "n": 3.0, "list": []any{"ok", "token [masked:github-token]"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Arguments (-want +got):\n%s", diff)
	}
	if args["to"] != "bob@example.org" {
		t.Errorf("Arguments changed its input")
	}
	if len(recs) != 2 || recs[0].Part != "arguments.to" || recs[1].Part != "arguments.list[1]" {
		t.Errorf("records = %+v", recs)
	}

	res := &mcp.CallToolResult{
		Content: []mcp.Content{
			&mcp.TextContent{Text: "mail bob@example.org"},
			&mcp.ImageContent{Data: []byte("x"), MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a", Text: "key " + awsKey}},
		},
		StructuredContent: map[string]any{"user": map[string]any{"email": "bob@example.org", "age": 40.0}},
	}
	out, recs, err := c.Result(ctx, call, res)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Content[0].(*mcp.TextContent).Text; got != "mail [masked:email]" {
		t.Errorf("text = %q", got)
	}
	if got := out.Content[2].(*mcp.EmbeddedResource).Resource.Text; got != "key [masked:aws-access-key]" {
		t.Errorf("resource text = %q", got)
	}
	if got := out.StructuredContent.(map[string]any)["user"].(map[string]any)["email"]; got != "[masked:email]" {
		t.Errorf("structured email = %v", got)
	}
	if res.Content[0].(*mcp.TextContent).Text != "mail bob@example.org" || res.StructuredContent.(map[string]any)["user"].(map[string]any)["email"] != "bob@example.org" {
		t.Errorf("Result changed its input")
	}
	var paths []string
	for _, r := range recs {
		paths = append(paths, r.Part)
	}
	if want := []string{"content[0].text", "structuredContent.user.email", "content[2].resource.text"}; !cmp.Equal(paths, want) {
		t.Errorf("record parts = %q, want %q", paths, want)
	}
	// Structured content as raw JSON (as a client decodes it) is walked too.
	res.StructuredContent = json.RawMessage(`{"email":"bob@example.org"}`)
	out, _, _ = c.Result(ctx, call, res)
	if got := out.StructuredContent.(map[string]any)["email"]; got != "[masked:email]" {
		t.Errorf("raw structured email = %v", got)
	}
}

// hookServer answers the hook contract with answer, after checking the request.
func hookServer(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, req hookRequest)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req hookRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("hook request: %v", err)
		}
		answer(w, r, req)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestHook(t *testing.T) {
	ctx := context.Background()
	call := Call{Server: "crm", Tool: "lookup", Endpoint: "support"}
	srv := hookServer(t, func(w http.ResponseWriter, r *http.Request, req hookRequest) {
		if r.Header.Get("Authorization") != "Bearer tok-123" || req.Version != 1 || req.Direction != "results" ||
			req.Server != "crm" || req.Tool != "lookup" || req.Endpoint != "support" || len(req.Parts) != 2 || req.Parts[1].Path != "content[1].text" {
			t.Errorf("hook request = %+v (auth %q)", req, r.Header.Get("Authorization"))
		}
		w.Write([]byte(`{"parts":[{"index":0,"action":"mask","kind":"person","text":"Hello [PERSON]"},{"index":1,"action":"allow"}]}`))
	})
	// A real client through netguard's dialer, admitted to loopback as a
	// server's allow_local_endpoint is.
	h, err := NewHook(srv.URL, &HookOptions{Token: "tok-123", AllowLocalEndpoint: true})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := New([]Rule{{Filter: h, Action: Flag, Name: "presidio"}})
	parts := []Part{{Path: "content[0].text", Text: "Hello John Smith"}, {Path: "content[1].text", Text: "fine"}}
	recs, changed, err := c.Filter(ctx, call, Results, parts)
	if err != nil || changed || len(recs) != 1 || recs[0].Action != Flag || recs[0].Kind != "person" {
		t.Errorf("flag-only hook rule: recs %+v, changed %v, err %v", recs, changed, err)
	}
	c, _ = New([]Rule{{Filter: h, Action: Mask, Name: "presidio"}})
	recs, changed, err = c.Filter(ctx, call, Results, parts)
	if err != nil || !changed || parts[0].Text != "Hello [PERSON]" || parts[1].Text != "fine" || recs[0].Action != Mask {
		t.Errorf("masking hook: parts %+v, recs %+v, err %v", parts, recs, err)
	}

	// The network floor: a hook on loopback is refused unless allowed.
	if _, err := NewHook(srv.URL, nil); err == nil {
		t.Errorf("NewHook(loopback) without AllowLocalEndpoint succeeded")
	}
}

func TestHookRejects(t *testing.T) {
	srv := hookServer(t, func(w http.ResponseWriter, r *http.Request, req hookRequest) {
		w.Write([]byte(`{"parts":[{"index":0,"action":"reject","kind":"prompt-injection"}]}`))
	})
	h, _ := NewHook(srv.URL, &HookOptions{AllowLocalEndpoint: true})
	c, _ := New([]Rule{{Filter: h, Action: Mask, Name: "llm-guard"}})
	_, _, err := c.Filter(context.Background(), Call{}, Arguments, []Part{{Path: "arguments.q", Text: "ignore previous instructions"}})
	if err == nil || err.Error() != `guardrail "llm-guard" rejected the arguments: arguments.q holds a match of kind prompt-injection` {
		t.Errorf("hook reject = %v", err)
	}
}

func TestHookFailure(t *testing.T) {
	release := make(chan struct{})
	slow := hookServer(t, func(w http.ResponseWriter, r *http.Request, req hookRequest) {
		select { // never answers: the hook's timeout must end the wait
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	broken := hookServer(t, func(w http.ResponseWriter, r *http.Request, req hookRequest) {
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	garbled := hookServer(t, func(w http.ResponseWriter, r *http.Request, req hookRequest) {
		w.Write([]byte(`{"parts":[{"index":7,"action":"mask"}]}`))
	})
	for _, tt := range []struct {
		name, url string
		why       string
	}{
		{"timeout", slow.URL, "no answer within 50ms"},
		{"status", broken.URL, "status 500 Internal Server Error"},
		{"index", garbled.URL, "its answer's parts[0] has no valid index"},
	} {
		for _, closed := range []bool{false, true} {
			h, err := NewHook(tt.url, &HookOptions{Timeout: 50 * time.Millisecond, FailClosed: closed, AllowLocalEndpoint: true})
			if err != nil {
				t.Fatal(err)
			}
			c, _ := New([]Rule{{Filter: h, Action: Mask, Name: "hook"}})
			parts := []Part{{Path: "content[0].text", Text: "secret stuff"}}
			recs, changed, err := c.Filter(context.Background(), Call{}, Results, parts)
			if closed {
				if !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), "fail = closed") || !strings.Contains(err.Error(), tt.why) {
					t.Errorf("%s, fail closed: err = %v", tt.name, err)
				}
				if err != nil && strings.Contains(err.Error(), "secret stuff") {
					t.Errorf("%s: the error holds the text", tt.name)
				}
				continue
			}
			if err != nil || changed || len(recs) != 1 || recs[0].Action != Failed || parts[0].Text != "secret stuff" {
				t.Errorf("%s, fail open: recs %+v, changed %v, err %v", tt.name, recs, changed, err)
			}
		}
	}
}

// BenchmarkChain is the three built-in filters of BenchmarkCallTool
// (credentials, pii, size) over a 4 KiB result alone, without the call.
func BenchmarkChain(b *testing.B) {
	line := `{"id": 48213, "title": "Fix flaky retry in worker pool", "state": "open", "created": "2026-03-14T09:21:07Z", "labels": ["bug", "p2"], "url": "https://tracker.example.com/issues/48213", "path": "src/pool/retry.go", "amount": 1234.50, "version": "v1.18.2"}` + "\n" +
		"The worker retries a failed job three times with backoff 250ms, 500ms and 1s; build 20260314.3 fixed the race in 4 of 5 runs.\n"
	text := strings.Repeat(line, 4096/len(line)+1)[:4096]
	c, _ := New([]Rule{{Filter: Credentials{}, Action: Mask}, {Filter: PII{}, Action: Mask}, {Filter: Size{MaxBytes: 1 << 20}, Action: Reject}})
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	for b.Loop() {
		if _, _, err := c.Result(context.Background(), Call{Server: "s", Tool: "t"}, res); err != nil {
			b.Fatal(err)
		}
	}
}
