package host_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
)

// TestScanActions: a server that lists a poisoned tool (testserver
// -poisoned), under each scan action. warn offers it and reports the
// findings; hold and drop leave it out with their own reasons; the other
// tools of every server are offered; findings are in each status and
// logged bounded, hidden characters escaped.
func TestScanActions(t *testing.T) {
	w := fixture(t, "w", "-poisoned")
	hd := fixture(t, "hd", "-poisoned")
	hd.Scan = config.ScanHold
	d := fixture(t, "d", "-poisoned")
	d.Scan = config.ScanDrop
	h, logs := start(t, []config.Server{w, hd, d}, nil)

	if !hasTool(h, "mcp_w_fact_of_the_day") {
		t.Errorf("warn: fact_of_the_day not offered: %v", toolNames(h))
	}
	for _, name := range []string{"mcp_hd_fact_of_the_day", "mcp_d_fact_of_the_day"} {
		if hasTool(h, name) {
			t.Errorf("%s offered, want it held or dropped", name)
		}
	}
	for _, name := range []string{"mcp_w_echo", "mcp_hd_echo", "mcp_d_echo"} {
		if !hasTool(h, name) {
			t.Errorf("%s not offered: a clean tool of a server with a poisoned one", name)
		}
	}

	wantRules := []string{"model-instruction", "conceal-from-user", "sensitive-path", "tool-chaining", "exfiltration", "hidden-characters"}
	for _, st := range h.Servers() {
		action := map[string]string{"w": "warn", "hd": "hold", "d": "drop"}[st.ID]
		var rules []string
		for _, f := range st.Findings {
			if f.Tool != "fact_of_the_day" || f.Action != action || f.Field != "description" {
				t.Errorf("%s: finding %+v, want tool fact_of_the_day, field description, action %s", st.ID, f, action)
			}
			if len([]rune(f.Text)) > 81 || strings.ContainsFunc(f.Text, func(r rune) bool { return r >= 0xE0000 }) {
				t.Errorf("%s: finding text %q unbounded or hiding characters", st.ID, f.Text)
			}
			rules = append(rules, f.Rule)
		}
		for _, r := range wantRules {
			if !slices.Contains(rules, r) {
				t.Errorf("%s: findings %v lack rule %s", st.ID, rules, r)
			}
		}
		switch st.ID {
		case "w":
			if len(st.Skipped) != 0 {
				t.Errorf("w: skipped %+v, want none", st.Skipped)
			}
		case "hd":
			if !containsSkip(st.Skipped, "fact_of_the_day", "held until approved") {
				t.Errorf("hd: skipped %+v, want fact_of_the_day held", st.Skipped)
			}
		case "d":
			if !containsSkip(st.Skipped, "fact_of_the_day", "dropped") {
				t.Errorf("d: skipped %+v, want fact_of_the_day dropped", st.Skipped)
			}
		}
	}
	log := logs.String()
	for _, want := range []string{
		`msg="tool definition shows signs of poisoning" server=w tool=fact_of_the_day rule=model-instruction field=description`,
		`server=hd tool=fact_of_the_day reason="held until approved`,
		`server=d tool=fact_of_the_day reason="dropped`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("logs lack %q:\n%.4000s", want, log)
		}
	}
	if strings.ContainsFunc(log, func(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }) {
		t.Error("logs hold tag characters")
	}
	if strings.Contains(log, "Get a random fact of the day.") {
		t.Error("logs quote the whole description")
	}
}

// TestScanDeclared: prompts, resources and resource templates are scanned
// as the server listed them (testserver -poisoned-declared), before
// cleaning: the tag characters in the prompt's argument are a finding.
// warn lists them and reports the findings, each naming its kind; hold
// and drop leave them out with their reason among the warnings and refuse
// prompts/get and resources/read of them (a URI a held template matches
// too); the clean greet, test://static/1 and test://item/{id} of every
// server are offered.
func TestScanDeclared(t *testing.T) {
	w := fixture(t, "w", "-poisoned-declared")
	hd := fixture(t, "hd", "-poisoned-declared")
	hd.Scan = config.ScanHold
	d := fixture(t, "d", "-poisoned-declared")
	d.Scan = config.ScanDrop
	h, logs := start(t, []config.Server{w, hd, d}, nil)
	ctx := context.Background()

	ps, err := h.Prompts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := h.Resources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := h.ResourceTemplates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, p := range ps {
		listed[p.Server+" prompt "+p.Prompt.Name] = true
	}
	for _, r := range rs {
		listed[r.Server+" resource "+r.Resource.URI] = true
	}
	for _, x := range ts {
		listed[x.Server+" template "+x.Template.URITemplate] = true
	}
	for _, id := range []string{"w", "hd", "d"} {
		for _, clean := range []string{"prompt greet", "resource test://static/1", "template test://item/{id}"} {
			if !listed[id+" "+clean] {
				t.Errorf("%s: %s not listed: %v", id, clean, listed)
			}
		}
		for _, poisoned := range []string{"prompt daily_quote", "resource test://poisoned/notes", "template test://poisoned/{id}"} {
			if want := id == "w"; listed[id+" "+poisoned] != want {
				t.Errorf("%s: %s listed = %v, want %v", id, poisoned, !want, want)
			}
		}
	}

	want := map[string][]string{ // kind and name: rule in field
		"prompt daily_quote": {"model-instruction description", "sensitive-path description", "conceal-from-user description",
			"hidden-characters arguments[0].description", "model-instruction arguments[0].description"},
		"resource test://poisoned/notes": {"model-instruction description", "exfiltration description"},
		"template test://poisoned/{id}":  {"model-instruction description", "sensitive-path description"},
	}
	for _, st := range h.Servers() {
		action := map[string]string{"w": "warn", "hd": "hold", "d": "drop"}[st.ID]
		got := map[string][]string{}
		for _, f := range st.Findings {
			if f.Action != action || strings.ContainsFunc(f.Text, func(r rune) bool { return r >= 0xE0000 }) {
				t.Errorf("%s: finding %+v, want action %s and no tag characters", st.ID, f, action)
			}
			got[f.Kind+" "+f.Tool] = append(got[f.Kind+" "+f.Tool], f.Rule+" "+f.Field)
		}
		for what, fs := range want {
			for _, f := range fs {
				if !slices.Contains(got[what], f) {
					t.Errorf("%s: findings of %s = %v, lack %s", st.ID, what, got[what], f)
				}
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: findings in %d definitions, want %d: %v", st.ID, len(got), len(want), got)
		}
		warnings := strings.Join(st.Warnings, "\n")
		switch st.ID {
		case "w":
			if strings.Contains(warnings, "not offered") {
				t.Errorf("w: warnings %q, want nothing left out", warnings)
			}
		default:
			reason := map[string]string{"hd": "held (scan = \"hold\"", "d": "dropped (scan = \"drop\")"}[st.ID]
			for _, want := range []string{`prompt "daily_quote" not offered: ` + reason, `resource "test://poisoned/notes" not offered: ` + reason,
				`resource template "test://poisoned/{id}" not offered: ` + reason} {
				if !strings.Contains(warnings, want) {
					t.Errorf("%s: warnings lack %q:\n%s", st.ID, want, warnings)
				}
			}
		}
	}

	// Asked for by name or URI: refused under hold and drop, answered
	// under warn; the clean ones answered everywhere.
	for _, id := range []string{"w", "hd", "d"} {
		_, perr := h.GetPrompt(ctx, id, "daily_quote", nil, nil)
		_, rerr := h.ReadResource(ctx, id, "test://poisoned/notes", nil)
		_, terr := h.ReadResource(ctx, id, "test://poisoned/7", nil)
		for what, err := range map[string]error{"prompts/get daily_quote": perr, "resources/read test://poisoned/notes": rerr, "resources/read test://poisoned/7": terr} {
			switch {
			case id == "w" && err != nil:
				t.Errorf("w: %s: %v, want an answer under warn", what, err)
			case id != "w" && (err == nil || !strings.Contains(err.Error(), "not offered:") || !strings.Contains(err.Error(), "signs of poisoning")):
				t.Errorf("%s: %s: %v, want it refused as not offered", id, what, err)
			}
		}
		if _, err := h.GetPrompt(ctx, id, "greet", map[string]string{"name": "x"}, nil); err != nil {
			t.Errorf("%s: prompts/get greet: %v", id, err)
		}
		if _, err := h.ReadResource(ctx, id, "test://item/3", nil); err != nil {
			t.Errorf("%s: resources/read test://item/3: %v", id, err)
		}
	}

	// Listed again: the same findings, logged once.
	if _, err := h.Prompts(ctx); err != nil {
		t.Fatal(err)
	}
	log := logs.String()
	if n := strings.Count(log, `msg="prompt definition shows signs of poisoning" server=w prompt=daily_quote rule=model-instruction field=description`); n != 1 {
		t.Errorf("w's prompt finding logged %d times, want once:\n%s", n, linesWith(log, "definition shows signs of poisoning"))
	}
	for _, want := range []string{`msg="resource definition shows signs of poisoning" server=d resource=test://poisoned/notes`,
		`msg="template definition shows signs of poisoning" server=hd template=test://poisoned/{id}`} {
		if !strings.Contains(log, want) {
			t.Errorf("logs lack %q:\n%s", want, linesWith(log, "definition shows signs of poisoning"))
		}
	}
	if strings.ContainsFunc(log, func(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }) {
		t.Error("logs hold tag characters")
	}
}

// linesWith returns the lines of s that hold sub.
func linesWith(s, sub string) string {
	var out []string
	for l := range strings.Lines(s) {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// specCache is a tool cache that remembers the spec a list was saved
// under, so that a test can rewrite the list.
type specCache struct {
	host.ToolCache
	mu   sync.Mutex
	spec string
}

func (c *specCache) SaveTools(ctx context.Context, server, spec string, tools json.RawMessage, ttl time.Duration) error {
	c.mu.Lock()
	c.spec = spec
	c.mu.Unlock()
	return c.ToolCache.SaveTools(ctx, server, spec, tools, ttl)
}

// TestLazyCachedFindings: a lazy server's cached list keeps what the
// scanner found in it, so that a start offering the list does not scan it
// again; what that start shows (findings, the poisoned tool held) is what
// a start that scans the list shows: one given the list as saved before
// findings were kept, a bare array.
func TestLazyCachedFindings(t *testing.T) {
	cache := &specCache{ToolCache: openStore(t)}
	s := fixture(t, "lz", "-poisoned")
	s.Lazy, s.Scan = true, config.ScanHold
	h1, _ := start(t, []config.Server{s}, &host.Options{ToolCache: cache})
	h1.Close()

	status := func() host.ServerStatus {
		t.Helper()
		h, _ := start(t, []config.Server{s}, &host.Options{ToolCache: cache})
		defer h.Close()
		st := h.Servers()[0]
		if st.State != host.StateLazy {
			t.Fatalf("state = %s, want lazy-idle (offering the cached list)", st.State)
		}
		return st
	}
	kept := status()
	if len(kept.Findings) == 0 || !containsSkip(kept.Skipped, "fact_of_the_day", "held until approved") {
		t.Fatalf("from the cache: findings %+v, skipped %+v; want fact_of_the_day's findings, and it held", kept.Findings, kept.Skipped)
	}

	ctx := context.Background()
	raw, _, _, err := cache.LoadTools(ctx, "lz", cache.spec)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Tools    json.RawMessage            `json:"tools"`
		Findings map[string]json.RawMessage `json:"findings"`
	}
	if err := json.Unmarshal(raw, &list); err != nil || len(list.Tools) == 0 || len(list.Findings) == 0 {
		t.Fatalf("the cached list %.300s (%v): want its tools and findings", raw, err)
	}
	if err := cache.ToolCache.SaveTools(ctx, "lz", cache.spec, list.Tools, 0); err != nil {
		t.Fatal(err)
	}
	scanned := status()
	if diff := cmp.Diff(scanned.Findings, kept.Findings); diff != "" {
		t.Errorf("findings kept with the list differ from a scan of it (-scanned +kept):\n%s", diff)
	}
	if diff := cmp.Diff(scanned.Skipped, kept.Skipped); diff != "" {
		t.Errorf("skipped tools differ (-scanned +kept):\n%s", diff)
	}
}
