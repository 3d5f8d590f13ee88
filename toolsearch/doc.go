// Package toolsearch ranks tools against what a model asks for: the index
// behind the gateway's search mode (search_tools) and the agents'
// max_tools.
//
// An [Index] is built once over a list of [Doc]s — a tool's name, title,
// description and argument names, as its callers see them — and answers
// [Index.Search] in well under a millisecond for thousands of tools. The
// ranking is lexical: BM25 over fields of different weights (BM25F: a
// word of the name counts more than one of the description), with names
// split into words (snake_case, camelCase, dots, dashes and slashes), a
// light English stemmer (issues, issue; running, run), a short list of
// stop words, and a few synonyms of the trade (pr, pull request; repo,
// repository; k8s, kubernetes) applied to the query.
//
// Embeddings are optional: [Index.Embed] asks an [Embedder] (an Ollama or
// OpenAI-compatible embeddings endpoint; package llm has both) for a
// vector per tool, through a [Cache] keyed by the tool definition's
// [Digest] and the model, and [Index.SearchContext] then blends the
// query's cosine similarity with the lexical score.
//
// The package knows nothing of MCP sessions, policies or endpoints: the
// caller decides which tools are in an index, and which hits a caller
// may see ([Index.SearchFunc]).
package toolsearch
