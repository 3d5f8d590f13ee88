package secret

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    []Placeholder
		wantErr string // substring; "" for success
	}{
		{"", nil, ""},
		{"plain text, no braces", nil, ""},
		{"single { brace } and }} closers", nil, ""},
		{"{{env.HOME}}", []Placeholder{{"env", "HOME", 0, 12}}, ""},
		{"Bearer {{secrets.github}}", []Placeholder{{"secrets", "github", 7, 25}}, ""},
		{"{{ secrets.github }}", []Placeholder{{"secrets", "github", 0, 20}}, ""},
		{"{{\tenv.X\t}}", []Placeholder{{"env", "X", 0, 11}}, ""},
		{"{{env.A}}{{secrets.b-c.d_e}}", []Placeholder{{"env", "A", 0, 9}, {"secrets", "b-c.d_e", 9, 28}}, ""},
		{"{{env._x9}}", []Placeholder{{"env", "_x9", 0, 11}}, ""},
		{"{{env." + strings.Repeat("a", 128) + "}}", []Placeholder{{"env", strings.Repeat("a", 128), 0, 136}}, ""},
		// Errors quote the offending text.
		{"x {{", nil, `"{{" at offset 2: unterminated`},
		{"{{env.HOME", nil, `"{{env.HOME" at offset 0: unterminated`},
		{"{{env.HOME}", nil, "unterminated"},
		{"{{}}", nil, `"{{}}" at offset 0: empty placeholder`},
		{"{{  }}", nil, "empty placeholder"},
		{"{{HOME}}", nil, `"{{HOME}}" at offset 0: want {{env.NAME}}`},
		{"{{vault.x}}", nil, `unknown kind "vault"`},
		{"{{secret.github}}", nil, "did you mean {{secrets.github}}?"},
		{"{{ENV.HOME}}", nil, `unknown kind "ENV"`},
		{"{{env.}}", nil, "empty name"},
		{"{{secrets.}}", nil, "empty name"},
		{"{{env.9x}}", nil, "invalid name"},
		{"{{env.-x}}", nil, "invalid name"},
		{"{{env.a b}}", nil, "invalid name"},
		{"{{env.a$b}}", nil, "invalid name"},
		{"{{ env .x}}", nil, `unknown kind "env "`},
		{"{{env. x}}", nil, "invalid name"},
		{"{{env." + strings.Repeat("a", 129) + "}}", nil, "longer than 128"},
		{"{{env.A}} then {{bad}}", nil, `"{{bad}}" at offset 15`},
		{"{{ {{env.X}} }}", nil, "unknown kind"},
		{"{{env.X}}}", []Placeholder{{"env", "X", 0, 9}}, ""}, // the third brace is text
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if tt.wantErr != "" {
			var se *SyntaxError
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &se) {
				t.Errorf("Parse(%q) = %v, %v, want *SyntaxError containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q) error = %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseQuotesAreClipped(t *testing.T) {
	_, err := Parse("{{" + strings.Repeat("x", 1000))
	if err == nil || len(err.Error()) > 200 {
		t.Errorf("Parse(long) error = %v, want a short error", err)
	}
}

func TestEnvVar(t *testing.T) {
	for name, want := range map[string]string{
		"github":         "SWITCHBOARD_SECRET_GITHUB",
		"my-token.v2":    "SWITCHBOARD_SECRET_MY_TOKEN_V2",
		"Already_Upper9": "SWITCHBOARD_SECRET_ALREADY_UPPER9",
	} {
		if got := EnvVar(name); got != want {
			t.Errorf("EnvVar(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestEnvStore(t *testing.T) {
	var _ Store = EnvStore{} // the zero EnvStore is a Store
	s := EnvStore{LookupEnv: mapLookup(map[string]string{"SWITCHBOARD_SECRET_GH_TOKEN": "ghp_x"})}
	if v, ok := s.Lookup("gh-token"); !ok || v != "ghp_x" {
		t.Errorf("Lookup(gh-token) = %q, %v", v, ok)
	}
	if _, ok := s.Lookup("other"); ok {
		t.Errorf("Lookup(other) found a value")
	}
	t.Setenv("SWITCHBOARD_SECRET_FROM_OS", "os-value")
	if v, ok := (EnvStore{}).Lookup("from.os"); !ok || v != "os-value" {
		t.Errorf("EnvStore{}.Lookup(from.os) = %q, %v, want os-value", v, ok)
	}
}

func mapLookup(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestExpand(t *testing.T) {
	env := mapLookup(map[string]string{"HOME": "/home/u", "EMPTY": "", "BRACES": "{{env.HOME}}"})
	secrets := EnvStore{LookupEnv: mapLookup(map[string]string{
		"SWITCHBOARD_SECRET_GITHUB": "ghp_supersecret",
		"SWITCHBOARD_SECRET_SHORT":  "abc",
	})}
	tests := []struct {
		in      string
		want    string
		wantErr []string // every substring must appear
	}{
		{"no placeholders", "no placeholders", nil},
		{"{{env.HOME}}/bin", "/home/u/bin", nil},
		{"Bearer {{ secrets.github }}", "Bearer ghp_supersecret", nil},
		{"{{env.HOME}}:{{secrets.github}}:{{env.HOME}}", "/home/u:ghp_supersecret:/home/u", nil},
		{"[{{env.EMPTY}}]", "[]", nil},
		{"{{env.BRACES}}", "{{env.HOME}}", nil}, // values are not expanded again
		{"{{secrets.short}}", "abc", nil},
		{"{{env.HOME2}}", "", []string{"{{env.HOME2}} is not set"}},
		{"{{secrets.gitlab}}", "", []string{"{{secrets.gitlab}} is not set (set SWITCHBOARD_SECRET_GITLAB)"}},
		{"{{ secrets.a-b }}", "", []string{"{{secrets.a-b}} is not set (set SWITCHBOARD_SECRET_A_B)"}},
		{"{{env.X}} {{secrets.github}} {{secrets.y}}", "", []string{"{{env.X}} is not set", "{{secrets.y}} is not set"}},
		{"{{secret.github}}", "", []string{"did you mean {{secrets.github}}"}},
		{"{{env.HOME", "", []string{"unterminated"}},
	}
	for _, tt := range tests {
		red := NewRedactor()
		got, err := Expand(tt.in, env, secrets, red)
		if tt.wantErr == nil {
			if err != nil || got != tt.want {
				t.Errorf("Expand(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("Expand(%q) = %q, want an error", tt.in, got)
			continue
		}
		for _, w := range tt.wantErr {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Expand(%q) error = %q, want it to contain %q", tt.in, err, w)
			}
		}
		for _, v := range []string{"ghp_supersecret", "/home/u"} {
			if strings.Contains(err.Error(), v) {
				t.Errorf("Expand(%q) error = %q contains value %q", tt.in, err, v)
			}
		}
	}
}

// Every resolved value is registered for redaction, an environment
// variable's like a secret's (the README promises that a resolved value
// never reaches output), but for the public variables every server gets
// anyway: redacting the home folder would garble every path.
func TestExpandRegistersSecrets(t *testing.T) {
	red := NewRedactor()
	secrets := EnvStore{LookupEnv: mapLookup(map[string]string{"SWITCHBOARD_SECRET_GITHUB": "ghp_supersecret"})}
	env := mapLookup(map[string]string{
		"API_TOKEN": "env-token-value",
		"HOME":      "/home/alice",
		"USER":      "alice-the-user",
		"LC_ALL":    "en_US.UTF-8",
	})
	if _, err := Expand("{{env.API_TOKEN}} {{env.HOME}} {{env.USER}} {{env.LC_ALL}} {{secrets.github}}", env, secrets, red); err != nil {
		t.Fatal(err)
	}
	in := "token env-token-value home /home/alice user alice-the-user locale en_US.UTF-8 secret ghp_supersecret"
	want := "token [REDACTED] home /home/alice user alice-the-user locale en_US.UTF-8 secret [REDACTED]"
	if got := red.Redact(in); got != want {
		t.Errorf("after Expand, Redact(%q) = %q, want %q", in, got, want)
	}
}

func TestPublicEnv(t *testing.T) {
	for name, want := range map[string]bool{
		"HOME": true, "PATH": true, "USER": true, "LC_CTYPE": true, "TZ": true,
		"API_TOKEN": false, "GITHUB_TOKEN": false, "SWITCHBOARD_SECRET_X": false, "home": false, "PATHS": false,
	} {
		if got := PublicEnv(name); got != want {
			t.Errorf("PublicEnv(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestExpandErrors(t *testing.T) {
	_, err := Expand("{{secrets.github}}", nil, EnvStore{LookupEnv: mapLookup(nil)}, nil)
	var ue *UnresolvedError
	if !errors.As(err, &ue) {
		t.Fatalf("Expand error = %T %v, want *UnresolvedError", err, err)
	}
	want := Placeholder{Kind: "secrets", Name: "github", Start: 0, End: 18}
	if diff := cmp.Diff(want, ue.Placeholder); diff != "" {
		t.Errorf("UnresolvedError.Placeholder mismatch (-want +got):\n%s", diff)
	}
	_, err = Expand("{{secrets.github}}", nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "no secret store") {
		t.Errorf("Expand with nil Store = %v, want an error saying there is no store", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "{{env.A}}", "x{{ secrets.b }}y", "{{", "{{}}", "{{env.}}", "{{a.b}}", "}}{{env.X}}{{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := Parse(s)
		if err != nil {
			if !strings.Contains(s, "{{") {
				t.Fatalf("Parse(%q) = %v, but s has no {{", s, err)
			}
			return
		}
		last := 0
		for _, p := range ps {
			if p.Start < last || p.End > len(s) || p.Start >= p.End {
				t.Fatalf("Parse(%q): placeholder %+v out of order or range", s, p)
			}
			text := s[p.Start:p.End]
			if !strings.HasPrefix(text, "{{") || !strings.HasSuffix(text, "}}") {
				t.Fatalf("Parse(%q): placeholder %+v spans %q", s, p, text)
			}
			if again, err := Parse(p.String()); err != nil || len(again) != 1 || again[0].Kind != p.Kind || again[0].Name != p.Name {
				t.Fatalf("Parse(%q) = %v, %v: canonical form does not round-trip", p.String(), again, err)
			}
			if strings.Contains(s[last:p.Start], "{{") {
				t.Fatalf("Parse(%q) skipped a {{ before %+v", s, p)
			}
			last = p.End
		}
		if strings.Contains(s[last:], "{{") {
			t.Fatalf("Parse(%q) skipped a trailing {{", s)
		}
		// Expand with every name set resolves everything.
		found := func(string) (string, bool) { return "v", true }
		if _, err := Expand(s, found, EnvStore{LookupEnv: found}, NewRedactor()); err != nil {
			t.Fatalf("Expand(%q) with everything set = %v", s, err)
		}
	})
}
