package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLimits(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "l.toml", `[limits]
max_description_bytes = 16384
max_name_bytes = 128
max_workflow_depth = 3
max_for_each_items = 50000
keep_runs = 500
`)
	c, err := Load(&LoadOptions{File: file, Dir: dir, Getenv: getenv(nil)})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := Limits{MaxDescriptionBytes: 16384, MaxNameBytes: 128, MaxWorkflowDepth: 3, MaxForEachItems: 50000, KeepRuns: 500,
		Source: Position{File: file, Line: 1, Field: "limits"}}
	if diff := cmp.Diff(want, c.Limits); diff != "" {
		t.Errorf("Limits (-want +got):\n%s", diff)
	}
}

// A later file overrides [limits] key by key.
func TestLimitsLayering(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "user/switchboard/config.toml", `[limits]
max_description_bytes = 1024
max_name_bytes = 100
`)
	work := writeFile(t, root, "work/switchboard.toml", `
[limits]
max_name_bytes = 512
`)
	c, err := Load(&LoadOptions{Dir: root + "/work", UserConfigDir: root + "/user/switchboard", Getenv: getenv(nil)})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := Limits{MaxDescriptionBytes: 1024, MaxNameBytes: 512, Source: Position{File: work, Line: 2, Field: "limits"}}
	if diff := cmp.Diff(want, c.Limits); diff != "" {
		t.Errorf("Limits (-want +got):\n%s", diff)
	}
}

func TestLimitsProblems(t *testing.T) {
	for _, tt := range []struct {
		name, toml string
		want       []string
	}{
		{"ranges", `[limits]
max_description_bytes = 10
max_name_bytes = 100000
`, []string{
			`l.toml:2: limits.max_description_bytes: must be between 256 and 4194304, not 10`,
			`l.toml:3: limits.max_name_bytes: must be between 64 and 65536, not 100000`,
		}},
		{"workflow ranges", `[limits]
max_workflow_depth = 0
max_for_each_items = 100001
keep_runs = 0
`, []string{
			`l.toml:2: limits.max_workflow_depth: must be between 1 and 64, not 0`,
			`l.toml:3: limits.max_for_each_items: must be between 1 and 100000, not 100001`,
			`l.toml:4: limits.keep_runs: must be between 1 and 10000000, not 0`,
		}},
		{"workflow types", `[limits]
max_workflow_depth = "8"
max_for_each_items = -5
`, []string{
			`l.toml:2: limits.max_workflow_depth: must be a whole number, not a string`,
			`l.toml:3: limits.max_for_each_items: must be between 1 and 100000, not -5`,
		}},
		{"negative", `[limits]
max_description_bytes = -1
`, []string{`l.toml:2: limits.max_description_bytes: must be between 256 and 4194304, not -1`}},
		{"types and unknown keys", `[limits]
max_description_bytes = "8k"
max_name_bytes = 256.0
max_descripton_bytes = 1
`, []string{
			`l.toml:2: limits.max_description_bytes: must be a whole number of bytes, not a string`,
			`l.toml:3: limits.max_name_bytes: must be a whole number of bytes, not a float`,
			`l.toml:4: limits.max_descripton_bytes: unknown key "max_descripton_bytes"; did you mean max_description_bytes?`,
		}},
		{"not a table", `limits = 5
`, []string{`l.toml:1: limits: must be a table, not an integer`}},
		{"misspelt table", `[limit]
max_name_bytes = 100
`, []string{`l.toml:1: limit: unknown key "limit"; did you mean limits?`}},
		{"at the bounds", `[limits]
max_description_bytes = 4194304
max_name_bytes = 64
max_workflow_depth = 64
max_for_each_items = 1
`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := writeFile(t, dir, "l.toml", tt.toml)
			_, err := Load(&LoadOptions{File: file, Dir: dir, Getenv: getenv(nil)})
			if diff := cmp.Diff(tt.want, problemStrings(t, err, dir)); diff != "" {
				t.Errorf("Load(%q) problems (-want +got):\n%s", tt.toml, diff)
			}
		})
	}
}
