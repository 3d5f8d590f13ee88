package toolscan

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRequired(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		want    [][]string
	}{
		{`(?i)\b(ignore|disregard)\s+all`, [][]string{{"ignore", "disregard"}, {"all"}}},
		{`(?i)<\s*/?\s*(important|system)\s*>`, [][]string{{"<"}, {"important", "system"}, {">"}}},
		{`(?i)\bfrom\s+now\s+on\b`, [][]string{{"from"}, {"now"}, {"on"}}},
		{`(?i)(assistant|ai|llm)`, [][]string{{"assistant", "ai", "llm"}}},
		{`(?i)(send|sends)\s+to`, [][]string{{"send", "sends"}, {"to"}}},
		{`(?i)(a|b)?c`, [][]string{{"c"}}},
		{`(?i)\w+@x`, [][]string{{"@x"}}},
		{`(?i)[0-9a-f]{80,}`, nil},
	} {
		if got := required(tt.pattern); !slices.EqualFunc(got, tt.want, slices.Equal) {
			t.Errorf("required(%q) = %q, want %q", tt.pattern, got, tt.want)
		}
	}
}

// TestPrefilterExact: on every string of the corpus, every pattern finds
// with its prefilter what it finds without.
func TestPrefilterExact(t *testing.T) {
	var texts []string
	var collect func(any)
	collect = func(v any) {
		switch x := v.(type) {
		case string:
			texts = append(texts, x, reveal(x))
		case []any:
			for _, e := range x {
				collect(e)
			}
		case map[string]any:
			for k, e := range x {
				texts = append(texts, k)
				collect(e)
			}
		}
	}
	files, _ := filepath.Glob("testdata/*/*.json")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		collect(v)
	}
	if len(patterns) < 50 || len(texts) < 1000 {
		t.Fatalf("%d patterns, %d texts", len(patterns), len(texts))
	}
	unfiltered := 0
	for _, p := range patterns {
		x, need := p.get()
		if need == nil {
			unfiltered++
			t.Logf("always runs: %s", x)
		}
		for _, s := range texts {
			want := x.FindString(s)
			got := ""
			if mayMatch(strings.ToLower(s), need) {
				got = x.FindString(s)
			}
			if got != want {
				t.Errorf("%s on %q: %q with the prefilter, %q without", x, s, got, want)
			}
		}
	}
	t.Logf("%d of %d patterns always run", unfiltered, len(patterns))
	// mailTo and secretVar test for their literals themselves.
	for _, s := range texts {
		want := ""
		for _, m := range mailToRe().FindAllStringSubmatch(s, -1) {
			if d := strings.ToLower(m[3]); !strings.HasPrefix(d, "example.") && !strings.HasSuffix(d, ".example") && d != "domain.com" && d != "company.com" {
				want = m[0]
				break
			}
		}
		if got := mailTo(s, ""); got != want {
			t.Errorf("mailTo(%q) = %q, %q without its test for @", s, got, want)
		}
		if got, want := secretVar(s, ""), secretVarRe().FindString(s); got != want {
			t.Errorf("secretVar(%q) = %q, %q without its test for the words", s, got, want)
		}
	}
}
