package workflow

import (
	"errors"
	"math"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// The YAML reader of workflow files, as agent files' (agent/file.go): it
// parses into generic values, recording the line of every key and element
// in the decoder, and refuses anchors, aliases, tags and merge keys (a
// workflow file is configuration that people review; these hide what it
// says).

// parseYAML parses data into the file's top-level mapping.
func parseYAML(d *decode.Decoder, data []byte, blocks map[string]bool) (map[string]any, bool) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		line := 0
		msg := err.Error()
		var ye yaml.Error
		if errors.As(err, &ye) {
			msg = ye.GetMessage()
			if t := ye.GetToken(); t != nil && t.Position != nil {
				line = t.Position.Line
			}
		}
		d.ErrorAt(max(line, 1), "", "invalid YAML: %s", msg)
		return nil, false
	}
	if len(f.Docs) > 1 {
		d.ErrorAt(1, "", "holds %d YAML documents; a workflow file has one", len(f.Docs))
		return nil, false
	}
	d.Lines[""] = 1
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return map[string]any{}, true
	}
	w := &yamlWalker{d: d, blocks: blocks}
	v := w.node("", f.Docs[0].Body)
	if len(d.Problems) > 0 {
		return nil, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		d.ErrorAt(1, "", "must be a mapping of fields (id: ..., steps: ...), not %s", d.TypeName(v))
		return nil, false
	}
	return m, true
}

type yamlWalker struct {
	d *decode.Decoder
	// blocks records the paths of block scalars (| and >), whose text
	// starts on the line after their key.
	blocks map[string]bool
}

func (w *yamlWalker) line(n ast.Node) int {
	if t := n.GetToken(); t != nil && t.Position != nil {
		return t.Position.Line
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
		w.blocks[path] = true
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
			p := decode.IndexPath(path, i)
			if l := w.line(e); l > 0 {
				w.d.Lines[p] = l
			}
			a = append(a, w.node(p, e))
		}
		return a
	case *ast.AnchorNode, *ast.AliasNode, *ast.MergeKeyNode:
		w.d.ErrorAt(w.line(n), path, "YAML anchors, aliases and merge keys are not supported in workflow files")
	case *ast.TagNode:
		w.d.ErrorAt(w.line(n), path, "YAML tags are not supported in workflow files")
	default:
		w.d.ErrorAt(w.line(n), path, "unsupported YAML %s", n.Type())
	}
	return nil
}

func (w *yamlWalker) pair(path string, m map[string]any, mv *ast.MappingValueNode) {
	if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
		w.d.ErrorAt(w.line(mv.Key), path, "YAML merge keys (<<) are not supported in workflow files")
		return
	}
	ks, ok := mv.Key.(ast.ScalarNode)
	var key string
	if ok {
		switch v := ks.GetValue().(type) {
		case string:
			key = v
		default:
			ok = false
		}
	}
	if !ok {
		w.d.ErrorAt(w.line(mv.Key), path, "a key must be a plain string")
		return
	}
	p := decode.KeyPath(path, key)
	line := w.line(mv.Key)
	if _, dup := m[key]; dup {
		w.d.ErrorAt(line, p, "duplicate key %q (first on line %d)", key, w.d.Lines[p])
		return
	}
	w.d.Lines[p] = line
	m[key] = w.node(p, mv.Value)
}
