package toolsearch_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardmcp/switchboard/toolsearch"
)

// conceptEmbedder is a stand-in for an embedding model (the edge a test
// cannot run): a text's vector counts the words of a few concepts, so
// that "reimburse" and "payment" are near although no word is shared.
type conceptEmbedder struct {
	mu    sync.Mutex
	calls int
}

var concepts = [][]string{{"reimburse", "payment", "charge", "refund", "invoice"}, {"file", "disk", "directory"}, {"message", "chat", "channel"}}

func (e *conceptEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.calls++
	e.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, len(concepts))
		for c, words := range concepts {
			for _, w := range words {
				v[c] += float32(strings.Count(strings.ToLower(t), w))
			}
		}
		out[i] = v
	}
	return out, nil
}

type mapCache struct{ m map[string][]float32 }

func (c *mapCache) Vectors(_ context.Context, model string, digests []string) (map[string][]float32, error) {
	out := map[string][]float32{}
	for _, d := range digests {
		if v, ok := c.m[model+d]; ok {
			out[d] = v
		}
	}
	return out, nil
}

func (c *mapCache) SaveVectors(_ context.Context, model string, vs map[string][]float32) error {
	for d, v := range vs {
		c.m[model+d] = v
	}
	return nil
}

// TestEmbeddings: with embeddings, a query sharing no word with a tool
// finds it by meaning; the vectors are cached by definition, so a second
// index over the same tools asks the embedder for the query alone.
func TestEmbeddings(t *testing.T) {
	docs := []toolsearch.Doc{
		{Name: "create_refund", Description: "Refund a payment"},
		{Name: "read_file", Description: "Read a file from disk"},
		{Name: "post_message", Description: "Post a chat message to a channel"},
	}
	if hits := toolsearch.New(docs).Search("reimburse the customer", 3); len(hits) != 0 {
		t.Fatalf("lexical search found %v for a query sharing no word", hits)
	}
	e, cache := &conceptEmbedder{}, &mapCache{m: map[string][]float32{}}
	ix := toolsearch.New(docs)
	if err := ix.Embed(context.Background(), e, "concepts", cache); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.SearchContext(context.Background(), "reimburse the customer", 1, nil)
	if err != nil || len(hits) != 1 || hits[0].Doc.Name != "create_refund" {
		t.Errorf("SearchContext(reimburse the customer) = %v, %v; want create_refund", hits, err)
	}
	if len(cache.m) != 3 {
		t.Errorf("the cache holds %d vectors, want 3", len(cache.m))
	}
	before := e.calls
	if err := toolsearch.New(docs).Embed(context.Background(), e, "concepts", cache); err != nil {
		t.Fatal(err)
	}
	if e.calls != before {
		t.Errorf("embedding the same tools again asked the embedder %d more times, want 0 (cached)", e.calls-before)
	}
}
