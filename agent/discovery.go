package agent

import (
	"strings"

	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/toolsearch"
)

// SelectOptions says what Select does.
type SelectOptions struct {
	// Servers keeps only the servers that match the prompt (mcp_discovery).
	Servers bool
	// MaxTools keeps at most this many tools, the best matches; 0: no cap.
	MaxTools int
}

// serverThreshold keeps servers scoring at least this fraction of the
// best server's score: a relative threshold, because BM25 scores have no
// fixed scale.
const serverThreshold = 0.5

// Select chooses the tools the model sees for a prompt. It is deterministic:
// the same prompt and tools give the same answer. The ranking is
// toolsearch's, the one the gateway's search mode uses (BM25 over
// weighted fields, names split into words, light stemming).
//
// With o.Servers, each server is one document — its id as the name, its
// tools' names as the title, and its description (descriptions, by server
// id) with its tools' titles and descriptions — scored against the
// prompt. The servers scoring at least half the best score are kept; when
// no server matches, every server is kept.
//
// With o.MaxTools, each remaining tool is a document (its name, title,
// server, description and argument names); the best MaxTools are kept,
// then, if fewer match, the first of the others, ties going to the tool
// declared first.
//
// The tools come back in their original order.
func Select(prompt string, tools []host.Tool, descriptions map[string]string, o *SelectOptions) []host.Tool {
	if o == nil {
		o = &SelectOptions{}
	}
	keep := tools
	if o.Servers {
		var ids []string
		docs := map[string]*serverDoc{}
		for _, t := range tools {
			d, ok := docs[t.Server]
			if !ok {
				ids = append(ids, t.Server)
				d = &serverDoc{}
				d.text.WriteString(descriptions[t.Server])
				docs[t.Server] = d
			}
			d.names = append(d.names, t.Tool.Name)
			d.text.WriteString(". " + t.Tool.Title + ". " + t.Tool.Description)
		}
		list := make([]toolsearch.Doc, len(ids))
		for i, id := range ids {
			list[i] = toolsearch.Doc{Name: id, Title: strings.Join(docs[id].names, " "), Description: docs[id].text.String()}
		}
		hits := toolsearch.New(list).Search(prompt, 0)
		if len(hits) > 0 {
			kept := map[string]bool{}
			for _, h := range hits {
				if h.Score >= hits[0].Score*serverThreshold {
					kept[ids[h.Index]] = true
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
		hits := toolsearch.New(docsOf(keep)).Search(prompt, o.MaxTools)
		chosen := make([]bool, len(keep))
		for _, h := range hits {
			chosen[h.Index] = true
		}
		for i, n := 0, len(hits); i < len(keep) && n < o.MaxTools; i++ {
			if !chosen[i] {
				chosen[i] = true
				n++
			}
		}
		var out []host.Tool
		for i, t := range keep {
			if chosen[i] {
				out = append(out, t)
			}
		}
		keep = out
	}
	return keep
}

type serverDoc struct {
	names []string
	text  strings.Builder
}

// docsOf are tools as toolsearch documents, in order.
func docsOf(tools []host.Tool) []toolsearch.Doc {
	docs := make([]toolsearch.Doc, len(tools))
	for i, t := range tools {
		docs[i] = toolsearch.Doc{Name: t.Name, Server: t.Server, Title: t.Tool.Title, Description: t.Tool.Description, InputSchema: t.Tool.InputSchema}
	}
	return docs
}

// SearchTools ranks tools against query with toolsearch (the index of
// Select and of the gateway's search_tools), best first, and drops the
// tools that match no word. A query of no words (only stop words or
// punctuation) keeps every tool. Ties keep the tools' order.
func SearchTools(query string, tools []host.Tool) []host.Tool {
	if len(toolsearch.Words(query)) == 0 {
		return tools
	}
	hits := toolsearch.New(docsOf(tools)).Search(query, 0)
	out := make([]host.Tool, len(hits))
	for i, h := range hits {
		out[i] = tools[h.Index]
	}
	return out
}
