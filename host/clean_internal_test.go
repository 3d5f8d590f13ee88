package host

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/secret"
)

func TestCleanText(t *testing.T) {
	l := &limits{desc: 64, name: 32}
	tests := []struct {
		in, want  string
		escapes   int
		invisible int
	}{
		{"plain text\nwith a newline\tand a tab", "plain text\nwith a newline\tand a tab", 0, 0},
		{"Größe: 5 €, 東京, emoji \U0001F600\uFE0F ok", "Größe: 5 €, 東京, emoji \U0001F600\uFE0F ok", 0, 0},
		{"windows\r\nline endings\r\n", "windows\nline endings\n", 0, 0},
		{"\x1b[31mred\x1b[0m", "red", 2, 0},
		{"\x1b[2J\x1b[H", "", 2, 0},
		{"\x1b]8;;https://evil.example\x1b\\docs\x1b]8;;\x1b\\", "docs", 2, 0},
		{"title\x1b]0;owned\a", "title", 1, 0},
		{"unterminated \x1b]8;;x", "unterminated 8;;x", 1, 0},
		{"charset \x1b(B and reset \x1bc", "charset  and reset ", 2, 0},
		{"a lone ESC\x1b", "a lone ESC", 1, 0},
		{"tags \U000E0049\U000E0047\U000E004E\U000E004F\U000E0052\U000E0045 here", "tags  here", 0, 6},
		{"bidi \u202Eevil\u202C \u2066x\u2069", "bidi evil x", 0, 4},
		{"zero\u200Bwidth\u200C\u200D\u2060\uFEFF", "zerowidth", 0, 5},
		{"soft\u00ADhyphen, hangul\u3164filler, cgj\u034F", "softhyphen, hangulfiller, cgj", 0, 3},
		{"bell\a nul\x00 del\x7f c1\u0085\u009b", "bell nul del c1", 0, 5},
		{"lone\rcr", "lonecr", 0, 1},
		{"line\u2028sep", "line\nsep", 0, 1},
		{"smuggle \U0001F600\uFE0F\uFE0F\U000E0100\U000E0101\uFE00", "smuggle \U0001F600\uFE0F", 0, 4},
		{"\uFE0Fno base", "no base", 0, 1},
		{"bad \xff utf-8", "bad  utf-8", 0, 1},
	}
	for _, tt := range tests {
		got, c := l.cleanText(tt.in, l.desc)
		if got != tt.want || c.escapes != tt.escapes || c.invisible != tt.invisible {
			t.Errorf("cleanText(%q) = %q, %d escapes, %d invisible; want %q, %d, %d", tt.in, got, c.escapes, c.invisible, tt.want, tt.escapes, tt.invisible)
		}
		if again, c := l.cleanText(got, l.desc); again != got || !c.none() {
			t.Errorf("cleanText(%q) is not idempotent: %q, %+v", got, again, c)
		}
	}
}

func TestCleanLine(t *testing.T) {
	l := &limits{desc: 64, name: 32}
	got, c := l.cleanLine("two\nlines\tand\r\na tab")
	if want := "two lines and a tab"; got != want || c.invisible != 4 {
		t.Errorf("cleanLine = %q, %+v; want %q, 4 removed", got, c, want)
	}
}

func TestCleanTextCut(t *testing.T) {
	l := &limits{desc: 64, name: 32}
	long := strings.Repeat("ab", 100)
	got, c := l.cleanText(long, 64)
	if len(got) != 64 || !strings.HasSuffix(got, "…") || c.from != 200 || c.to != 64 {
		t.Errorf("cleanText(200 bytes, 64) = %q (%d bytes), %+v", got, len(got), c)
	}
	if want := "cut from 200 to 64 bytes"; c.String() != want {
		t.Errorf("change = %q, want %q", c, want)
	}
	// At a character boundary.
	got, _ = l.cleanText(strings.Repeat("東", 30), 64)
	if !utf8.ValidString(got) || len(got) > 64 {
		t.Errorf("cut of multi-byte text = %q (%d bytes)", got, len(got))
	}
	// Removed first, then cut: the bound is on what is shown.
	got, c = l.cleanText(strings.Repeat("\u200b", 100)+"short", 64)
	if got != "short" || c.from != 0 || c.invisible != 100 {
		t.Errorf("cleanText(invisible + short) = %q, %+v", got, c)
	}
	if want := "100 control or invisible characters removed"; c.String() != want {
		t.Errorf("change = %q, want %q", c, want)
	}
}

// Clean text costs no allocation: discovery may clean 20,000 tools.
func TestCleanTextAllocs(t *testing.T) {
	l := &limits{desc: 8192, name: 256}
	ascii := strings.Repeat("Reads a file from the workspace and returns its text. ", 20)
	unicodeText := "Liest eine Datei: Größe, 東京, \U0001F600\uFE0F. " + ascii
	for _, s := range []string{ascii, unicodeText} {
		if n := testing.AllocsPerRun(100, func() { l.cleanText(s, l.desc) }); n != 0 {
			t.Errorf("cleanText of clean text: %v allocations, want 0", n)
		}
	}
	tool := &mcp.Tool{Name: "read_file", Title: "Read file", Description: ascii, InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string", "description": "The path."}}}}
	if n := testing.AllocsPerRun(100, func() { l.cleanTool(tool) }); n != 0 {
		t.Errorf("cleanTool of a clean tool: %v allocations, want 0", n)
	}
}

// Every rune the cleaner keeps is visible, or a newline or tab, or one
// presentation selector after a visible character.
func TestCleanTextKeepsOnlyVisible(t *testing.T) {
	l := &limits{desc: 1 << 20, name: 256}
	var all strings.Builder
	for r := rune(0); r < 0x110000; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		all.WriteRune(r)
		all.WriteByte('a')
	}
	got, _ := l.cleanText(all.String(), l.desc)
	prev := rune(0)
	for _, r := range got {
		switch {
		case r == '\n' || r == '\t':
		case r == '\uFE0E' || r == '\uFE0F':
			if prev == '\uFE0E' || prev == '\uFE0F' || prev == 0 {
				t.Errorf("a presentation selector after %U kept", prev)
			}
		case unicode.Is(unicode.Cc, r), unicode.Is(unicode.Cf, r),
			unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r), unicode.Is(unicode.Variation_Selector, r):
			t.Errorf("%U kept", r)
		}
		prev = r
	}
}

// A secret hidden from the redactor by invisible characters is whole,
// and redacted, once they are removed.
func TestCleanTextRedactsAgain(t *testing.T) {
	red := secret.NewRedactor()
	red.Add("s3cr3t-canary")
	l := &limits{desc: 8192, name: 256, redact: red.Redact}
	got, _ := l.cleanText("token s3cr\u200b3t-ca\U000E0041nary here", l.desc)
	if strings.Contains(got, "s3cr3t") || !strings.Contains(got, "[REDACTED]") {
		t.Errorf("cleanText = %q, want the secret redacted", got)
	}
}

func TestCleanSchema(t *testing.T) {
	l := &limits{desc: 16, name: 8}
	in := map[string]any{
		"type":        "object",
		"title":       "a\x1b[31mtitle that is long",
		"description": "ok",
		"properties": map[string]any{
			"description": map[string]any{"type": "string", "description": "the\u200bproperty"},
			"enum":        map[string]any{"enum": []any{"a\u200bb"}, "default": "x\u200by"},
			"list":        map[string]any{"items": []any{map[string]any{"$comment": "c\u202e"}}},
		},
		"$defs": map[string]any{"d": map[string]any{"description": strings.Repeat("d", 40)}},
		"const": "k\u200b",
	}
	var sc schemaChange
	got := l.cleanSchema(in, 0, &sc)
	want := map[string]any{
		"type":        "object",
		"title":       "atitl…",
		"description": "ok",
		"properties": map[string]any{
			"description": map[string]any{"type": "string", "description": "theproperty"},
			"enum":        map[string]any{"enum": []any{"a\u200bb"}, "default": "xy"},
			"list":        map[string]any{"items": []any{map[string]any{"$comment": "c"}}},
		},
		"$defs": map[string]any{"d": map[string]any{"description": strings.Repeat("d", 13) + "…"}},
		"const": "k\u200b",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cleanSchema (-want +got):\n%s", diff)
	}
	if sc.escapes != 1 || sc.invisible != 3 || sc.from != 2 || !sc.changed {
		t.Errorf("schema change = %+v, want 1 escape, 3 invisible, 2 cut", sc)
	}
	// The original is not modified.
	if in["title"] != "a\x1b[31mtitle that is long" || in["properties"].(map[string]any)["description"].(map[string]any)["description"] != "the\u200bproperty" {
		t.Errorf("cleanSchema modified its input: %v", in)
	}
}

// FuzzCleanText: whatever a server declares, cleaning never panics, keeps
// within the bound, leaves nothing hidden, and is idempotent.
func FuzzCleanText(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[31mred\x1b[0m", "\x1b]8;;u\x1b\\t\x1b]8;;\x1b\\", "\x1b]unterminated",
		"\U000E0041\u202e\u200b", "\U0001F600\uFE0F\uFE0F\U000E0100", "a\r\nb\rc", "\xff\xfe", "東京\u2028", "\x1b"} {
		f.Add(s, uint16(64), false)
	}
	f.Fuzz(func(t *testing.T, s string, max uint16, oneLine bool) {
		l := &limits{desc: 8 + int(max), name: 8 + int(max)}
		got, c := l.clean(s, l.desc, oneLine)
		if len(got) > l.desc {
			t.Fatalf("clean(%q) = %d bytes, over %d", s, len(got), l.desc)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("clean(%q) = %q: not UTF-8", s, got)
		}
		for _, r := range got {
			if (r < ' ' && (oneLine || (r != '\n' && r != '\t'))) || r == 0x7f || (r >= 0x80 && r < 0xa0) ||
				unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) {
				t.Fatalf("clean(%q) = %q keeps %U", s, got, r)
			}
		}
		if again, c2 := l.clean(got, l.desc, oneLine); again != got || c2.escapes+c2.invisible > 0 {
			t.Fatalf("clean is not idempotent: %q -> %q -> %q (%+v, %+v)", s, got, again, c, c2)
		}
	})
}
