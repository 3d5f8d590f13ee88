package workflow

// Template is one template string of a workflow file, in Go's text/template
// syntax, parsed and checked at load time.
type Template struct {
	src  string
	line int
}

// String returns the template's source.
func (t *Template) String() string { return t.src }

// Value is a value of a workflow file (a tool's arguments, a workflow
// step's with) whose string leaves are templates.
type Value struct {
	v any
}

// Scope is what a template sees: .inputs, .steps.ID.result, .vars, and in
// a for_each's inner step the item (.item, or the name in as) and .index.
type Scope struct {
	Inputs map[string]any
	// Steps maps a step's id to its result (nil for a skipped step).
	Steps map[string]any
	Vars  map[string]any
	// ItemName is the for_each item's name ("item" by default); "" outside
	// a for_each.
	ItemName string
	Item     any
	Index    int
}
