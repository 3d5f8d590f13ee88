package config

// Limits is the [limits] table: bounds on the text MCP servers declare and
// send, which the host cleans (terminal escapes and control and invisible
// characters removed) and bounds once, for every face: the CLI, agents,
// the gateway's clients.
//
//	[limits]
//	max_description_bytes = 8192  # each description, instructions, error and progress message: longer is cut
//	max_name_bytes        = 256   # titles and serverInfo strings are cut; a longer tool or prompt name is not offered
//
// max_description_bytes applies to each description of a tool, prompt,
// resource, resource template, prompt argument and schema property, to a
// server's instructions, and to the error and progress messages it sends.
// max_name_bytes applies to titles, a resource's name, serverInfo and a
// log message's logger, which are cut, and to tool, prompt and prompt
// argument names, which are identifiers and never cut: a tool or prompt
// whose name is longer is not offered. The zero value means the defaults
// ([DefaultMaxDescriptionBytes], [DefaultMaxNameBytes]). A later file's
// keys override an earlier file's one by one.
type Limits struct {
	MaxDescriptionBytes int
	MaxNameBytes        int

	// Source is where the last [limits] table was declared; zero when none
	// was.
	Source Position
}

var tomlLimitsKeys = []string{"max_description_bytes", "max_name_bytes"}

// The ranges the [limits] keys accept. A description bound below 256
// bytes would cut ordinary descriptions to nothing useful; above 4 MiB it
// is no bound (a message is at most that). A name bound below 64 would
// refuse ordinary tool names; MCP's own advice is at most 128 characters.
const (
	minDescriptionBytes = 256
	maxDescriptionBytes = 4 << 20
	minNameBytes        = 64
	maxNameBytes        = 64 << 10
)

// tomlLimits decodes and checks the [limits] table at field path path
// ("limits").
func (r *fileResult) tomlLimits(path string, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		r.errorf(path, "must be a table, not %s", r.typeName(v))
		return
	}
	l := &Limits{Source: Position{File: r.file, Line: r.lineOf(path), Field: path}}
	set := map[string]bool{}
	for _, k := range r.sortedKeys(path, m) {
		v, f := m[k], keyPath(path, k)
		ok := false
		switch k {
		case "max_description_bytes":
			l.MaxDescriptionBytes, ok = r.between(f, v, minDescriptionBytes, maxDescriptionBytes)
		case "max_name_bytes":
			l.MaxNameBytes, ok = r.between(f, v, minNameBytes, maxNameBytes)
		default:
			r.errorf(f, "%s", unknownKey(k, tomlLimitsKeys))
		}
		if ok {
			set[k] = true
		}
	}
	r.limits, r.limitsSet = l, set
}

// between decodes a whole number from lo to hi.
func (r *fileResult) between(field string, v any, lo, hi int) (int, bool) {
	n, ok := v.(int64)
	if !ok {
		r.errorf(field, "must be a whole number of bytes, not %s", r.typeName(v))
		return 0, false
	}
	if n < int64(lo) || n > int64(hi) {
		r.errorf(field, "must be between %d and %d, not %d", lo, hi, n)
		return 0, false
	}
	return int(n), true
}

// mergeLimits applies the keys a file's [limits] table set over dst.
func mergeLimits(dst *Limits, r *fileResult) {
	src := r.limits
	dst.Source = src.Source
	for k := range r.limitsSet {
		switch k {
		case "max_description_bytes":
			dst.MaxDescriptionBytes = src.MaxDescriptionBytes
		case "max_name_bytes":
			dst.MaxNameBytes = src.MaxNameBytes
		}
	}
}
