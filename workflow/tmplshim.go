package workflow

// The engine's view of templates: four functions, so that the evaluator
// the format's side provides plugs in here and nowhere else.
// TODO(i14-format): replace the bodies with ParseTemplate, Render, Eval,
// Truth and (*Value).Eval once merged.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/template"
)

var shimFuncs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"fromJson": func(s string) (any, error) {
		var v any
		err := json.Unmarshal([]byte(s), &v)
		return v, err
	},
	"default": func(d, v any) any {
		if v == nil || v == "" {
			return d
		}
		return v
	},
	"join": func(sep string, v []any) string {
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = fmt.Sprint(x)
		}
		return strings.Join(s, sep)
	},
}

func scopeData(s *Scope) map[string]any {
	steps := map[string]any{}
	for id, r := range s.Steps {
		steps[id] = map[string]any{"result": r}
	}
	d := map[string]any{"inputs": s.Inputs, "steps": steps, "vars": s.Vars}
	if s.ItemName != "" {
		d[s.ItemName] = s.Item
		d["index"] = s.Index
	}
	return d
}

// renderText renders t in s to a string.
func renderText(t *Template, s *Scope) (string, error) {
	if t == nil {
		return "", nil
	}
	tt, err := template.New("t").Option("missingkey=error").Funcs(shimFuncs).Parse(t.src)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := tt.Execute(&b, scopeData(s)); err != nil {
		return "", err
	}
	return b.String(), nil
}

// evalTemplate renders t in s to a value: a template that is one action
// yields that action's value (a list stays a list); otherwise a string.
func evalTemplate(t *Template, s *Scope) (any, error) {
	src := strings.TrimSpace(t.src)
	if strings.HasPrefix(src, "{{") && strings.HasSuffix(src, "}}") && strings.Count(src, "{{") == 1 {
		expr := strings.TrimSpace(src[2 : len(src)-2])
		tt, err := template.New("t").Option("missingkey=error").Funcs(shimFuncs).Parse("{{json (" + expr + ")}}")
		if err == nil {
			var b bytes.Buffer
			if err := tt.Execute(&b, scopeData(s)); err != nil {
				return nil, err
			}
			var v any
			if json.Unmarshal(b.Bytes(), &v) == nil {
				return v, nil
			}
		}
	}
	return renderText(t, s)
}

// truth renders a condition.
func truth(t *Template, s *Scope) (bool, error) {
	out, err := renderText(t, s)
	if err != nil {
		return false, err
	}
	out = strings.TrimSpace(out)
	if out == "" || out == "false" || out == "<no value>" {
		return false, nil
	}
	if f, err := strconv.ParseFloat(out, 64); err == nil {
		return f != 0, nil
	}
	return true, nil
}

// evalValue renders every string leaf of v in s.
func evalValue(v *Value, s *Scope) (any, error) {
	if v == nil {
		return nil, nil
	}
	var walk func(x any) (any, error)
	walk = func(x any) (any, error) {
		switch x := x.(type) {
		case string:
			if !strings.Contains(x, "{{") {
				return x, nil
			}
			return evalTemplate(&Template{src: x}, s)
		case *Template:
			return evalTemplate(x, s)
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				r, err := walk(e)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", k, err)
				}
				out[k] = r
			}
			return out, nil
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				r, err := walk(e)
				if err != nil {
					return nil, fmt.Errorf("[%d]: %w", i, err)
				}
				out[i] = r
			}
			return out, nil
		default:
			return x, nil
		}
	}
	return walk(v.v)
}
