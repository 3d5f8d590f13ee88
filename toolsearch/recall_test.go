package toolsearch_test

import (
	"fmt"
	"testing"

	"github.com/switchboardmcp/switchboard/internal/testkit/toolfixture"
	"github.com/switchboardmcp/switchboard/toolsearch"
)

// fixtureDocs are the fixture's 500 tools, named as the host names them
// by default (mcp_{server}_{tool}), with their labels ("server/tool").
func fixtureDocs() (docs []toolsearch.Doc, labels []string) {
	for _, s := range toolfixture.Servers() {
		for _, t := range s.Tools {
			docs = append(docs, toolsearch.Doc{Name: "mcp_" + s.ID + "_" + t.Name, Server: s.ID, Title: t.Title,
				Description: t.Description, InputSchema: t.InputSchema})
			labels = append(labels, s.ID+"/"+t.Name)
		}
	}
	return docs, labels
}

// recallAt is the share of the fixture's labelled queries whose tool is
// among the first k hits.
func recallAt(t testing.TB, ix *toolsearch.Index, labels []string, k int, verbose bool) float64 {
	qs := toolfixture.Queries()
	found := 0
	for _, q := range qs {
		hits := ix.Search(q.Query, k)
		ok := false
		for _, h := range hits {
			if labels[h.Index] == q.Tool {
				ok = true
			}
		}
		if ok {
			found++
		} else if verbose {
			var got []string
			for _, h := range hits {
				got = append(got, labels[h.Index])
			}
			t.Logf("miss: %q want %s, got %v", q.Query, q.Tool, got)
		}
	}
	return float64(found) / float64(len(qs))
}

// TestRecall: on the fixture's 500 tools, the labelled queries find their
// tool among the first five with lexical ranking alone, at least 9 times
// in 10 (the floor; the figure is in docs/performance.md).
func TestRecall(t *testing.T) {
	docs, labels := fixtureDocs()
	if len(docs) < 500 {
		t.Fatalf("the fixture has %d tools, want at least 500", len(docs))
	}
	if n := len(toolfixture.Queries()); n < 50 {
		t.Fatalf("the fixture has %d labelled queries, want at least 50", n)
	}
	ix := toolsearch.New(docs)
	r5 := recallAt(t, ix, labels, 5, true)
	r1 := recallAt(t, ix, labels, 1, false)
	t.Logf("recall@1 %.3f, recall@5 %.3f over %d queries, %d tools", r1, r5, len(toolfixture.Queries()), len(docs))
	if r5 < 0.9 {
		t.Errorf("recall@5 = %.3f, want at least 0.9", r5)
	}
}

func BenchmarkSearch(b *testing.B) {
	docs, _ := fixtureDocs()
	// 2,000 tools: the fixture four times over, as four gateways' worth.
	var all []toolsearch.Doc
	for i := range 4 {
		for _, d := range docs {
			d.Name = fmt.Sprintf("%s_%d", d.Name, i)
			all = append(all, d)
		}
	}
	ix := toolsearch.New(all)
	qs := toolfixture.Queries()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		ix.Search(qs[i%len(qs)].Query, 5)
	}
}
