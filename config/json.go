package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// isJSON reports whether a file is in the mcpServers JSON format: by its
// extension, or by content starting with '{' (which TOML cannot).
func isJSON(path string, data []byte) bool {
	if strings.HasSuffix(strings.ToLower(path), ".json") {
		return true
	}
	t := bytes.TrimLeft(data, " \t\r\n\ufeff")
	return len(t) > 0 && t[0] == '{'
}

// parseJSON parses data, one JSON value, into generic values, recording in
// r the line of every key and element; order is each object's keys in
// order, by field path. On failure it returns the error and the line it
// is on.
func parseJSON(r *fileResult, data []byte) (doc any, order map[string][]string, line int, err error) {
	w := &jsonWalker{r: r, dec: json.NewDecoder(bytes.NewReader(data)), starts: lineStarts(data), order: map[string][]string{}}
	w.dec.UseNumber()
	if doc, err = w.value(""); err == nil {
		if _, err2 := w.dec.Token(); err2 != io.EOF {
			err = errors.New("unexpected data after the top-level object")
		}
	}
	if err == nil {
		return doc, w.order, 0, nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return nil, nil, lineAt(w.starts, int(se.Offset)), err
	}
	return nil, nil, lineAt(w.starts, int(w.dec.InputOffset())), err
}

// decodeJSON decodes the mcpServers JSON of Claude Desktop and Cursor, or
// the "servers" JSON of VS Code. Other top-level keys are ignored: Claude's
// file holds its preferences too.
func decodeJSON(file string, data []byte, home string) *fileResult {
	r := newFileResult(file, decode.JSON, home)
	doc, order, line, err := parseJSON(r, data)
	if err != nil {
		p := decode.Problem{Line: line, Msg: err.Error()}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			p.Line, p.Msg = bytes.Count(data, []byte("\n"))+1, "unexpected end of JSON input"
		}
		r.Problems = append(r.Problems, p)
		return r
	}
	top, ok := doc.(map[string]any)
	if !ok {
		r.Errorf("", "must be a JSON object with mcpServers or servers, not %s", r.TypeName(doc))
		return r
	}
	found := false
	ids := map[string]string{} // id → entry field path
	// The clients' variables, as import reads them (ReadClientFile): those
	// of the client the file's name says, ${workspaceFolder} the folder that
	// holds its .vscode or .cursor folder.
	vars := ClientFile{Client: clientOf(file), Path: file, dir: workspaceOf(file)}
	for _, key := range []string{"mcpServers", "servers"} {
		v, ok := top[key]
		if !ok {
			continue
		}
		found = true
		entries, ok := v.(map[string]any)
		if !ok {
			r.Errorf(key, "must be an object, not %s", r.TypeName(v))
			continue
		}
		for _, name := range order[key] {
			path := decode.KeyPath(key, name)
			m, ok := entries[name].(map[string]any)
			if !ok {
				r.Errorf(path, "must be an object, not %s", r.TypeName(entries[name]))
				continue
			}
			if d, ok := m["disabled"].(bool); !ok || !d {
				// The clients' ${…}, never passed to a server as text.
				vars.rewriteVars(r, path, m, home)
			}
			s, enabled := r.jsonServer(path, m)
			if !enabled {
				continue
			}
			s.ID = jsonID(name)
			switch {
			case s.ID == "":
				r.Errorf(path, "an empty name cannot be a server id")
				continue
			case len(s.ID) > maxIDLen:
				r.Errorf(path, "name is %d characters; a server id has at most %d", len(s.ID), maxIDLen)
				continue
			}
			if other, dup := ids[s.ID]; dup {
				r.Errorf(path, "id %q collides with %s (characters outside A-Z a-z 0-9 _ - become -)", s.ID, other)
				continue
			}
			ids[s.ID] = path
			r.servers = append(r.servers, s)
		}
	}
	if !found {
		r.Problems = append(r.Problems, decode.Problem{Msg: "no mcpServers or servers object"})
	}
	return r
}

// jsonID turns an entry name into a server id: characters outside the id
// alphabet become '-'.
func jsonID(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !decode.IsIDByte(c) {
			b[i] = '-'
		}
	}
	// Multi-byte runes became several dashes; that is still unambiguous
	// enough, and keeps the mapping simple to explain.
	return string(b)
}

// jsonServer decodes one entry; enabled is false for "disabled": true, an
// entry that is then skipped unread.
func (r *fileResult) jsonServer(path string, m map[string]any) (s Server, enabled bool) {
	if v, ok := m["disabled"]; ok {
		if d, ok := r.Bool(decode.KeyPath(path, "disabled"), v); ok && d {
			return Server{}, false
		}
	}
	if _, both := m["transport"]; both {
		if _, ok := m["type"]; ok {
			r.Errorf(decode.KeyPath(path, "transport"), "type and transport both name the transport; keep one")
		}
	}
	return r.server(path, m), true
}

// jsonWalker decodes JSON into generic values like encoding/json does, but
// also records the line of every object key and the order of keys, and
// reports duplicate keys, which encoding/json silently lets the last win.
type jsonWalker struct {
	r      *fileResult
	dec    *json.Decoder
	starts []int
	order  map[string][]string // field path of an object → its keys in order
	depth  int
}

// maxJSONDepth bounds nesting, so that a hostile file cannot exhaust the
// stack through value's recursion; real configs nest four levels deep.
const maxJSONDepth = 1000

func (w *jsonWalker) value(path string) (any, error) {
	w.depth++
	defer func() { w.depth-- }()
	if w.depth > maxJSONDepth {
		return nil, fmt.Errorf("nested more than %d levels deep", maxJSONDepth)
	}
	tok, err := w.dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		m := map[string]any{}
		for w.dec.More() {
			kt, err := w.dec.Token()
			if err != nil {
				return nil, err
			}
			k, ok := kt.(string)
			if !ok {
				return nil, fmt.Errorf("object key is %v, not a string", kt)
			}
			kp := decode.KeyPath(path, k)
			line := lineAt(w.starts, int(w.dec.InputOffset())-1)
			v, err := w.value(kp)
			if err != nil {
				return nil, err
			}
			if _, dup := m[k]; dup {
				w.r.Problems = append(w.r.Problems, decode.Problem{
					Line:  line,
					Field: kp,
					Msg:   fmt.Sprintf("duplicate key (first on line %d); the first one is used", w.r.Lines[kp]),
				})
				continue
			}
			w.r.Lines[kp] = line
			m[k] = v
			w.order[path] = append(w.order[path], k)
		}
		if _, err := w.dec.Token(); err != nil { // '}'
			return nil, err
		}
		return m, nil
	case json.Delim('['):
		a := []any{}
		for i := 0; w.dec.More(); i++ {
			v, err := w.value(decode.IndexPath(path, i))
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		if _, err := w.dec.Token(); err != nil { // ']'
			return nil, err
		}
		return a, nil
	default:
		return tok, nil
	}
}
