package agent

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"unicode"

	"github.com/switchboardmcp/switchboard/host"
)

// SelectOptions says what Select does.
type SelectOptions struct {
	// Servers keeps only the servers that match the prompt (mcp_discovery).
	Servers bool
	// MaxTools keeps at most this many tools, the best matches; 0: no cap.
	MaxTools int
}

// BM25 parameters: the usual ones (Robertson & Zaragoza).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
	// serverThreshold keeps servers scoring at least this fraction of the
	// best server's score: a relative threshold, because BM25 scores have
	// no fixed scale.
	serverThreshold = 0.5
)

// Select chooses the tools the model sees for a prompt. It is deterministic:
// the same prompt and tools give the same answer.
//
// The prompt and the tools are split into terms: lower-cased runs of letters
// and digits, camelCase, snake_case and kebab-case split apart, terms of one
// character and a few English stop words dropped.
//
// With o.Servers, each server is one document — its id, its description
// (descriptions, by server id) and its tools' names and descriptions — scored
// against the prompt with BM25 (k1 1.2, b 0.75). The servers scoring at
// least half the best score are kept; when no server scores above zero,
// every server is kept.
//
// With o.MaxTools, each remaining tool is a document — its server's id, its
// name and its description — scored the same way; the best MaxTools are kept,
// ties going to the tool declared first.
//
// The tools come back in their original order.
func Select(prompt string, tools []host.Tool, descriptions map[string]string, o *SelectOptions) []host.Tool {
	if o == nil {
		o = &SelectOptions{}
	}
	query := uniq(terms(prompt))
	keep := tools
	if o.Servers {
		var ids []string
		docs := map[string][]string{}
		for _, t := range tools {
			if _, ok := docs[t.Server]; !ok {
				ids = append(ids, t.Server)
				docs[t.Server] = append(terms(t.Server), terms(descriptions[t.Server])...)
			}
			docs[t.Server] = append(docs[t.Server], toolTerms(t)...)
		}
		list := make([][]string, len(ids))
		for i, id := range ids {
			list[i] = docs[id]
		}
		scores := bm25(query, list)
		best := 0.0
		for _, s := range scores {
			best = max(best, s)
		}
		if best > 0 {
			kept := map[string]bool{}
			for i, s := range scores {
				if s >= best*serverThreshold {
					kept[ids[i]] = true
				}
			}
			keep = nil
			for _, t := range tools {
				if kept[t.Server] {
					keep = append(keep, t)
				}
			}
		}
	}
	if o.MaxTools > 0 && len(keep) > o.MaxTools {
		list := make([][]string, len(keep))
		for i, t := range keep {
			list[i] = append(terms(t.Server), toolTerms(t)...)
		}
		scores := bm25(query, list)
		idx := make([]int, len(keep))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
		idx = idx[:o.MaxTools]
		sort.Ints(idx)
		out := make([]host.Tool, len(idx))
		for i, j := range idx {
			out[i] = keep[j]
		}
		keep = out
	}
	return keep
}

func toolTerms(t host.Tool) []string {
	out := terms(t.Tool.Name)
	out = append(out, terms(t.Tool.Title)...)
	return append(out, terms(t.Tool.Description)...)
}

// bm25 scores each document against the query terms.
func bm25(query []string, docs [][]string) []float64 {
	n := float64(len(docs))
	df := map[string]int{}
	total := 0
	tfs := make([]map[string]int, len(docs))
	for i, d := range docs {
		total += len(d)
		tfs[i] = map[string]int{}
		for _, t := range d {
			tfs[i][t]++
		}
		for t := range tfs[i] {
			df[t]++
		}
	}
	avg := float64(total) / max(n, 1)
	scores := make([]float64, len(docs))
	for i, d := range docs {
		for _, q := range query {
			tf := float64(tfs[i][q])
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[q])+0.5)/(float64(df[q])+0.5))
			scores[i] += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(len(d))/max(avg, 1)))
		}
	}
	return scores
}

var stopWords = map[string]bool{
	"the": true, "an": true, "and": true, "or": true, "of": true, "to": true, "in": true, "for": true,
	"on": true, "with": true, "is": true, "are": true, "be": true, "by": true, "it": true, "this": true,
	"that": true, "me": true, "my": true, "what": true, "please": true, "can": true, "you": true, "from": true,
	"at": true, "as": true, "do": true, "if": true, "its": true, "how": true,
}

// terms splits s into lower-case terms.
func terms(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 1 {
			w := string(cur)
			if !stopWords[w] {
				out = append(out, w)
			}
		}
		cur = cur[:0]
	}
	var prev rune
	for _, c := range s {
		switch {
		case unicode.IsLetter(c) || unicode.IsDigit(c):
			if unicode.IsUpper(c) && unicode.IsLower(prev) {
				flush() // camelCase
			}
			cur = append(cur, unicode.ToLower(c))
		default:
			flush()
		}
		prev = c
	}
	flush()
	return out
}

func uniq(l []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range l {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// SearchTools ranks tools against query with the same BM25 index Select
// uses (name, title and description terms), best first, and drops the
// tools that match no term. Ties keep the tools' order.
func SearchTools(query string, tools []host.Tool) []host.Tool {
	q := uniq(terms(query))
	if len(q) == 0 {
		return tools
	}
	docs := make([][]string, len(tools))
	for i, t := range tools {
		docs[i] = toolTerms(t)
	}
	scores := bm25(q, docs)
	idx := make([]int, 0, len(tools))
	for i, s := range scores {
		if s > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	out := make([]host.Tool, len(idx))
	for i, j := range idx {
		out[i] = tools[j]
	}
	return out
}
