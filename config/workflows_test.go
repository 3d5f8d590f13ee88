package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWorkflowFiles: the top-level workflows key lists workflow files,
// relative to the config file that names them; every file's are kept, in
// order, each once.
func TestWorkflowFiles(t *testing.T) {
	root := t.TempDir()
	userDir := filepath.Join(root, "user")
	workDir := filepath.Join(root, "work")
	writeFile(t, userDir, "config.toml", `workflows = ["wf/a.yaml", "/abs/b.yaml"]`)
	writeFile(t, workDir, "switchboard.toml", `workflows = ["c.yaml", "../user/wf/a.yaml"]`)
	c, err := Load(&LoadOptions{Dir: workDir, UserConfigDir: userDir, Getenv: getenv(nil)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(userDir, "wf/a.yaml"), "/abs/b.yaml", filepath.Join(workDir, "c.yaml")}
	if diff := cmp.Diff(want, c.Workflows); diff != "" {
		t.Errorf("Workflows (-want +got):\n%s", diff)
	}

	file := writeFile(t, root, "bad.toml", "workflows = [\"\", \"{{env.X}}.yaml\", 3]\n\nworkflow = []\n")
	_, err = Load(&LoadOptions{File: file, Dir: root, UserConfigDir: root, Getenv: getenv(nil)})
	var got []string
	for _, p := range Problems(err) {
		got = append(got, strings.TrimPrefix(p.Error(), file))
	}
	wantProblems := []string{
		`:1: workflows[2]: must be a string, not an integer`,
		`:3: workflow: unknown key "workflow"; did you mean workflows?`,
	}
	if diff := cmp.Diff(wantProblems, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	file = writeFile(t, root, "bad2.toml", "workflows = [\"\", \"{{env.X}}.yaml\"]\n")
	_, err = Load(&LoadOptions{File: file, Dir: root, UserConfigDir: root, Getenv: getenv(nil)})
	got = nil
	for _, p := range Problems(err) {
		got = append(got, strings.TrimPrefix(p.Error(), file))
	}
	if len(got) != 2 || got[0] != ":1: workflows[0]: empty path" || !strings.HasPrefix(got[1], ":1: workflows[1]: ") {
		t.Errorf("problems = %q", got)
	}
}
