package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/internal/userfile"
)

// ConnectFile returns the file where client keeps the user's own MCP
// servers, the one `switchboard connect` writes: of [ClientFiles], the
// first of that client that is not a project's (Claude Desktop's
// claude_desktop_config.json, Claude Code's ~/.claude.json, Cursor's
// ~/.cursor/mcp.json, VS Code's user mcp.json). ok is false for a client
// that is not one of [Clients].
func ConnectFile(client string, o *ClientOptions) (f ClientFile, ok bool) {
	for _, f := range ClientFiles(o) {
		if f.Client == client && !f.Project {
			return f, true
		}
	}
	return ClientFile{}, false
}

// A ClientEdit sets one server entry in another client's file, keeping
// the rest of its text as it was (its order, spacing, comments, and every
// key Switchboard does not know: ~/.claude.json holds all of Claude Code's
// state). Nothing is written until [ClientEdit.Write].
type ClientEdit struct {
	File ClientFile
	// Name is the entry's name; Field its field path in the file
	// (mcpServers.switchboard).
	Name, Field string
	// Old is the entry's text before the edit, nil when it is new; New is
	// its text after.
	Old, New []byte
	// Input is the text of the input AddInput added, nil when none was
	// (or the file had it already).
	Input []byte

	old, text []byte
	exists    bool
}

// EditClientEntry sets entry (marshalled as JSON) as the server entry name
// of f's first container, creating the container, and the file, when
// missing. It fails, naming the file (and line where known), when the file
// cannot be read, is not JSON (comments and trailing commas, which VS Code
// allows, are), or has something else than an object where the container
// or an object on the way to it should be.
func EditClientEntry(f ClientFile, name string, entry any) (*ClientEdit, error) {
	if len(f.Containers) == 0 {
		return nil, fmt.Errorf("%s: no place for servers in it", f.Path)
	}
	keys := append(slices.Clone(f.Containers[0]), name)
	field := ""
	for _, k := range keys {
		field = decode.KeyPath(field, k)
	}
	c := &ClientEdit{File: f, Name: name, Field: field}
	data, err := userfile.Read(f.Path, maxClientFileBytes, "another client's configuration")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		v := any(entry)
		for i := len(keys) - 1; i >= 0; i-- {
			v = map[string]any{keys[i]: v}
		}
		text, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return nil, err
		}
		c.text = append(text, '\n')
		c.New = marshalEntry(entry, strings.Repeat("  ", len(keys)-1))
		return c, nil
	case err != nil:
		return nil, err
	}
	c.old, c.exists = data, true
	// Read as import reads it: the same refusal of a file that is not
	// JSON, with its line.
	if _, err := ReadClientFile(f, ""); err != nil {
		return nil, err
	}
	std := standardJSON(data)
	obj, err := scanObject(std, skipSpace(std, 0))
	if err != nil {
		return nil, fmt.Errorf("%s: the top level must be an object", f.Path)
	}
	path := ""
	for i, k := range keys {
		m := obj.member(k)
		last := i == len(keys)-1
		if m == nil {
			// Insert what is missing from here down.
			v := any(entry)
			for j := len(keys) - 1; j > i; j-- {
				v = map[string]any{keys[j]: v}
			}
			ind := obj.memberIndent(std)
			val := marshalEntry(v, ind)
			c.New = marshalEntry(entry, ind+strings.Repeat("  ", len(keys)-1-i))
			member := []byte(ind + quoteJSON(k) + ": " + string(val))
			c.text = insertMember(data, std, obj, member)
			return c, nil
		}
		path = decode.KeyPath(path, k)
		if last {
			ind := lineIndent(std, m.keyStart)
			c.Old = slices.Clone(data[m.valStart:m.valEnd])
			c.New = marshalEntry(entry, ind)
			c.text = slices.Concat(data[:m.valStart], c.New, data[m.valEnd:])
			return c, nil
		}
		if std[m.valStart] != '{' {
			return nil, &Problem{Pos: Position{File: f.Path, Line: lineAt(lineStarts(data), m.valStart)}, Field: path, Msg: "must be an object, to hold the servers"}
		}
		if obj, err = scanObject(std, m.valStart); err != nil {
			return nil, fmt.Errorf("%s: %s: %v", f.Path, path, err)
		}
	}
	panic("unreachable")
}

// AddInput adds input (marshalled as JSON), an input variable of VS
// Code's (a value it asks its user for once and keeps in its secret
// storage), to the top-level "inputs" array of the edited text, creating
// the array when missing; an input of the same id already there is left
// as it is.
func (c *ClientEdit) AddInput(id string, input any) error {
	std := standardJSON(c.text)
	top, err := scanObject(std, skipSpace(std, 0))
	if err != nil {
		return fmt.Errorf("%s: the top level must be an object", c.File.Path)
	}
	m := top.member("inputs")
	if m == nil {
		ind := top.memberIndent(std)
		c.Input = marshalEntry(input, ind+"  ")
		member := []byte(ind + `"inputs": [` + "\n" + ind + "  " + string(c.Input) + "\n" + ind + "]")
		c.text = insertMember(c.text, std, top, member)
		return nil
	}
	if std[m.valStart] != '[' {
		return &Problem{Pos: Position{File: c.File.Path, Line: lineAt(lineStarts(c.text), m.valStart)}, Field: "inputs", Msg: "must be an array"}
	}
	var have []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(std[m.valStart:m.valEnd], &have); err != nil {
		return &Problem{Pos: Position{File: c.File.Path, Line: lineAt(lineStarts(c.text), m.valStart)}, Field: "inputs", Msg: "must be an array of objects"}
	}
	for _, h := range have {
		if h.ID == id {
			return nil
		}
	}
	// The array's elements: where the last ends, or none.
	last, end := -1, m.valStart+1
	for i := skipSpace(std, m.valStart+1); i < m.valEnd-1; i = skipSpace(std, i) {
		if std[i] == ',' {
			i++
			continue
		}
		e, err := skipValue(std, i)
		if err != nil {
			return err
		}
		last, end, i = i, e, e
	}
	if last < 0 {
		ind := lineIndent(std, m.keyStart) + "  "
		c.Input = marshalEntry(input, ind)
		c.text = slices.Concat(c.text[:m.valStart+1], []byte("\n"+ind), c.Input, []byte("\n"+lineIndent(std, m.keyStart)), c.text[m.valEnd-1:])
		return nil
	}
	ind := lineIndent(std, last)
	if lineStart(std, last) == lineStart(std, m.valStart) {
		ind = lineIndent(std, m.keyStart) + "  "
	}
	c.Input = marshalEntry(input, ind)
	c.text = slices.Concat(c.text[:end], []byte(",\n"+ind), c.Input, c.text[end:])
	return nil
}

// insertMember inserts member (its text, indented) as the last member of
// obj, scanned from std, the standardJSON of text.
func insertMember(text, std []byte, obj jsonObject, member []byte) []byte {
	if len(obj.members) == 0 {
		closeInd := lineIndent(std, obj.open)
		return slices.Concat(text[:obj.open+1], []byte("\n"), member, []byte("\n"+closeInd), text[obj.close:])
	}
	end := obj.members[len(obj.members)-1].valEnd
	return slices.Concat(text[:end], []byte(",\n"), member, text[end:])
}

// Content returns the file's text as the edit leaves it.
func (c *ClientEdit) Content() []byte { return c.text }

// Exists reports whether the file existed when it was read.
func (c *ClientEdit) Exists() bool { return c.exists }

// Changed reports whether the edit changes the file.
func (c *ClientEdit) Changed() bool { return !c.exists || !bytes.Equal(c.old, c.text) }

// Write replaces the file as [Edit.Write] does: the previous text copied
// to FILE.bak first (returned; "" when the file is new), the new one
// written through a temporary file and renamed, the file's permissions
// kept (a new file 0600 in a folder created 0700), and a file changed
// since it was read left alone. The new text is first checked to be JSON
// that has the entry as set.
func (c *ClientEdit) Write() (backup string, err error) {
	var doc any
	if err := json.Unmarshal(standardJSON(c.text), &doc); err != nil {
		return "", fmt.Errorf("%s: the edit would not be JSON (%v); nothing written", c.File.Path, err)
	}
	path := c.File.Path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	perm := fs.FileMode(0o600)
	cur, err := userfile.Read(path, maxClientFileBytes, "another client's configuration")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if c.exists {
			return "", fmt.Errorf("%s was removed since it was read; run the command again", c.File.Path)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", err
		}
	case err != nil:
		return "", err
	default:
		if !c.exists || !bytes.Equal(cur, c.old) {
			return "", fmt.Errorf("%s changed since it was read (is the client running and writing it?); run the command again", c.File.Path)
		}
		if st, err := os.Stat(path); err == nil {
			perm = st.Mode().Perm()
		}
		backup = path + ".bak"
		if err := writeAtomic(backup, cur, perm); err != nil {
			return "", fmt.Errorf("backing up %s: %w", c.File.Path, err)
		}
	}
	if err := writeAtomic(path, c.text, perm); err != nil {
		return backup, err
	}
	c.old, c.exists = slices.Clone(c.text), true
	return backup, nil
}

// marshalEntry writes v as indented JSON whose lines after the first
// begin with indent.
func marshalEntry(v any, indent string) []byte {
	b, err := json.MarshalIndent(v, indent, "  ")
	if err != nil {
		panic(err) // the entries are strings, lists and maps of them
	}
	return b
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// jsonObject is where an object and its members are in a JSON text.
type jsonObject struct {
	open, close int // the offsets of { and }
	members     []jsonMember
}

type jsonMember struct {
	key                        string
	keyStart, valStart, valEnd int
}

func (o *jsonObject) member(key string) *jsonMember {
	// The last of a key given twice is the one JSON readers keep.
	for i := len(o.members) - 1; i >= 0; i-- {
		if o.members[i].key == key {
			return &o.members[i]
		}
	}
	return nil
}

// memberIndent is the indentation of o's members: that of its first
// member's line, else two spaces more than the line o opens on.
func (o *jsonObject) memberIndent(data []byte) string {
	if len(o.members) > 0 {
		if ind := lineIndent(data, o.members[0].keyStart); lineStart(data, o.members[0].keyStart) != lineStart(data, o.open) {
			return ind
		}
	}
	return lineIndent(data, o.open) + "  "
}

// lineIndent returns the spaces and tabs that begin the line holding off.
func lineIndent(data []byte, off int) string {
	start := lineStart(data, off)
	end := start
	for end < len(data) && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return string(data[start:end])
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r' || data[i] == 0xef || data[i] == 0xbb || data[i] == 0xbf) {
		i++
	}
	return i
}

// scanObject scans the object at data[at] of a valid JSON text (comments
// and trailing commas blanked: standardJSON).
func scanObject(data []byte, at int) (jsonObject, error) {
	if at >= len(data) || data[at] != '{' {
		return jsonObject{}, errors.New("not an object")
	}
	o := jsonObject{open: at}
	i := skipSpace(data, at+1)
	for i < len(data) && data[i] != '}' {
		if data[i] == ',' {
			i = skipSpace(data, i+1)
			continue
		}
		ks := i
		ke, err := skipValue(data, i)
		if err != nil {
			return o, err
		}
		var key string
		if err := json.Unmarshal(data[ks:ke], &key); err != nil {
			return o, err
		}
		i = skipSpace(data, ke)
		if i >= len(data) || data[i] != ':' {
			return o, errors.New("expected :")
		}
		vs := skipSpace(data, i+1)
		ve, err := skipValue(data, vs)
		if err != nil {
			return o, err
		}
		o.members = append(o.members, jsonMember{key: key, keyStart: ks, valStart: vs, valEnd: ve})
		i = skipSpace(data, ve)
	}
	if i >= len(data) {
		return o, errors.New("unterminated object")
	}
	o.close = i
	return o, nil
}

// skipValue returns the offset just after the JSON value at data[i].
func skipValue(data []byte, i int) (int, error) {
	if i >= len(data) {
		return i, errors.New("unexpected end")
	}
	switch data[i] {
	case '"':
		for j := i + 1; j < len(data); j++ {
			switch data[j] {
			case '\\':
				j++
			case '"':
				return j + 1, nil
			}
		}
		return len(data), errors.New("unterminated string")
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, err := skipValue(data, j)
				if err != nil {
					return end, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return len(data), errors.New("unterminated")
	}
	j := i
	for j < len(data) && !strings.ContainsRune(" \t\r\n,}]", rune(data[j])) {
		j++
	}
	return j, nil
}
