package cli

import (
	"sort"
	"strings"

	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/decode"
)

// maxSuggestions bounds a "did you mean": a list longer than this is no
// longer a hint.
const maxSuggestions = 5

// candidate is a name a user may have meant, and the other names it goes
// by (a tool's name on its server, beside the host's name).
type candidate struct {
	name  string
	alias []string
}

// nearest returns the names of the candidates near what was typed, best
// first: the same but for case and '-' against '_' (get_sum for get-sum),
// then a likely typo (an edit distance that grows with the length: 1 up
// to 4 characters, 2 up to 8, 3 beyond), then names containing it or
// contained in it (echo for mcp_fx_echo). Each candidate is judged by the
// nearest of its names. Only the nearest are offered: the same name but
// for case and '-' hides every typo, and a closer typo a farther one.
func nearest(typed string, cands []candidate) []string {
	t := normName(typed)
	limit := 3
	switch {
	case len(t) <= 4:
		limit = 1
	case len(t) <= 8:
		limit = 2
	}
	type hit struct {
		name  string
		score int
	}
	var hits []hit
	for _, c := range cands {
		best := -1
		for _, n := range append([]string{c.name}, c.alias...) {
			if n == "" {
				continue
			}
			s := -1
			nn := normName(n)
			switch d := decode.EditDistance(t, nn); {
			case d <= limit:
				s = d
			case len(t) >= 3 && strings.Contains(nn, t), len(nn) >= 3 && strings.Contains(t, nn):
				s = limit + 1
			}
			if s >= 0 && (best < 0 || s < best) {
				best = s
			}
		}
		if best >= 0 {
			hits = append(hits, hit{c.name, best})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score < hits[j].score })
	var out []string
	seen := map[string]bool{}
	for _, h := range hits {
		if h.score > hits[0].score {
			break // the nearest only: mcp_fx_env is no hint beside mcp_fx_echo for mcp_fx_ecoh
		}
		if !seen[h.name] && len(out) < maxSuggestions {
			seen[h.name] = true
			out = append(out, h.name)
		}
	}
	return out
}

// normName is a name as nearest compares it: lower case, '-' as '_'.
func normName(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")
}

// didYouMean is " (did you mean a, b?)", or "" when nothing is near.
func didYouMean(typed string, cands []candidate) string {
	hits := nearest(typed, cands)
	if len(hits) == 0 {
		return ""
	}
	return " (did you mean " + strings.Join(hits, ", ") + "?)"
}

// toolCandidates are the host's tools, each also by its name on its
// server.
func toolCandidates(tools []host.Tool) []candidate {
	out := make([]candidate, len(tools))
	for i, t := range tools {
		out[i] = candidate{name: t.Name}
		if t.Tool != nil {
			out[i].alias = []string{t.Tool.Name}
		}
	}
	return out
}

// names are candidates without aliases.
func names(ns []string) []candidate {
	out := make([]candidate, len(ns))
	for i, n := range ns {
		out[i] = candidate{name: n}
	}
	return out
}
