package decode

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// box is a table with a field of every kind.
type box struct {
	Name  string
	On    bool
	Tags  []string
	Env   map[string]string
	Wait  time.Duration
	Every time.Duration
	N     int
	Min1  int
	Size  int
	Count int
	Only  string
}

var boxFields = Table[box]{
	String("name", Every, func(b *box) *string { return &b.Name }, func(s string) string {
		if strings.Contains(s, " ") {
			return fmt.Sprintf("%q has a space", s)
		}
		return ""
	}),
	Bool("on", Every, func(b *box) *bool { return &b.On }),
	StringList("tags", TOML|YAML, func(b *box) *[]string { return &b.Tags }, func(l []string, i int) string {
		if l[i] == "" {
			return "empty tag"
		}
		return ""
	}),
	StringMap("env", Every, func(b *box) *map[string]string { return &b.Env }, func(k, v string) []string {
		var msgs []string
		if strings.ToUpper(k) != k {
			msgs = append(msgs, "not upper case")
		}
		if v == "" {
			msgs = append(msgs, "empty value")
		}
		return msgs
	}).Only("stdio"),
	Duration("wait", TOML|YAML, func(b *box) *time.Duration { return &b.Wait }, time.Hour),
	Value("wait", JSON, func(b *box) *time.Duration { return &b.Wait }, func(d *Decoder, field string, v any) (time.Duration, bool) {
		n, ok := v.(json.Number)
		if !ok {
			d.Errorf(field, "must be milliseconds, not %s", d.TypeName(v))
			return 0, false
		}
		ms, _ := n.Int64()
		return time.Duration(ms) * time.Millisecond, true
	}),
	Interval("every", TOML, func(b *box) *time.Duration { return &b.Every }, -1, time.Hour),
	Count("n", TOML, func(b *box) *int { return &b.N }),
	AtLeastOne("min1", TOML, func(b *box) *int { return &b.Min1 }),
	Bytes("size", TOML, func(b *box) *int { return &b.Size }, 10, 20),
	Positive("count", YAML, func(b *box) *int { return &b.Count }),
	String("json_only", JSON, func(b *box) *string { return &b.Only }),
	Value[box]("ignored", JSON, nil, (*Decoder).StringList),
}

// decoder returns a Decoder whose keys are on the lines given, as a parser
// would record them.
func decoder(f Format, lines map[string]int) *Decoder {
	d := New("f", f)
	for k, l := range lines {
		d.Lines[k] = l
	}
	return d
}

func problems(d *Decoder) []string {
	var out []string
	for _, p := range d.Problems {
		out = append(out, fmt.Sprintf("%d: %s: %s", p.Line, p.Field, p.Msg))
	}
	return out
}

func TestDecode(t *testing.T) {
	m := map[string]any{
		"name": "a", "on": true, "tags": []any{"x", ""}, "env": map[string]any{"K": "v"},
		"wait": "90s", "every": "off", "n": int64(3), "min1": float64(2), "size": int64(12),
	}
	lines := map[string]int{"t.name": 1, "t.on": 2, "t.tags": 3, "t.env": 4, "t.wait": 5, "t.every": 6, "t.n": 7, "t.min1": 8, "t.size": 9}
	d := decoder(TOML, lines)
	var b box
	set := boxFields.Decode(d, "t", m, &b)
	want := box{Name: "a", On: true, Tags: []string{"x", ""}, Env: map[string]string{"K": "v"}, Wait: 90 * time.Second, Every: -1, N: 3, Min1: 2, Size: 12}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("Decode (-want +got):\n%s", diff)
	}
	// In the file's order, and the empty tag is not checked by Decode.
	if diff := cmp.Diff([]string{"name", "on", "tags", "env", "wait", "every", "n", "min1", "size"}, set); diff != "" {
		t.Errorf("Decode set (-want +got):\n%s", diff)
	}
	if len(d.Problems) > 0 {
		t.Errorf("Decode problems: %q", problems(d))
	}

	// The same key, written as its format writes it.
	d = decoder(JSON, nil)
	b = box{}
	boxFields.Decode(d, "", map[string]any{"wait": json.Number("1500"), "ignored": []any{"x"}, "json_only": "j"}, &b)
	if b.Wait != 1500*time.Millisecond || b.Only != "j" || len(d.Problems) > 0 {
		t.Errorf("Decode JSON = %+v, %q; want wait 1.5s, json_only j", b, problems(d))
	}
}

// TestDecodeProblems: wrong types and unknown keys, each at its field and
// line, in the words of the file's format; suggestions come from the keys
// the format has.
func TestDecodeProblems(t *testing.T) {
	m := map[string]any{
		"name": int64(1), "on": "yes", "tags": []any{"x", int64(2)}, "env": map[string]any{"K": true},
		"wait": "soon", "n": int64(-1), "min1": int64(0), "size": int64(9), "nme": "x", "json_onyl": "x",
	}
	lines := map[string]int{"name": 1, "on": 2, "tags": 3, "tags[1]": 4, "env": 5, "env.K": 6, "wait": 7, "n": 8, "min1": 9, "size": 10, "nme": 11, "json_onyl": 12}
	for _, tt := range []struct {
		format Format
		want   []string
	}{
		{TOML, []string{
			"1: name: must be a string, not an integer",
			"2: on: must be a boolean, not a string",
			"4: tags[1]: must be a string, not an integer",
			"6: env.K: must be a string, not a boolean",
			`7: wait: invalid duration "soon" (want a Go duration such as "90s" or "2m30s")`,
			"8: n: must be between 0 and 1048576, not -1",
			"9: min1: must be at least 1, not 0",
			"10: size: must be between 10 and 20, not 9",
			`11: nme: unknown key "nme"; did you mean name?`,
			`12: json_onyl: unknown key "json_onyl"`, // not a TOML key
		}},
		{YAML, []string{
			"1: name: must be a string, not an integer",
			"2: on: must be true or false, not a string",
			"4: tags[1]: must be a string, not an integer",
			"6: env.K: must be a string, not a boolean",
			`7: wait: invalid duration "soon" (want a Go duration such as "90s" or "2m30s")`,
			`8: n: unknown field "n"; did you mean on?`,
			`9: min1: unknown field "min1"`,
			`10: size: unknown field "size"`,
			`11: nme: unknown field "nme"; did you mean name?`,
			`12: json_onyl: unknown field "json_onyl"`,
		}},
	} {
		d := decoder(tt.format, lines)
		var b box
		set := boxFields.Decode(d, "", m, &b)
		if diff := cmp.Diff(tt.want, problems(d)); diff != "" {
			t.Errorf("Decode %v problems (-want +got):\n%s", tt.format, diff)
		}
		// A map keeps its good entries; nothing else was set.
		if diff := cmp.Diff([]string{"env"}, set); diff != "" || !cmp.Equal(b, box{Env: map[string]string{}}) {
			t.Errorf("Decode %v set %q, %+v; want only env, empty (-want +got):\n%s", tt.format, set, b, diff)
		}
		if !d.Bad("tags") || !d.Bad("tags[1]") || d.Bad("env") {
			t.Errorf("Bad(tags, tags[1], env) = %v, %v, %v; want true, true, false", d.Bad("tags"), d.Bad("tags[1]"), d.Bad("env"))
		}
	}

	d := decoder(JSON, map[string]int{"wait": 1, "json_onl": 2, "env": 3})
	boxFields.Decode(d, "", map[string]any{"wait": "90s", "json_onl": "x", "env": []any{}}, &box{})
	want := []string{
		"1: wait: must be milliseconds, not a string",
		`2: json_onl: unknown key "json_onl"; did you mean json_only?`,
		"3: env: must be an object of strings, not an array",
	}
	if diff := cmp.Diff(want, problems(d)); diff != "" {
		t.Errorf("Decode JSON problems (-want +got):\n%s", diff)
	}
}

// TestDecodeAndCheck: checks run as values are read, each problem at its
// element or entry, and a value that fails is not set.
func TestDecodeAndCheck(t *testing.T) {
	m := map[string]any{"name": "a b", "on": true, "tags": []any{"x", "", "y"}, "env": map[string]any{"ok": "", "OK": "v"}}
	d := decoder(TOML, map[string]int{"t.name": 1, "t.on": 2, "t.tags": 3, "t.tags[1]": 4, "t.env": 5, "t.env.ok": 6})
	b := box{Name: "earlier", Tags: []string{"earlier"}}
	set := boxFields.DecodeAndCheck(d, "t", m, &b)
	want := []string{
		`1: t.name: "a b" has a space`,
		"4: t.tags[1]: empty tag",
		"6: t.env.ok: not upper case",
		"6: t.env.ok: empty value",
	}
	if diff := cmp.Diff(want, problems(d)); diff != "" {
		t.Errorf("DecodeAndCheck problems (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"on"}, set); diff != "" {
		t.Errorf("DecodeAndCheck set (-want +got):\n%s", diff)
	}
	if b.Name != "earlier" || b.Tags[0] != "earlier" || b.Env != nil || !b.On {
		t.Errorf("DecodeAndCheck = %+v; a value that failed its check replaced what was there", b)
	}
}

// TestCheck: Check runs on typed values (a table built in Go), zero values
// included, reporting relative to the table; the kinds' bounds hold too.
func TestCheck(t *testing.T) {
	b := box{Name: "a b", Tags: []string{"", "x", ""}, Env: map[string]string{"b": "v", "A": ""}, Wait: -time.Second, N: -2, Min1: -1, Size: 5}
	var got []string
	boxFields.Check(&b, func(field, msg string) { got = append(got, field+": "+msg) })
	want := []string{
		`name: "a b" has a space`,
		"tags[0]: empty tag",
		"tags[2]: empty tag",
		"env.A: empty value",
		"env.b: not upper case",
		"wait: must be positive, not -1s",
		"n: must be between 0 and 1048576, not -2",
		"min1: must be at least 1, not -1",
		"size: must be between 10 and 20, not 5",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Check (-want +got):\n%s", diff)
	}
	got = nil
	boxFields.Check(&box{}, func(field, msg string) { got = append(got, field+": "+msg) })
	if len(got) > 0 {
		t.Errorf("Check of the zero value: %q, want nothing (zero means unset)", got)
	}
	// A duration and an interval have a maximum; "off" is within it.
	got = nil
	boxFields.Check(&box{Wait: 90 * time.Minute, Every: 1000000 * time.Hour}, func(field, msg string) { got = append(got, field+": "+msg) })
	if diff := cmp.Diff([]string{"wait: must be at most 1h, not 1h30m", "every: must be at most 1h, not 1000000h"}, got); diff != "" {
		t.Errorf("Check beyond the maximum (-want +got):\n%s", diff)
	}
	got = nil
	boxFields.Check(&box{Wait: time.Hour, Every: -1}, func(field, msg string) { got = append(got, field+": "+msg) })
	if len(got) > 0 {
		t.Errorf("Check at the maximum, and off: %q, want nothing", got)
	}
}

func TestMerge(t *testing.T) {
	dst := box{Name: "old", N: 1, Tags: []string{"old"}}
	src := box{Name: "new", N: 2, Tags: []string{"new"}, On: true}
	boxFields.Merge(&dst, &src, []string{"name", "on"})
	if want := (box{Name: "new", N: 1, Tags: []string{"old"}, On: true}); !cmp.Equal(want, dst) {
		t.Errorf("Merge = %+v, want %+v", dst, want)
	}
}

func TestKeysIsSetScope(t *testing.T) {
	if diff := cmp.Diff([]string{"name", "on", "env", "wait", "json_only", "ignored"}, boxFields.Keys(JSON)); diff != "" {
		t.Errorf("Keys(JSON) (-want +got):\n%s", diff)
	}
	var env, tags *Field[box]
	for i := range boxFields {
		switch boxFields[i].Key {
		case "env":
			env = &boxFields[i]
		case "tags":
			tags = &boxFields[i]
		}
	}
	if env.Scope != "stdio" || tags.Scope != "" {
		t.Errorf("Scope = %q, %q; want stdio, none", env.Scope, tags.Scope)
	}
	// An empty list or map is set: tools_allowlist = [] means no tools.
	if !tags.IsSet(&box{Tags: []string{}}) || tags.IsSet(&box{}) || !env.IsSet(&box{Env: map[string]string{}}) {
		t.Error("IsSet: an empty but set list or map should be set, a nil one not")
	}
	if boxFields[len(boxFields)-1].IsSet(&box{}) {
		t.Error("IsSet of a field that stores nothing = true")
	}
}

// TestGet: a writer walking a table reads each field's value as stored,
// and a field that stores nothing gives nil.
func TestGet(t *testing.T) {
	b := box{Name: "n", On: true, Tags: []string{"a"}, Env: map[string]string{"K": "v"}, Every: -1, N: 3}
	got := map[string]any{}
	for _, f := range boxFields {
		if f.In&TOML != 0 && f.IsSet(&b) {
			got[f.Key] = f.Get(&b)
		}
	}
	want := map[string]any{"name": "n", "on": true, "tags": []string{"a"}, "env": map[string]string{"K": "v"}, "every": time.Duration(-1), "n": 3}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Get of the set TOML fields (-want +got):\n%s", diff)
	}
	if v := boxFields[len(boxFields)-1].Get(&b); v != nil {
		t.Errorf("Get of a field that stores nothing = %v, want nil", v)
	}
}

func TestPath(t *testing.T) {
	dir := t.TempDir()
	d := New(filepath.Join(dir, "conf", "switchboard.toml"), TOML)
	d.Home = "/home/me"
	for _, tt := range []struct{ in, want string }{
		{"state.db", filepath.Join(dir, "conf", "state.db")},
		{"../x/state.db", filepath.Join(dir, "x", "state.db")},
		{"~", "/home/me"},
		{"~/s/state.db", "/home/me/s/state.db"},
		{"/var/lib//sb.db", "/var/lib/sb.db"},
	} {
		if got, ok := d.Path("p", tt.in); !ok || got != tt.want {
			t.Errorf("Path(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
	if _, ok := d.Path("p", "~bob/x"); ok {
		t.Error("Path(~bob/x) succeeded")
	}
	d.Home = ""
	if _, ok := d.Path("p", "~/x"); ok {
		t.Error("Path(~/x) without a home succeeded")
	}
	want := []string{
		"0: p: ~bob/x: ~user is not expanded; write ~/… for your home folder, or the whole path",
		"0: p: ~/x: no home folder to expand ~ to (HOME is not set)",
	}
	if diff := cmp.Diff(want, problems(d)); diff != "" {
		t.Errorf("Path problems (-want +got):\n%s", diff)
	}
}
