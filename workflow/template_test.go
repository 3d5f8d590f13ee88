package workflow

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testScope is the scope the template tests evaluate in: inputs and results
// as JSON decodes them (float64, json.Number from fromJson), a skipped step
// (nil) and vars.
func testScope() *Scope {
	var fetch any
	if err := json.Unmarshal([]byte(`{"status": 200, "items": ["a", "b", "c"], "meta": {"x": 1.5, "ok": true}, "empty": [], "none": null}`), &fetch); err != nil {
		panic(err)
	}
	return &Scope{
		Inputs: map[string]any{"name": "Ada", "count": float64(3), "tags": []any{"x", "y"}, "flag": false, "zero": float64(0), "text": "<a&b>"},
		Steps:  map[string]any{"fetch": fetch, "skipped": nil, "n": json.Number("12345678901234567890")},
		Vars:   map[string]any{"greeting": "hello"},
	}
}

func TestTemplateEval(t *testing.T) {
	tests := []struct {
		src  string
		want any
	}{
		// Typed single actions.
		{`{{ .inputs.count }}`, float64(3)},
		{`  {{ .steps.fetch.result.items }}` + "\n", []any{"a", "b", "c"}},
		{`{{- .steps.fetch.result.meta -}}`, map[string]any{"x": 1.5, "ok": true}},
		{`{{ .steps.fetch.result.meta.ok }}`, true},
		{`{{ .steps.skipped.result }}`, nil},
		{`{{ .steps.n.result }}`, json.Number("12345678901234567890")},
		{`{{ 42 }}`, int64(42)},
		{`{{ 1.5 }}`, 1.5},
		{`{{ "s" }}`, "s"},
		{`{{ nil }}`, nil},
		{`{{ true }}`, true},
		{`{{/* a comment */}} {{ .inputs.count }}`, float64(3)},
		{`{{ fromJson "{\"a\": [1, 2]}" }}`, map[string]any{"a": []any{json.Number("1"), json.Number("2")}}},
		{`{{ len .steps.fetch.result.items }}`, int64(3)},
		{`{{ index .steps.fetch.result.items 1 }}`, "b"},
		{`{{ (index .steps.fetch.result "meta").x }}`, 1.5},
		{`{{ .inputs.tags | json }}`, `["x","y"]`},
		// Text: anything else.
		{`n={{ .inputs.count }}`, "n=3"},
		{`{{ .inputs.count }}{{ .inputs.count }}`, "33"},
		{`{{ $x := .inputs.count }}`, ""},
		{`{{ $x := .inputs.name }}{{ $x }}`, "Ada"},
		{`{{ .steps.fetch.result.items }} !`, `["a","b","c"] !`},
		{`{{ .steps.fetch.result.meta }}.`, `{"ok":true,"x":1.5}.`},
		{`[{{ .steps.skipped.result }}]`, "[]"},
		{`{{ .inputs.text }} {{ json .inputs.text }}`, `<a&b> "<a&b>"`},
		{`{{ .steps.n.result }}!`, "12345678901234567890!"},
		// Functions.
		{`{{ json .steps.fetch.result.meta }}`, `{"ok":true,"x":1.5}`},
		{`{{ json nil }}`, `null`},
		{`{{ (fromJson "[1, \"a\"]") | len }}`, int64(2)},
		{`{{ default "anon" .inputs.name }}`, "Ada"},
		{`{{ .steps.skipped.result | default "none" }}`, "none"},
		{`{{ .steps.fetch.result.empty | default "none" }}`, "none"},
		{`{{ default "none" "" }}`, "none"},
		{`{{ default 7 .inputs.zero }}`, float64(0)},
		{`{{ default 7 .inputs.flag }}`, false},
		{`{{ join ", " .steps.fetch.result.items }}`, "a, b, c"},
		{`{{ .inputs.tags | join "+" }}`, "x+y"},
		{`{{ join "," (fromJson "[1, 2.5, true, null, {\"a\":1}]") }}`, `1,2.5,true,,{"a":1}`},
		{`{{ join "," nil }}`, ""},
		{`{{ eq .inputs.count 3 }}`, true},
		{`{{ eq .inputs.name "Bob" "Ada" }}`, true},
		{`{{ eq .inputs.name "Bob" }}`, false},
		{`{{ eq .steps.skipped.result nil }}`, true},
		{`{{ eq .inputs.name nil }}`, false},
		{`{{ eq .steps.n.result .steps.n.result }}`, true},
		{`{{ ne .inputs.count 4 }}`, true},
		{`{{ lt .inputs.count 4 }}`, true},
		{`{{ le .inputs.count 3 }}`, true},
		{`{{ gt .inputs.count 3.5 }}`, false},
		{`{{ ge .steps.fetch.result.status 200 }}`, true},
		{`{{ lt "a" "b" }}`, true},
		{`{{ and .inputs.name .inputs.count }}`, float64(3)},
		{`{{ and .inputs.flag .nonexistent_never_evaluated }}`, false},
		{`{{ or .inputs.flag .inputs.zero "x" }}`, "x"},
		{`{{ or .inputs.name .nonexistent_never_evaluated }}`, "Ada"},
		{`{{ not .inputs.flag }}`, true},
		{`{{ not "false" }}`, true},
		{`{{ not .steps.fetch.result.items }}`, false},
		{`{{ len "héllo" }}`, int64(5)},
		{`{{ len .steps.fetch.result.meta }}`, int64(2)},
		{`{{ len .steps.skipped.result }}`, int64(0)},
		{`{{ index .inputs "name" }}`, "Ada"},
		{`{{ index .inputs "missing" }}`, nil},
		{`{{ index .steps.fetch.result "items" 2 }}`, "c"},
		{`{{ print "a" 1 2 "b" }}`, "a1 2b"},
		{`{{ print .steps.fetch.result.items }}`, `["a","b","c"]`},
		{`{{ print nil }}`, ""},
		{`{{ printf "%d items, %.1f, %v, %s" 3.0 .steps.fetch.result.meta.x .inputs.count .inputs.name }}`, "3 items, 1.5, 3, Ada"},
		{`{{ printf "%05d|%x|%q" .steps.fetch.result.status 255 "q" }}`, `00200|ff|"q"`},
		{`{{ printf "%.2f" 3 }}`, "3.00"},
		{`{{ printf "%v" .steps.fetch.result.meta }}`, `{"ok":true,"x":1.5}`},
		{`{{ printf "%d" .steps.n.result }}`, "%!d(float64=1.2345678901234567e+19)"},
		{`{{ printf "100%%" }}`, "100%"},
		// Control.
		{`{{ if .inputs.flag }}yes{{ else }}no{{ end }}`, "no"},
		{`{{ if .inputs.zero }}a{{ else if .inputs.name }}b{{ end }}`, "b"},
		{`{{ if $n := .inputs.name }}{{ $n }}{{ else }}{{ $n }}!{{ end }}`, "Ada"},
		{`{{ with .steps.fetch.result.meta }}{{ .x }}{{ end }}`, "1.5"},
		{`{{ with .steps.skipped.result }}{{ . }}{{ else }}skipped{{ end }}`, "skipped"},
		{`{{ with .inputs.flag }}x{{ else with .inputs.name }}{{ . }}{{ end }}`, "Ada"},
		{`{{ range .steps.fetch.result.items }}<{{ . }}>{{ end }}`, "<a><b><c>"},
		{`{{ range $i, $e := .steps.fetch.result.items }}{{ $i }}={{ $e }};{{ end }}`, "0=a;1=b;2=c;"},
		{`{{ range $k, $v := .steps.fetch.result.meta }}{{ $k }}={{ $v }};{{ end }}`, "ok=true;x=1.5;"},
		{`{{ range .steps.fetch.result.empty }}x{{ else }}empty{{ end }}`, "empty"},
		{`{{ range .steps.skipped.result }}x{{ else }}none{{ end }}`, "none"},
		{`{{ range 3 }}{{ . }}{{ end }}`, "012"},
		{`{{ range .inputs.count }}{{ . }}{{ end }}`, "012"},
		{`{{ range .steps.fetch.result.items }}{{ if eq . "b" }}{{ break }}{{ end }}{{ . }}{{ end }}`, "a"},
		{`{{ range .steps.fetch.result.items }}{{ if eq . "b" }}{{ continue }}{{ end }}{{ . }}{{ end }}`, "ac"},
		{`{{ range .steps.fetch.result.items }}{{ $.inputs.name }}{{ end }}`, "AdaAdaAda"},
		{`{{ $s := "" }}{{ range .inputs.tags }}{{ $s = print $s . }}{{ end }}{{ $s }}`, "xy"},
		{`{{ (.steps.fetch.result).status }}`, float64(200)},
		{`{{ .vars.greeting }}, {{ .inputs.name }}`, "hello, Ada"},
	}
	s := testScope()
	for _, tt := range tests {
		tmpl, err := ParseTemplate(tt.src)
		if err != nil {
			t.Errorf("ParseTemplate(%q): %v", tt.src, err)
			continue
		}
		got, err := tmpl.Eval(s)
		if err != nil {
			t.Errorf("Eval(%q): %v", tt.src, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Eval(%q) = %#v, want %#v", tt.src, got, tt.want)
		}
		// Render is Eval's text.
		r, err := tmpl.Render(s)
		if err != nil {
			t.Errorf("Render(%q): %v", tt.src, err)
		} else if want := strings.TrimSpace(text(tt.want)); strings.TrimSpace(r) != want {
			t.Errorf("Render(%q) = %q, want %q", tt.src, r, want)
		}
	}
}

func TestTemplateItem(t *testing.T) {
	tmpl, err := ParseTemplate(`{{ .index }}:{{ .file.name }}`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Render(&Scope{ItemName: "file", Item: map[string]any{"name": "a.txt"}, Index: 2})
	if err != nil || got != "2:a.txt" {
		t.Errorf("Render = %q, %v; want 2:a.txt", got, err)
	}
}

func TestTemplateTruth(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{`{{ true }}`, true},
		{`{{ false }}`, false},
		{`{{ .inputs.count }}`, true},
		{`{{ .inputs.zero }}`, false},
		{`{{ .inputs.name }}`, true},
		{`{{ "" }}`, false},
		{`{{ "false" }}`, false},
		{`{{ "0" }}`, false},
		{`{{ "no" }}`, true},
		{`{{ if .inputs.flag }}true{{ else }}false{{ end }}`, false},
		{` {{ if .inputs.count }}true{{ else }}false{{ end }} ` + "\n", true},
		{`{{ .steps.fetch.result.items }}`, true},
		{`{{ .steps.fetch.result.empty }}`, false},
		{`{{ .steps.fetch.result.meta }}`, true},
		{`{{ .steps.skipped.result }}`, false},
		{`{{ .steps.n.result }}`, true},
		{`{{ eq .steps.fetch.result.status 200 }}`, true},
		{`false`, false},
		{`yes`, true},
	}
	for _, tt := range tests {
		tmpl, err := ParseTemplate(tt.src)
		if err != nil {
			t.Fatalf("ParseTemplate(%q): %v", tt.src, err)
		}
		got, err := tmpl.Truth(testScope())
		if err != nil || got != tt.want {
			t.Errorf("Truth(%q) = %v, %v; want %v", tt.src, got, err, tt.want)
		}
	}
}

// TestTemplateRunErrors: a template that fails when evaluated says where
// (file:line, field) and what (the path read, the function), and never
// renders "<no value>".
func TestTemplateRunErrors(t *testing.T) {
	tests := []struct {
		src  string
		want string
	}{
		{`{{ .steps.fetch.result.url }}`, `wf.yaml:7: steps[1].arguments.url: .steps.fetch.result.url: no key "url"`},
		{"line one\n{{ .inputs.nope }}", `wf.yaml:8: steps[1].arguments.url: .inputs.nope: no key "nope"`},
		{`{{ .steps.fetch.result.items.x }}`, `.steps.fetch.result.items.x: cannot read key "x" of a list`},
		{`{{ .steps.skipped.result.x }}`, `.steps.skipped.result.x: cannot read key "x" of null`},
		{`{{ $m := .steps.fetch.result }}{{ $m.nope }}`, `$m.nope: no key "nope"`},
		{`{{ (.steps.fetch.result).nope }}`, `no key "nope"`},
		{`{{ .inputs.name 1 }}`, `is not a function`},
		{`{{ .inputs.name | .inputs.count }}`, `is not a function`},
		{`{{ fromJson "{" }}`, `fromJson: invalid JSON`},
		{`{{ fromJson "1 2" }}`, `fromJson: invalid JSON: more than one value`},
		{`{{ fromJson 1 }}`, `fromJson: want a string of JSON, not a number`},
		{`{{ json }}`, `json: want 1 argument, got 0`},
		{`{{ default "x" }}`, `default: want 2 arguments, got 1`},
		{`{{ join "," "abc" }}`, `join: want a list to join, not a string`},
		{`{{ join 1 .inputs.tags }}`, `join: the separator must be a string, not a number`},
		{`{{ eq .inputs.name 1 }}`, `eq: incompatible types: a string and a number`},
		{`{{ eq .inputs.tags .inputs.tags }}`, `eq: cannot compare a list with a list`},
		{`{{ eq 1 }}`, `eq: want at least 2 arguments, got 1`},
		{`{{ ne 1 2 3 }}`, `ne: want 2 arguments, got 3`},
		{`{{ lt .inputs.name 1 }}`, `lt: cannot order a string and a number`},
		{`{{ len 3 }}`, `len: no length for a number`},
		{`{{ index .steps.fetch.result.items 3 }}`, `index: index 3 out of range (the list has 3)`},
		{`{{ index .steps.fetch.result.items "a" }}`, `index: a list's index must be a whole number, not a string`},
		{`{{ index .inputs 1 }}`, `index: a map's key must be a string, not a number`},
		{`{{ index .inputs.name 0 }}`, `index: cannot index a string`},
		{`{{ printf 1 }}`, `printf: the format must be a string`},
		{`{{ printf "%01000000d" 1 }}`, `printf: width or precision over 9999`},
		{`{{ printf "%.99999f" 1.0 }}`, `printf: width or precision over 9999`},
		{`{{ printf "%*d" 5 1 }}`, `printf: a width or precision of * is not supported`},
		{`{{ and }}`, `and: want at least 1 argument`},
		{`{{ range .inputs.name }}{{ end }}`, `range over a string: want a list, a map or a count`},
		{`{{ range -1 }}{{ end }}`, `range over a number`},
		{`{{ $x = 1 }}`, `undefined variable`},
	}
	for _, tt := range tests {
		tmpl, err := parseTemplate("wf.yaml", 7, "steps[1].arguments.url", tt.src)
		if err != nil {
			// Some mistakes are caught by the parser already.
			if !strings.Contains(err.Error(), tt.want) && !strings.Contains(err.Error(), "undefined variable") {
				t.Errorf("parse(%q): %v", tt.src, err)
			}
			continue
		}
		_, err = tmpl.Eval(testScope())
		var te *TemplateError
		if !errors.As(err, &te) {
			t.Errorf("Eval(%q) = %v, want a *TemplateError", tt.src, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "wf.yaml:") {
			t.Errorf("Eval(%q) = %q, want wf.yaml:LINE: … %q", tt.src, err, tt.want)
		}
	}
}

// TestTemplateBounds: no template makes more than MaxTemplateOutput bytes
// of output or of one string, nor runs forever.
func TestTemplateBounds(t *testing.T) {
	tests := []struct {
		src  string
		want string
	}{
		{`{{ range 2000000 }}x{{ end }}`, "output longer than 1048576 bytes"},
		{`{{ range 1000000000 }}{{ end }}`, "evaluation took more than"},
		{`{{ $s := "xxxxxxxxxxxxxxxx" }}{{ range 40 }}{{ $s = print $s $s }}{{ end }}`, "print: result longer than 1048576 bytes"},
		{`{{ $s := "xxxxxxxxxxxxxxxx" }}{{ range 40 }}{{ $s = printf "%s%s" $s $s }}{{ end }}`, "printf: result longer than"},
		{`{{ $l := fromJson "[\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"]" }}{{ range 20 }}{{ $l = fromJson (printf "[%s,%s]" (json $l) (json $l)) }}{{ end }}`, "longer than"},
		{`{{ $s := "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" }}{{ range 17 }}{{ $s = print $s $s }}{{ end }}{{ join $s (fromJson "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99,100]") }}`, "longer than"},
	}
	for _, tt := range tests {
		tmpl, err := ParseTemplate(tt.src)
		if err != nil {
			t.Fatalf("ParseTemplate(%q): %v", tt.src, err)
		}
		_, err = tmpl.Render(nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Render(%.60q) = %v, want %q", tt.src, err, tt.want)
		}
	}
	// Just under the bound is fine.
	tmpl, err := ParseTemplate(`{{ range 1048576 }}x{{ end }}`)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := tmpl.Render(nil); err != nil || len(s) != MaxTemplateOutput {
		t.Errorf("Render(1 MiB) = %d bytes, %v", len(s), err)
	}
}

// TestTemplateParseErrors: what the evaluator does not support is refused
// when the template is parsed, at its line.
func TestTemplateParseErrors(t *testing.T) {
	tests := []struct {
		src  string
		want string
	}{
		{`{{ call .inputs.f }}`, `wf.yaml:7: steps[1].prompt: function "call" not defined`},
		{`{{ html .inputs.name }}`, `function "html" not defined`},
		{"a\n\n{{ nosuch 1 }}", `wf.yaml:9: steps[1].prompt: function "nosuch" not defined`},
		{`{{ template "x" }}`, `{{template "x"}} is not supported`},
		{`{{ define "x" }}a{{ end }}`, `define and block are not supported`},
		{`{{ block "x" . }}a{{ end }}`, `define and block are not supported`},
		{`{{ .inputs.name `, `unclosed action`},
		{`{{ break }}`, `{{break}} outside {{range}}`},
		{`{{ $x }}`, `undefined variable "$x"`},
	}
	for _, tt := range tests {
		_, err := parseTemplate("wf.yaml", 7, "steps[1].prompt", tt.src)
		var te *TemplateError
		if !errors.As(err, &te) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parse(%q) = %v, want %q", tt.src, err, tt.want)
		}
	}
}

// TestTemplateCheck: a template's references to inputs, steps, vars and the
// for_each item are checked against what exists where it is.
func TestTemplateCheck(t *testing.T) {
	step := &refs{inputs: []string{"name", "count"}, vars: []string{"greeting"}, needs: []string{"fetch"}, allSteps: []string{"fetch", "later", "me"}}
	item := &refs{inputs: []string{"name"}, item: "file", allSteps: []string{"a"}}
	inVar := &refs{inputs: []string{"name"}, noVars: true, allSteps: []string{"a"}}
	output := &refs{inputs: []string{"name"}, allSteps: []string{"a", "b"}, anySteps: true}
	tests := []struct {
		r    *refs
		src  string
		want []string // "" for none
	}{
		{step, `{{ .inputs.name }} {{ .inputs }} {{ .vars.greeting }} {{ .steps.fetch.result.x.y }} {{ .steps.fetch }}`, nil},
		{step, `{{ .inputs.nme }}`, []string{`.inputs.nme: no input "nme"; did you mean name?`}},
		{step, `{{ .inputs.zzzzzzzz }}`, []string{`.inputs.zzzzzzzz: no input "zzzzzzzz" (want one of name, count)`}},
		{&refs{}, `{{ .inputs.x }}`, []string{`.inputs.x: no input "x" (the workflow has no inputs)`}},
		{step, `{{ .vars.greting }}`, []string{`.vars.greting: no var "greting"; did you mean greeting?`}},
		{step, `{{ .steps.later.result }}`, []string{`.steps.later.result: step "later" is not in this step's needs`}},
		{step, `{{ .steps.fetc.result }}`, []string{`.steps.fetc.result: no step "fetc"; did you mean fetch?`}},
		{step, `{{ .steps.fetch.status }}`, []string{`.steps.fetch.status: a step has only .result, not "status"`}},
		{step, `{{ .steps }}`, []string{`.steps: name a step: .steps.ID.result`}},
		{step, `{{ index .steps "later" }}`, []string{`.steps: name a step`}},
		{step, `{{ json . }}`, []string{`. at the top is the whole scope`}},
		{step, `{{ $ }}`, []string{`$ is the whole scope`}},
		{step, `{{ .item }}`, []string{`.item: .item exists only in a for_each's step`}},
		{step, `{{ .index }}`, []string{`.index: .index exists only in a for_each's step`}},
		{step, `{{ .input.name }}`, []string{`.input.name: unknown field "input"; did you mean inputs?`}},
		{step, `{{ .secrets.token }}`, []string{`.secrets.token: unknown field "secrets"`}},
		// Where dot is not the top, fields are the value's own; $ is still the top.
		{step, `{{ range .inputs.name }}{{ .anything }}{{ $.inputs.nope }}{{ end }}{{ with .vars.greeting }}{{ .x }}{{ else }}{{ .inputs.bad }}{{ end }}`,
			[]string{`.inputs.nope: no input "nope"`, `.inputs.bad: no input "bad"`}},
		{step, `{{ if .inputs.a }}{{ .inputs.b }}{{ else }}{{ .inputs.c }}{{ end }}`,
			[]string{`.inputs.a: no input`, `.inputs.b: no input`, `.inputs.c: no input`}},
		{step, `{{ printf "%s" (.steps.later.result) | default (.vars.x) }}`,
			[]string{`step "later" is not in this step's needs`, `.vars.x: no var "x"`}},
		{step, `{{ $x := .inputs.name }}{{ $x.anything }}`, nil},
		{item, `{{ .file.name }} {{ .index }} {{ $.file }}`, nil},
		{item, `{{ .item }}`, []string{`.item: this for_each names its item .file (as: file)`}},
		{inVar, `{{ .vars.x }}`, []string{`.vars.x: a var cannot read vars`}},
		{inVar, `{{ .steps.a.result }}`, []string{`.steps.a.result: step "a" is not in this step's needs`}},
		{output, `{{ .steps.a.result }} {{ .steps.b.result.x }}`, nil},
		{output, `{{ .steps.c.result }}`, []string{`.steps.c.result: no step "c"`}},
	}
	for _, tt := range tests {
		tmpl, err := parseTemplate("wf.yaml", 3, "f", tt.src)
		if err != nil {
			t.Fatalf("parse(%q): %v", tt.src, err)
		}
		errs := tmpl.check(tt.r)
		if len(errs) != len(tt.want) {
			t.Errorf("check(%q) = %v, want %d problems %q", tt.src, errs, len(tt.want), tt.want)
			continue
		}
		for i, err := range errs {
			if !strings.Contains(err.Error(), tt.want[i]) || !strings.HasPrefix(err.Error(), "wf.yaml:3: f: ") {
				t.Errorf("check(%q)[%d] = %q, want wf.yaml:3: f: … %q", tt.src, i, err, tt.want[i])
			}
		}
	}
}

func TestValueEval(t *testing.T) {
	v, err := NewValue(map[string]any{
		"text":  "hi {{ .inputs.name }}",
		"count": "{{ .inputs.count }}",
		"list":  []any{"{{ .steps.fetch.result.items }}", int64(7), true, nil},
		"obj":   map[string]any{"meta": "{{ .steps.fetch.result.meta }}", "plain": "no template"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.Eval(testScope())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"text":  "hi Ada",
		"count": float64(3),
		"list":  []any{[]any{"a", "b", "c"}, int64(7), true, nil},
		"obj":   map[string]any{"meta": map[string]any{"x": 1.5, "ok": true}, "plain": "no template"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Value.Eval (-want +got):\n%s", diff)
	}
	if _, err := NewValue(map[string]any{"a": []any{"{{ nosuch }}"}}); err == nil || !strings.Contains(err.Error(), `a[0]: function "nosuch" not defined`) {
		t.Errorf("NewValue(bad template) = %v, want a[0]: function \"nosuch\" not defined", err)
	}
	bad, err := newValue("wf.yaml", "steps[0].arguments", func(string) int { return 4 }, map[string]any{"u": "{{ .steps.fetch.result.url }}"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Eval(testScope()); err == nil || err.Error() != `wf.yaml:4: steps[0].arguments.u: .steps.fetch.result.url: no key "url"` {
		t.Errorf("Value.Eval(missing key) = %v", err)
	}
	var nilValue *Value
	if got, err := nilValue.Eval(nil); got != nil || err != nil {
		t.Errorf("nil Value.Eval = %v, %v", got, err)
	}
}

func FuzzTemplate(f *testing.F) {
	for _, s := range []string{
		`{{ .inputs.name }}`, `{{ range .steps.fetch.result.items }}{{ . }}{{ end }}`,
		`{{ printf "%d %s" 1 "a" }}`, `{{ json (fromJson "[1,{\"a\":null}]") }}`,
		`{{ index .steps.fetch.result "items" 0 | len }}`, `{{ if and .inputs.flag (not 0) }}x{{ else }}{{ join "," .inputs.tags }}{{ end }}`,
		`{{ $x := 1 }}{{ range $i, $e := .inputs.tags }}{{ $x = $i }}{{ end }}{{ $x }}`,
		`{{ with .vars }}{{ .greeting }}{{ end }}`, `{{ eq .inputs.count 3 | not }}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := ParseTemplate(src)
		if err != nil {
			return
		}
		s := testScope()
		out, err := tmpl.Render(s)
		if err == nil && len(out) > MaxTemplateOutput {
			t.Fatalf("Render(%q) made %d bytes", src, len(out))
		}
		tmpl.Eval(s)
		tmpl.Truth(s)
		tmpl.check(&refs{inputs: []string{"name"}, allSteps: []string{"fetch"}})
	})
}
