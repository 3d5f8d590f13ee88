package decode

import (
	"strconv"
	"strings"
)

// Field paths name a value the way a user finds it in the file:
// mcp_servers[2].env.API_KEY, mcpServers."my server".command. A key
// outside the TOML bare-key alphabet is quoted, so that a path reads the
// same whatever the key holds.

// IsBareKey reports whether k may be written unquoted in a field path (the
// TOML bare-key alphabet: A-Z a-z 0-9 _ -).
func IsBareKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if !IsIDByte(k[i]) {
			return false
		}
	}
	return true
}

// IsIDByte reports whether c is in the bare-key alphabet, which is also the
// alphabet of ids (servers, providers, agents).
func IsIDByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// KeyPath appends key to the field path parent, quoting it when it is not a
// bare key: env."MY VAR".
func KeyPath(parent, key string) string {
	if !IsBareKey(key) {
		key = strconv.Quote(key)
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// IndexPath appends an index to the field path parent: args[1].
func IndexPath(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}

// JoinPath appends a path relative to parent (as [Table.Check] reports
// them: "env.API_KEY", "args[1]") to parent.
func JoinPath(parent, rel string) string {
	switch {
	case parent == "":
		return rel
	case rel == "":
		return parent
	}
	return parent + "." + rel
}

// ParentPath strips the last segment of a field path built by [KeyPath] and
// [IndexPath]; it returns "" for a single segment.
func ParentPath(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	}
	if strings.HasSuffix(p, `"`) {
		// A quoted segment may itself hold dots: find the opening quote that
		// makes the suffix a valid quoted string.
		for i := len(p) - 2; i >= 0; i-- {
			if p[i] == '"' && (i == 0 || p[i-1] == '.') {
				if _, err := strconv.Unquote(p[i:]); err == nil {
					if i == 0 {
						return ""
					}
					return p[:i-1]
				}
			}
		}
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}

// Suggest returns the entry of known nearest to key, or "" when none is
// close enough to be a likely typo: the "did you mean" of every format.
// On a tie the earlier entry wins.
func Suggest(key string, known []string) string {
	best, bestD := "", 0
	for _, k := range known {
		d := editDistance(strings.ToLower(key), strings.ToLower(k))
		if best == "" || d < bestD {
			best, bestD = k, d
		}
	}
	limit := 2
	if len(key) <= 4 {
		limit = 1
	}
	if best == "" || bestD > limit {
		return ""
	}
	return best
}

// editDistance is the optimal-string-alignment distance between a and b:
// insertions, deletions, substitutions and adjacent transpositions.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
