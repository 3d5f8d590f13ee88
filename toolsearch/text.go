package toolsearch

import (
	"strings"
	"unicode"
)

// Words are the terms toolsearch indexes of s: its words (names split
// at camelCase, snake_case, dots and dashes), lower-cased and stemmed,
// without stop words. A query of no Words matches nothing.
func Words(s string) []string { return words(s) }

// words are the stems of s's words (split).
func words(s string) []string {
	out := split(s)
	for i, w := range out {
		out[i] = stem(w)
	}
	return out
}

// split splits s into lower-case words: runs of letters and digits, with
// camelCase ("getIssue"), snake_case, kebab-case, dots and slashes split
// apart. Words of one letter, and stop words, are dropped.
func split(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 1 || (len(cur) == 1 && unicode.IsDigit(cur[0])) {
			w := string(cur)
			if !stopWords[w] {
				out = append(out, w)
			}
		}
		cur = cur[:0]
	}
	var prev rune
	rs := []rune(s)
	for i, c := range rs {
		switch {
		case unicode.IsLetter(c) || unicode.IsDigit(c):
			if unicode.IsUpper(c) && len(cur) > 0 {
				// "getIssue" -> get, issue; "HTTPServer" -> http, server.
				nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
				if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
					flush()
				}
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

// stopWords carry no meaning of their own in a request for a tool.
var stopWords = map[string]bool{
	"a": true, "the": true, "an": true, "and": true, "or": true, "of": true, "to": true, "in": true, "for": true,
	"on": true, "with": true, "is": true, "are": true, "be": true, "by": true, "it": true, "this": true,
	"that": true, "me": true, "my": true, "what": true, "please": true, "can": true, "you": true, "from": true,
	"at": true, "as": true, "do": true, "if": true, "its": true, "how": true, "i": true, "we": true, "our": true,
	"your": true, "some": true, "any": true, "into": true, "which": true, "who": true, "want": true, "need": true,
	"would": true, "like": true, "there": true, "their": true, "them": true, "they": true, "all": false,
	"one": true, "will": true, "should": true, "could": true, "has": true, "have": true, "been": true, "was": true,
	"were": true, "so": true, "then": true, "than": true, "up": true, "out": false, "about": true, "such": true,
	"e": true, "g": true, "eg": true, "etc": true, "via": true, "using": true, "use": true,
}

// stem is a light English stemmer: it takes off the inflections that
// separate a request from a tool's text (plurals, -ing, -ed, -er, -ly,
// -ation), leaving stems of at least three letters. It is not Porter's:
// it is meant to conflate the common forms, and over-stemming rarely
// hurts a ranking that sees both sides stemmed alike.
func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	if r, ok := irregular[w]; ok {
		return r
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	for _, suf := range []string{"ations", "ation", "ingly", "ing", "edly", "ed", "ly"} {
		if base, ok := strings.CutSuffix(w, suf); ok && len(base) >= 3 {
			w = undouble(base)
			if suf == "ation" || suf == "ations" {
				w += "ate"
			}
			break
		}
	}
	if base, ok := strings.CutSuffix(w, "er"); ok && len(base) >= 4 {
		w = undouble(base)
	}
	// "create", "created", "creating": one stem.
	if base, ok := strings.CutSuffix(w, "e"); ok && len(base) >= 3 {
		w = base
	}
	return w
}

// undouble takes off a doubled final consonant ("running" -> "runn" ->
// "run"), but not l, s or z ("installed", "process").
func undouble(w string) string {
	n := len(w)
	if n >= 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouylsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// irregular are the words the suffix rules get wrong.
var irregular = map[string]string{
	"children": "child", "indices": "index", "indexes": "index", "statuses": "status", "aliases": "alias",
	"analyses": "analys", "analysis": "analys", "queries": "query", "repositories": "repository",
}

// synonyms add to a query the words its tools are likely to use instead:
// abbreviations and near-synonyms common in tool descriptions. They apply
// to the query only, each alternative weighing less than the word asked.
var synonyms = map[string][]string{
	"pr":       {"pull", "request"},
	"prs":      {"pull", "request"},
	"mr":       {"merge", "request"},
	"repo":     {"repository"},
	"repos":    {"repository"},
	"db":       {"database"},
	"k8s":      {"kubernetes"},
	"kube":     {"kubernetes"},
	"msg":      {"message"},
	"dm":       {"direct", "message"},
	"ci":       {"workflow", "build"},
	"email":    {"mail"},
	"mail":     {"email"},
	"remove":   {"delete"},
	"delete":   {"remove"},
	"erase":    {"delete"},
	"kill":     {"terminate", "cancel"},
	"stop":     {"cancel"},
	"add":      {"create"},
	"make":     {"create"},
	"new":      {"create"},
	"open":     {"create"},
	"show":     {"get", "list"},
	"fetch":    {"get"},
	"find":     {"search"},
	"look":     {"search"},
	"lookup":   {"search"},
	"send":     {"post"},
	"post":     {"send"},
	"ticket":   {"issue"},
	"bug":      {"issue"},
	"meeting":  {"event"},
	"schedule": {"create", "event"},
	"folder":   {"directory"},
	"dir":      {"directory"},
	"doc":      {"document", "page"},
	"note":     {"page"},
	"charge":   {"payment"},
	"pay":      {"payment"},
	"money":    {"balance", "payment"},
	"vm":       {"node"},
	"config":   {"configuration", "setting"},
	"cpu":      {"usage"},
	"memory":   {"usage"},
	"logs":     {"log"},
	"reply":    {"respond"},
	"decline":  {"respond"},
	"accept":   {"respond"},
	"rsvp":     {"respond"},
	"user":     {"member"},
	"rename":   {"move"},
	"chmod":    {"permission"},
	"du":       {"disk", "usage"},
	"df":       {"free", "space"},
}

// expand is the stems of the query's words and of their synonyms, each
// with its weight: 1 for a word asked, synonymWeight for one added (unless
// it was asked too).
func expand(query string) map[string]float64 {
	q := split(query)
	out := map[string]float64{}
	for _, w := range q {
		out[stem(w)] = 1
	}
	for _, w := range q {
		for _, s := range synonyms[w] {
			for _, sw := range words(s) {
				if _, asked := out[sw]; !asked {
					out[sw] = synonymWeight
				}
			}
		}
	}
	return out
}

// synonymWeight is how much a word added by a synonym counts against one
// asked: enough to find a tool that says it otherwise, not so much that it
// outranks one that says it as asked.
const synonymWeight = 0.4
