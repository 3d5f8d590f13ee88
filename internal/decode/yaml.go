package decode

import (
	"errors"
	"math"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// YAMLOptions says what [Decoder.YAML] reads, for its messages and lines.
type YAMLOptions struct {
	// Kind names the kind of file in messages: "agent file" makes "an
	// agent file has one" and "not supported in agent files".
	Kind string
	// Fields are the first fields of the file, for the message of a
	// document that is not a mapping: "id: ..., model: ...".
	Fields string
	// Offset is the number of the file's lines before data (1 for
	// Markdown front matter after its ---).
	Offset int
	// Blocks, if not nil, gets the field paths of block scalars (| and
	// >), whose text starts on the line after their key.
	Blocks map[string]bool
}

// YAML parses data, one YAML document, into the generic values the
// decoder reads (string, bool, int64, float64, []any, map[string]any,
// nil), recording the line of every key and element in d.Lines, and
// returns its top-level mapping. Anchors, aliases, tags and merge keys are
// refused: such a file is configuration that people review, and these
// hide what it says. On any problem it reports every one it found and
// returns false.
func (d *Decoder) YAML(data []byte, o YAMLOptions) (map[string]any, bool) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		line := 0
		msg := err.Error()
		var ye yaml.Error
		if errors.As(err, &ye) {
			msg = ye.GetMessage()
			if t := ye.GetToken(); t != nil && t.Position != nil {
				line = t.Position.Line + o.Offset
			}
		}
		d.ErrorAt(max(line, 1), "", "invalid YAML: %s", msg)
		return nil, false
	}
	if len(f.Docs) > 1 {
		article := "a"
		if strings.ContainsAny(o.Kind[:1], "aeiou") {
			article = "an"
		}
		d.ErrorAt(o.Offset+1, "", "holds %d YAML documents; %s %s has one", len(f.Docs), article, o.Kind)
		return nil, false
	}
	d.Lines[""] = o.Offset + 1
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return map[string]any{}, true
	}
	w := &yamlWalker{d: d, o: o}
	v := w.node("", f.Docs[0].Body)
	if len(d.Problems) > 0 {
		return nil, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		d.ErrorAt(o.Offset+1, "", "must be a mapping of fields (%s), not %s", o.Fields, d.TypeName(v))
		return nil, false
	}
	return m, true
}

type yamlWalker struct {
	d *Decoder
	o YAMLOptions
}

func (w *yamlWalker) line(n ast.Node) int {
	if t := n.GetToken(); t != nil && t.Position != nil {
		return t.Position.Line + w.o.Offset
	}
	return 0
}

func (w *yamlWalker) node(path string, n ast.Node) any {
	switch n := n.(type) {
	case nil:
		return nil
	case *ast.NullNode:
		return nil
	case *ast.StringNode:
		return n.Value
	case *ast.LiteralNode:
		if w.o.Blocks != nil {
			w.o.Blocks[path] = true
		}
		return n.Value.Value
	case *ast.BoolNode:
		return n.Value
	case *ast.IntegerNode:
		switch v := n.Value.(type) {
		case int64:
			return v
		case uint64:
			if v <= math.MaxInt64 {
				return int64(v)
			}
			return float64(v)
		}
		return n.GetValue()
	case *ast.FloatNode:
		return n.Value
	case *ast.InfinityNode:
		return n.Value
	case *ast.NanNode:
		return math.NaN()
	case *ast.MappingValueNode:
		m := map[string]any{}
		w.pair(path, m, n)
		return m
	case *ast.MappingNode:
		m := map[string]any{}
		for _, mv := range n.Values {
			w.pair(path, m, mv)
		}
		return m
	case *ast.SequenceNode:
		a := make([]any, 0, len(n.Values))
		for i, e := range n.Values {
			p := IndexPath(path, i)
			if l := w.line(e); l > 0 {
				w.d.Lines[p] = l
			}
			a = append(a, w.node(p, e))
		}
		return a
	case *ast.AnchorNode, *ast.AliasNode, *ast.MergeKeyNode:
		w.d.ErrorAt(w.line(n), path, "YAML anchors, aliases and merge keys are not supported in %ss", w.o.Kind)
	case *ast.TagNode:
		w.d.ErrorAt(w.line(n), path, "YAML tags are not supported in %ss", w.o.Kind)
	default:
		w.d.ErrorAt(w.line(n), path, "unsupported YAML %s", n.Type())
	}
	return nil
}

func (w *yamlWalker) pair(path string, m map[string]any, mv *ast.MappingValueNode) {
	if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
		w.d.ErrorAt(w.line(mv.Key), path, "YAML merge keys (<<) are not supported in %ss", w.o.Kind)
		return
	}
	key, ok := "", false
	if ks, scalar := mv.Key.(ast.ScalarNode); scalar {
		key, ok = ks.GetValue().(string)
	}
	if !ok {
		w.d.ErrorAt(w.line(mv.Key), path, "a key must be a plain string")
		return
	}
	p := KeyPath(path, key)
	line := w.line(mv.Key)
	if _, dup := m[key]; dup {
		w.d.ErrorAt(line, p, "duplicate key %q (first on line %d)", key, w.d.Lines[p])
		return
	}
	w.d.Lines[p] = line
	m[key] = w.node(p, mv.Value)
}
