package toolscan_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboardmcp/switchboard/toolscan"
)

// tool is a definition as it is stored in the corpus: the wire form.
type tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  *struct {
		Title string `json:"title"`
	} `json:"annotations"`
}

func (t tool) def() toolscan.Definition {
	d := toolscan.Definition{Name: t.Name, Title: t.Title, Description: t.Description}
	if len(t.InputSchema) > 0 {
		d.InputSchema = t.InputSchema
	}
	if len(t.OutputSchema) > 0 {
		d.OutputSchema = t.OutputSchema
	}
	if t.Annotations != nil {
		d.AnnotationsTitle = t.Annotations.Title
	}
	return d
}

// TestCorpus is the scanner's proof (docs/security.md): at least 90 % of
// the poisoned definitions found, at most 2 % of the benign ones flagged.
// It logs both figures and every miss and false positive.
func TestCorpus(t *testing.T) {
	poisoned := readPoisoned(t)
	if len(poisoned) < 50 {
		t.Fatalf("%d poisoned definitions, want at least 50", len(poisoned))
	}
	found := 0
	for _, p := range poisoned {
		if fs := toolscan.Scan(p.Tool.def()); len(fs) > 0 {
			found++
		} else {
			t.Logf("miss: %s (%s)", p.Tool.Name, p.Source)
		}
	}

	files, err := filepath.Glob("testdata/benign/*.json")
	if err != nil {
		t.Fatal(err)
	}
	benign, real, flagged := 0, 0, 0
	for _, f := range files {
		var srv struct {
			Server string `json:"server"`
			Origin string `json:"origin"`
			Tools  []tool `json:"tools"`
		}
		readJSON(t, f, &srv)
		for _, tl := range srv.Tools {
			benign++
			if srv.Origin == "real" {
				real++
			}
			if fs := toolscan.Scan(tl.def()); len(fs) > 0 {
				flagged++
				for _, f := range fs {
					t.Logf("false positive: %s/%s: %s", srv.Server, tl.Name, f)
				}
			}
		}
	}
	if benign < 200 {
		t.Fatalf("%d benign definitions, want at least 200", benign)
	}
	detect := 100 * float64(found) / float64(len(poisoned))
	fp := 100 * float64(flagged) / float64(benign)
	t.Logf("detection: %d of %d poisoned (%.1f %%); false positives: %d of %d benign (%.1f %%; %d from real servers)",
		found, len(poisoned), detect, flagged, benign, fp, real)
	if detect < 90 {
		t.Errorf("detection %.1f %%, want at least 90 %%", detect)
	}
	if fp > 2 {
		t.Errorf("false positives %.1f %%, want at most 2 %%", fp)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

type poisonedTool struct {
	Source string `json:"source"`
	Tool   tool   `json:"tool"`
}

// readPoisoned reads every file of testdata/poisoned: poisoned.json, what
// the rules were written against, and heldout.json, written after them.
func readPoisoned(t *testing.T) []poisonedTool {
	t.Helper()
	files, err := filepath.Glob("testdata/poisoned/*.json")
	if err != nil {
		t.Fatal(err)
	}
	var all []poisonedTool
	for _, f := range files {
		var ps []poisonedTool
		readJSON(t, f, &ps)
		all = append(all, ps...)
	}
	return all
}

// BenchmarkScan scans the benign corpus: the cost per tool the host pays
// when a server lists its tools (docs/performance.md).
func BenchmarkScan(b *testing.B) {
	files, _ := filepath.Glob("testdata/benign/*.json")
	var defs []toolscan.Definition
	for _, f := range files {
		var srv struct {
			Tools []tool `json:"tools"`
		}
		body, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if err := json.Unmarshal(body, &srv); err != nil {
			b.Fatal(err)
		}
		for _, t := range srv.Tools {
			d := t.def()
			// as the host has them: decoded schemas.
			var in any
			json.Unmarshal(t.InputSchema, &in)
			d.InputSchema = in
			defs = append(defs, d)
		}
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		toolscan.Scan(defs[i%len(defs)])
	}
}
