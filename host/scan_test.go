package host_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/config"
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
