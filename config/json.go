package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// jsonServerKeys are the keys of one mcpServers entry. alwaysAllow and
// autoApprove are other clients' approval lists; they are accepted and
// ignored (Switchboard has no approval prompt, and mapping them to
// tools_allowlist would hide every other tool). allow_local_endpoint,
// allow_cross_origin_redirects and allow_env are Switchboard's own, so that
// an imported file can reach a local server or one that redirects
// elsewhere, or set a variable such as NODE_OPTIONS.
var jsonServerKeys = []string{
	"command", "args", "env", "cwd",
	"url", "type", "headers",
	"disabled", "timeout", "description",
	"alwaysAllow", "autoApprove", "allow_local_endpoint", "allow_cross_origin_redirects", "allow_env",
}

// jsonTypes maps the "type" values of the clients' formats to transports.
var jsonTypes = map[string]Transport{
	"stdio":           TransportStdio,
	"http":            TransportHTTP,
	"streamable-http": TransportHTTP,
	"streamableHttp":  TransportHTTP,
	"sse":             TransportSSE,
	"ws":              TransportWebSocket,
	"websocket":       TransportWebSocket,
}

// isJSON reports whether a file is in the mcpServers JSON format: by its
// extension, or by content starting with '{' (which TOML cannot).
func isJSON(path string, data []byte) bool {
	if strings.HasSuffix(strings.ToLower(path), ".json") {
		return true
	}
	t := bytes.TrimLeft(data, " \t\r\n\ufeff")
	return len(t) > 0 && t[0] == '{'
}

// decodeJSON decodes the mcpServers JSON of Claude Desktop and Cursor, or
// the "servers" JSON of VS Code. Other top-level keys are ignored: Claude's
// file holds its preferences too.
func decodeJSON(file string, data []byte) *fileResult {
	r := newFileResult(file)
	r.json = true
	w := &jsonWalker{r: r, dec: json.NewDecoder(bytes.NewReader(data)), starts: lineStarts(data), order: map[string][]string{}}
	w.dec.UseNumber()
	doc, err := w.value("")
	if err == nil {
		if _, err2 := w.dec.Token(); err2 != io.EOF {
			err = errors.New("unexpected data after the top-level object")
		}
	}
	if err != nil {
		p := &Problem{Pos: Position{File: file}, Msg: err.Error()}
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			p.Pos.Line = lineAt(w.starts, int(se.Offset))
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			p.Pos.Line = len(w.starts)
			p.Msg = "unexpected end of JSON input"
		default:
			p.Pos.Line = lineAt(w.starts, int(w.dec.InputOffset()))
		}
		r.problems = append(r.problems, p)
		return r
	}
	top, ok := doc.(map[string]any)
	if !ok {
		r.errorf("", "must be a JSON object with mcpServers or servers, not %s", r.typeName(doc))
		return r
	}
	found := false
	ids := map[string]string{} // id → entry field path
	for _, key := range []string{"mcpServers", "servers"} {
		v, ok := top[key]
		if !ok {
			continue
		}
		found = true
		entries, ok := v.(map[string]any)
		if !ok {
			r.errorf(key, "must be an object, not %s", r.typeName(v))
			continue
		}
		for _, name := range w.order[key] {
			path := keyPath(key, name)
			m, ok := entries[name].(map[string]any)
			if !ok {
				r.errorf(path, "must be an object, not %s", r.typeName(entries[name]))
				continue
			}
			s, enabled := r.jsonServer(path, m)
			if !enabled {
				continue
			}
			s.ID = jsonID(name)
			switch {
			case s.ID == "":
				r.errorf(path, "an empty name cannot be a server id")
				continue
			case len(s.ID) > maxIDLen:
				r.errorf(path, "name is %d characters; a server id has at most %d", len(s.ID), maxIDLen)
				continue
			}
			if other, dup := ids[s.ID]; dup {
				r.errorf(path, "id %q collides with %s (characters outside A-Z a-z 0-9 _ - become -)", s.ID, other)
				continue
			}
			ids[s.ID] = path
			r.servers = append(r.servers, s)
		}
	}
	if !found {
		r.problems = append(r.problems, &Problem{Pos: Position{File: file}, Msg: "no mcpServers or servers object"})
	}
	return r
}

// jsonID turns an entry name into a server id: characters outside the id
// alphabet become '-'.
func jsonID(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !isIDByte(c) {
			b[i] = '-'
		}
	}
	// Multi-byte runes became several dashes; that is still unambiguous
	// enough, and keeps the mapping simple to explain.
	return string(b)
}

// jsonServer decodes one entry; enabled is false for "disabled": true.
func (r *fileResult) jsonServer(path string, m map[string]any) (s Server, enabled bool) {
	if v, ok := m["disabled"]; ok {
		if d, ok := r.boolean(keyPath(path, "disabled"), v); ok && d {
			return Server{}, false
		}
	}
	s = Server{Source: Position{File: r.file, Line: r.lines[path], Field: path}}
	for _, k := range r.sortedKeys(path, m) {
		v, f := m[k], keyPath(path, k)
		switch k {
		case "command", "args", "env", "allow_env", "cwd", "url", "headers", "allow_local_endpoint", "allow_cross_origin_redirects":
			r.launchField(&s, k, f, v)
		case "description":
			s.Description, _ = r.str(f, v)
		case "type":
			if t, ok := r.str(f, v); ok {
				tr, known := jsonTypes[t]
				if !known {
					r.errorf(f, "unknown type %q (want stdio, http, streamable-http, streamableHttp, sse, ws or websocket)", t)
					continue
				}
				s.Transport = tr
			}
		case "timeout":
			// Milliseconds, as in the clients that have this key.
			n, ok := v.(json.Number)
			if !ok {
				r.errorf(f, "must be a number of milliseconds, not %s", r.typeName(v))
				continue
			}
			ms, err := n.Float64()
			if err != nil || ms <= 0 || ms > float64(1<<62/time.Millisecond) {
				r.errorf(f, "must be a positive number of milliseconds, not %s", n)
				continue
			}
			s.Timeout = time.Duration(ms * float64(time.Millisecond))
		case "alwaysAllow", "autoApprove":
			r.strList(f, v) // checked, then ignored: see jsonServerKeys
		case "disabled":
			// handled above
		default:
			r.errorf(f, "%s", unknownKey(k, jsonServerKeys))
		}
	}
	return s, true
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
			kp := keyPath(path, k)
			line := lineAt(w.starts, int(w.dec.InputOffset())-1)
			v, err := w.value(kp)
			if err != nil {
				return nil, err
			}
			if _, dup := m[k]; dup {
				w.r.problems = append(w.r.problems, &Problem{
					Pos:   Position{File: w.r.file, Line: line},
					Field: kp,
					Msg:   fmt.Sprintf("duplicate key (first on line %d); the first one is used", w.r.lines[kp]),
				})
				continue
			}
			w.r.lines[kp] = line
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
			v, err := w.value(indexPath(path, i))
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
