package toolsearch

import (
	"context"
	"fmt"
	"math"
)

// An Embedder turns texts into vectors, one per text, in order: an
// embeddings endpoint (package llm has Ollama's and OpenAI's).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// A Cache keeps the vectors of tool definitions, by model and [Digest], so
// that a tool is embedded once (the state store keeps them across
// restarts).
type Cache interface {
	// Vectors are the vectors it has of digests, by digest.
	Vectors(ctx context.Context, model string, digests []string) (map[string][]float32, error)
	// SaveVectors keeps vectors, by digest.
	SaveVectors(ctx context.Context, model string, vectors map[string][]float32) error
}

// EmbedWeight is how much the embedding's similarity counts in a blended
// score, against the lexical score's 1 - EmbedWeight.
const EmbedWeight = 0.4

// maxBatch bounds the texts of one Embed call: providers cap a request's
// inputs (OpenAI at 2,048) and its size.
const maxBatch = 256

// Embed computes a vector for every Doc, asking cache first (nil: none)
// and e for the rest in batches, and saves those to cache. After it,
// SearchContext blends embeddings in. model names the vectors in the
// cache. On an error the Index stays lexical.
func (ix *Index) Embed(ctx context.Context, e Embedder, model string, cache Cache) error {
	digests := make([]string, len(ix.docs))
	for i, d := range ix.docs {
		digests[i] = Digest(d)
	}
	have := map[string][]float32{}
	if cache != nil {
		got, err := cache.Vectors(ctx, model, digests)
		if err != nil {
			return fmt.Errorf("toolsearch: reading cached embeddings: %w", err)
		}
		have = got
	}
	var missing []int
	for i, dg := range digests {
		if _, ok := have[dg]; !ok {
			missing = append(missing, i)
		}
	}
	fresh := map[string][]float32{}
	for start := 0; start < len(missing); start += maxBatch {
		batch := missing[start:min(start+maxBatch, len(missing))]
		texts := make([]string, len(batch))
		for j, i := range batch {
			texts[j] = embedText(ix.docs[i])
		}
		vecs, err := e.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("toolsearch: embedding %d tools: %w", len(texts), err)
		}
		if len(vecs) != len(texts) {
			return fmt.Errorf("toolsearch: the embedder answered %d vectors for %d texts", len(vecs), len(texts))
		}
		for j, i := range batch {
			fresh[digests[i]] = vecs[j]
			have[digests[i]] = vecs[j]
		}
	}
	if cache != nil && len(fresh) > 0 {
		if err := cache.SaveVectors(ctx, model, fresh); err != nil {
			return fmt.Errorf("toolsearch: saving embeddings: %w", err)
		}
	}
	vectors := make([][]float32, len(ix.docs))
	for i, dg := range digests {
		vectors[i] = normalise(have[dg])
	}
	ix.vectors, ix.embed, ix.model = vectors, e, model
	return nil
}

// Embedded reports whether Embed has given the Index vectors.
func (ix *Index) Embedded() bool { return ix.vectors != nil }

// SearchContext is SearchFunc with embeddings blended in, when Embed has
// run: the query is embedded, and each Doc scores (1 - EmbedWeight) times
// its lexical score over the best one plus EmbedWeight times its cosine
// similarity to the query. A Doc matching no word may then be found by
// meaning. When the query cannot be embedded (ctx, the provider), it
// answers the lexical ranking and the error.
func (ix *Index) SearchContext(ctx context.Context, query string, limit int, keep func(i int) bool) ([]Hit, error) {
	lex := ix.lexical(query)
	if ix.vectors == nil {
		return ix.top(lex, limit, keep), nil
	}
	vecs, err := ix.embed.Embed(ctx, []string{query})
	if err != nil || len(vecs) != 1 {
		if err == nil {
			err = fmt.Errorf("the embedder answered %d vectors for 1 text", len(vecs))
		}
		return ix.top(lex, limit, keep), fmt.Errorf("toolsearch: embedding the query: %w", err)
	}
	q := normalise(vecs[0])
	best := 0.0
	for _, s := range lex {
		best = max(best, s)
	}
	scores := make(map[int]float64, len(ix.docs))
	for i, v := range ix.vectors {
		s := EmbedWeight * float64(dot(q, v))
		if best > 0 {
			s += (1 - EmbedWeight) * lex[i] / best
		}
		scores[i] = s
	}
	return ix.top(scores, limit, keep), nil
}

func normalise(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return v
	}
	n = math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

// dot is the dot product of two vectors; 0 when their lengths differ (a
// model changed under a cache).
func dot(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
