package toolsearch

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strings"
)

// A Doc is one tool as its callers see it.
type Doc struct {
	// Name is what a caller calls the tool by; Server the id of its
	// server ("" if none).
	Name, Server string
	// Title and Description are the tool's.
	Title, Description string
	// InputSchema is the tool's input schema (any JSON value: a map,
	// json.RawMessage, a *jsonschema.Schema): the names and descriptions
	// of its top-level properties are indexed. nil indexes none.
	InputSchema any
}

// A Hit is a Doc that matches a query.
type Hit struct {
	// Index is the Doc's position in the list given to New.
	Index int
	// Doc is the Doc.
	Doc Doc
	// Score is how well it matches: higher is better. Lexical scores have
	// no fixed scale; blended ones (SearchContext) are between 0 and about 1.
	Score float64
}

// Field weights (BM25F): a word of a tool's name says more about what the
// tool does than one of its description, and an argument's name less.
const (
	weightName     = 3.0
	weightTitle    = 2.0
	weightServer   = 1.0
	weightDesc     = 1.0
	weightArgName  = 0.7
	weightArgDesc  = 0.3
	bm25K1         = 1.2
	bm25B          = 0.75
	phraseBonusMax = 0.15
)

// An Index ranks a fixed list of Docs. It is safe for concurrent use once
// built; Embed must not run concurrently with searches.
type Index struct {
	docs     []Doc
	postings map[string][]posting // stem -> docs having it, by doc
	lengths  []float64            // weighted length of each doc
	avg      float64
	names    [][]string // each doc's name stems, for the phrase bonus

	model   string
	vectors [][]float32 // per doc, normalised; nil without embeddings
	embed   Embedder
}

type posting struct {
	doc int
	tf  float64 // weighted term frequency
}

// New indexes docs. The Index keeps the slice: do not change it after.
func New(docs []Doc) *Index {
	ix := &Index{docs: docs, postings: map[string][]posting{}, lengths: make([]float64, len(docs)), names: make([][]string, len(docs))}
	total := 0.0
	for i, d := range docs {
		tf := map[string]float64{}
		add := func(text string, w float64) {
			for _, s := range words(text) {
				tf[s] += w
				ix.lengths[i] += w
			}
		}
		ix.names[i] = words(d.Name)
		add(d.Name, weightName)
		add(d.Title, weightTitle)
		add(d.Server, weightServer)
		add(d.Description, weightDesc)
		for _, a := range arguments(d.InputSchema) {
			add(a.name, weightArgName)
			add(a.description, weightArgDesc)
		}
		total += ix.lengths[i]
		for s, f := range tf {
			ix.postings[s] = append(ix.postings[s], posting{i, f})
		}
	}
	ix.avg = max(total/float64(max(len(docs), 1)), 1)
	return ix
}

// Len is the number of Docs.
func (ix *Index) Len() int { return len(ix.docs) }

// Search is SearchFunc without a filter.
func (ix *Index) Search(query string, limit int) []Hit {
	return ix.SearchFunc(query, limit, nil)
}

// SearchFunc ranks the Docs against query, best first, and returns at
// most limit of them (limit <= 0: every match) among those keep accepts,
// given their index in the list given to New (nil: all), leaving out
// those that match no word of the query. Ties keep the order of the Docs.
// It is lexical only; see SearchContext.
func (ix *Index) SearchFunc(query string, limit int, keep func(i int) bool) []Hit {
	scores := ix.lexical(query)
	return ix.top(scores, limit, keep)
}

// lexical scores each doc against query: BM25 over the weighted term
// frequencies, each query word weighted (expand), plus a bonus for a
// name whose words the query holds in order.
func (ix *Index) lexical(query string) map[int]float64 {
	q := expand(query)
	n := float64(len(ix.docs))
	scores := map[int]float64{}
	for term, qw := range q {
		ps := ix.postings[term]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			norm := 1 - bm25B + bm25B*ix.lengths[p.doc]/ix.avg
			scores[p.doc] += qw * idf * p.tf * (bm25K1 + 1) / (p.tf + bm25K1*norm)
		}
	}
	if len(scores) == 0 {
		return scores
	}
	// Coverage: a tool whose name the query names in full ("create issue"
	// for create_issue) gets a bonus, proportional to the best score so
	// that it reorders close matches only.
	best := 0.0
	for _, s := range scores {
		best = max(best, s)
	}
	for doc := range scores {
		name := ix.names[doc]
		if len(name) == 0 {
			continue
		}
		hit := 0
		for _, w := range name {
			if q[w] == 1 {
				hit++
			}
		}
		scores[doc] += best * phraseBonusMax * float64(hit) / float64(len(name))
	}
	return scores
}

// top is the best limit docs of scores that keep accepts.
func (ix *Index) top(scores map[int]float64, limit int, keep func(i int) bool) []Hit {
	hits := make([]Hit, 0, len(scores))
	for doc, s := range scores {
		if s > 0 && (keep == nil || keep(doc)) {
			hits = append(hits, Hit{Index: doc, Doc: ix.docs[doc], Score: s})
		}
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Index, b.Index)
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

type argument struct{ name, description string }

// arguments are the top-level properties of an input schema, sorted by
// name.
func arguments(schema any) []argument {
	if schema == nil {
		return nil
	}
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	var raw []byte
	switch v := schema.(type) {
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		raw = b
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	out := make([]argument, 0, len(s.Properties))
	for name, p := range s.Properties {
		out = append(out, argument{name, p.Description})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// Digest identifies a Doc's definition: its name, title, description and
// input schema (as JSON). An embedding computed for a digest stays right
// as long as the tool is defined the same.
func Digest(d Doc) string {
	schema, _ := json.Marshal(d.InputSchema)
	h := sha256.New()
	for _, s := range []string{d.Name, d.Title, d.Description, string(schema)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// embedText is what an embedding of d is computed from.
func embedText(d Doc) string {
	var b strings.Builder
	b.WriteString(strings.Join(split(d.Name), " "))
	if d.Title != "" {
		b.WriteString(". " + d.Title)
	}
	if d.Description != "" {
		b.WriteString(". " + d.Description)
	}
	if args := arguments(d.InputSchema); len(args) > 0 {
		b.WriteString(" Arguments:")
		for _, a := range args {
			b.WriteString(" " + a.name)
		}
	}
	return b.String()
}
