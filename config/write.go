package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// ServerTOML returns s as one [[mcp_servers]] table of a native config
// file: every field s sets, in the order of the server's table of fields,
// so that a field added to the table is written too. The transport is left
// out when it is the one command or url implies. What it returns loads back
// as s (see [Server.Equal]); Source is not written.
//
// A map (env, headers) is an inline table when it fits on one line of 100
// characters, else a [mcp_servers.KEY] sub-table after the other keys.
func ServerTOML(s Server) []byte {
	var b, sub bytes.Buffer
	b.WriteString("[[mcp_servers]]\n")
	for _, f := range serverFields {
		if f.In&decode.TOML == 0 || !f.IsSet(&s) {
			continue
		}
		v := f.Get(&s)
		if t, ok := v.(Transport); ok && t == inferTransport(&Server{Command: s.Command, URL: s.URL}) {
			continue
		}
		if m, ok := v.(map[string]string); ok {
			line := tomlKey(f.Key) + " = " + inlineTable(m)
			if utf8.RuneCountInString(line) <= 100 {
				b.WriteString(line + "\n")
				continue
			}
			fmt.Fprintf(&sub, "\n[mcp_servers.%s]\n", tomlKey(f.Key))
			for _, k := range slices.Sorted(mapKeys(m)) {
				sub.WriteString(tomlKey(k) + " = " + tomlString(m[k]) + "\n")
			}
			continue
		}
		b.WriteString(tomlKey(f.Key) + " = " + tomlValue(v) + "\n")
	}
	b.Write(sub.Bytes())
	return b.Bytes()
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// tomlValue writes one value of a server field in TOML.
func tomlValue(v any) string {
	switch x := v.(type) {
	case string:
		return tomlString(x)
	case Transport:
		return tomlString(string(x))
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case time.Duration:
		return tomlString(decode.FormatDuration(x))
	case []string:
		parts := make([]string, len(x))
		for i, s := range x {
			parts[i] = tomlString(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]string:
		return inlineTable(x)
	case *OAuth:
		return oauthTOML(x)
	case *RegistrySource:
		return registrySourceTOML(x)
	}
	// A kind the table gained that this writer does not know: a test
	// (TestServerTOMLEveryField) fails before it reaches a user.
	panic(fmt.Sprintf("config: no TOML form for %T", v))
}

func inlineTable(m map[string]string) string {
	if len(m) == 0 {
		return "{}"
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(mapKeys(m)) {
		parts = append(parts, tomlKey(k)+" = "+tomlString(m[k]))
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// tomlKey writes a key bare when TOML allows it, else quoted.
func tomlKey(k string) string {
	if decode.IsBareKey(k) {
		return k
	}
	return tomlString(k)
}

// tomlString writes a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// An Edit changes the servers and endpoints of one native (TOML) config
// file and keeps the rest of its text as it was: comments, order, spacing,
// other tables. A new server is appended as a [[mcp_servers]] table (an
// endpoint as an [[endpoints]] table, [Edit.AddEndpoint]); a replaced one
// is rewritten where it stood, under the comment lines above it; a removed
// one is cut out with its sub-tables and the comment lines just above it
// (those that touch its header). Nothing is written until [Edit.Write],
// which first checks that the new text loads as the same configuration
// with only those servers and endpoints changed.
type Edit struct {
	// File is the file as named; Write follows a symbolic link to the
	// file it names, so a config kept in a dotfiles repository stays
	// there.
	File string

	old, text []byte
	exists    bool
	home      string
	servers   []Server   // the file's servers as the edits leave them
	endpoints []Endpoint // the file's endpoints as the edits leave them
	appended  []byte     // the text Add appended, for a dry run
}

// ErrNotTOML is returned by [OpenEdit] for a file that is not in the
// native format: an mcpServers JSON file is another client's, and is not
// rewritten.
var ErrNotTOML = errors.New("not a TOML config file")

// OpenEdit reads file for editing; a file that does not exist is an empty
// one, created by Write. home is what ~ stands for in its paths. It fails
// for a file that cannot be read, that is JSON, or that is not valid TOML;
// problems of another kind (a bad value) are reported by [Edit.Check],
// which refuses to write a file that has any.
func OpenEdit(file, home string) (*Edit, error) {
	e := &Edit{File: file, home: home}
	data, err := ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return e, nil
	case err != nil:
		return nil, err
	}
	if isJSON(file, data) {
		return nil, fmt.Errorf("%s: %w (it is mcpServers JSON; name a .toml file to write to)", file, ErrNotTOML)
	}
	r := decodeTOML(file, data, home)
	if !r.read || syntaxProblem(data) {
		return nil, joinProblems(r.problems())
	}
	e.old, e.text, e.exists = data, slices.Clone(data), true
	e.servers = r.servers
	e.endpoints = r.endpoints
	if _, err := e.tables(); err != nil {
		return nil, err
	}
	if _, err := e.endpointTables(); err != nil {
		return nil, err
	}
	return e, nil
}

// syntaxProblem reports whether data is not valid TOML at all.
func syntaxProblem(data []byte) bool {
	var doc map[string]any
	return toml.Unmarshal(data, &doc) != nil
}

// Servers returns the file's servers as the edits so far leave them.
func (e *Edit) Servers() []Server { return slices.Clone(e.servers) }

// Has reports whether the file declares server id.
func (e *Edit) Has(id string) bool { return e.index(id) >= 0 }

func (e *Edit) index(id string) int {
	return slices.IndexFunc(e.servers, func(s Server) bool { return s.ID == id })
}

// Content returns the file's text as the edits leave it.
func (e *Edit) Content() []byte { return e.text }

// Appended returns the text that Add appended, for showing a dry run.
func (e *Edit) Appended() []byte { return e.appended }

// Changed reports whether the edits changed the text.
func (e *Edit) Changed() bool { return !bytes.Equal(e.old, e.text) }

// Exists reports whether the file existed when it was opened.
func (e *Edit) Exists() bool { return e.exists }

// Add appends s as a new [[mcp_servers]] table, under comment (each line
// gets "# "; "" for none). It fails when the file already declares s.ID.
func (e *Edit) Add(s Server, comment string) error {
	if e.Has(s.ID) {
		return fmt.Errorf("%s already declares server %q", e.File, s.ID)
	}
	e.appendTable(comment, ServerTOML(s))
	s.Source = Position{}
	e.servers = append(e.servers, s)
	return nil
}

// appendTable appends the table body at the end of the text, after a blank
// line, under comment (each line gets "# "; "" for none).
func (e *Edit) appendTable(comment string, body []byte) {
	var b bytes.Buffer
	if len(e.text) > 0 {
		if !bytes.HasSuffix(e.text, []byte("\n")) {
			b.WriteByte('\n')
		}
		if !bytes.HasSuffix(e.text, []byte("\n\n")) {
			b.WriteByte('\n')
		}
	}
	if comment != "" {
		for _, l := range strings.Split(comment, "\n") {
			b.WriteString(strings.TrimRight("# "+l, " ") + "\n")
		}
	}
	b.Write(body)
	e.text = append(e.text, b.Bytes()...)
	e.appended = append(e.appended, b.Bytes()...)
}

// Replace rewrites the table of server s.ID where it stands; the comment
// lines above it stay.
func (e *Edit) Replace(s Server) error {
	i := e.index(s.ID)
	if i < 0 {
		return fmt.Errorf("%s declares no server %q", e.File, s.ID)
	}
	spans, err := e.tables()
	if err != nil {
		return err
	}
	e.replaceSpan(spans[i], ServerTOML(s))
	s.Source = Position{}
	e.servers[i] = s
	return nil
}

// replaceSpan puts body in the place of the table at sp, keeping the
// blank lines that ended it.
func (e *Edit) replaceSpan(sp span, body []byte) {
	old := e.text[sp.start:sp.end]
	trail := old[len(bytes.TrimRight(old, "\n")):]
	if len(trail) > 1 {
		body = append(body, trail[1:]...)
	}
	e.text = slices.Concat(e.text[:sp.start], body, e.text[sp.end:])
}

// Remove cuts out the table of server id, with the comment lines just
// above its header.
func (e *Edit) Remove(id string) error {
	i := e.index(id)
	if i < 0 {
		return fmt.Errorf("%s declares no server %q", e.File, id)
	}
	spans, err := e.tables()
	if err != nil {
		return err
	}
	sp := spans[i]
	e.text = slices.Concat(e.text[:sp.comments], e.text[sp.end:])
	e.servers = slices.Delete(e.servers, i, i+1)
	return nil
}

// A span is where one [[mcp_servers]] (or [[endpoints]]) table is in the text: its header
// line starts at start, the comment lines that touch it from above at
// comments, and it ends (with its sub-tables and trailing blank lines) at
// end, where the next table or the comment lines above it begin.
type span struct{ comments, start, end int }

// tables finds the span of every [[mcp_servers]] table, in order. It fails
// when the file declares servers in a form an edit cannot keep: an inline
// array (mcp_servers = [...]) or tables out of step with the servers read.
func (e *Edit) tables() ([]span, error) {
	spans, err := e.arrayTables("mcp_servers")
	if err != nil {
		return nil, err
	}
	if len(spans) != len(e.servers) {
		return nil, fmt.Errorf("%s: found %d [[mcp_servers]] tables for %d servers; fix the file first (switchboard validate)", e.File, len(spans), len(e.servers))
	}
	return spans, nil
}

// arrayTables finds the span of every [[key]] table at the top level, in
// order; it fails when the file writes key as an inline array.
func (e *Edit) arrayTables(key string) ([]span, error) {
	type header struct {
		line  int // offset of the start of its line
		key   []string
		array bool
	}
	var hs []header
	var p unstable.Parser
	p.Reset(e.text)
	inline := false
	for p.NextExpression() {
		x := p.Expression()
		switch x.Kind {
		case unstable.Table, unstable.ArrayTable:
			h := header{array: x.Kind == unstable.ArrayTable, line: -1}
			it := x.Key()
			for it.Next() {
				k := it.Node()
				if h.line < 0 {
					h.line = lineStart(e.text, int(k.Raw.Offset))
				}
				h.key = append(h.key, string(k.Data))
			}
			hs = append(hs, h)
		case unstable.KeyValue:
			if len(hs) == 0 {
				it := x.Key()
				if it.Next() && string(it.Node().Data) == key {
					inline = true
				}
			}
		}
	}
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("%s: %v", e.File, err)
	}
	if inline {
		return nil, fmt.Errorf("%s writes %s as an inline array; rewrite it as [[%s]] tables to let switchboard edit it", e.File, key, key)
	}
	var spans []span
	for i, h := range hs {
		if !h.array || len(h.key) != 1 || h.key[0] != key {
			continue
		}
		end := len(e.text)
		for _, n := range hs[i+1:] {
			if n.key[0] != key || (n.array && len(n.key) == 1) {
				end = commentBlock(e.text, n.line)
				break
			}
		}
		spans = append(spans, span{comments: commentBlock(e.text, h.line), start: h.line, end: end})
	}
	return spans, nil
}

// lineStart returns the offset of the start of the line holding off.
func lineStart(text []byte, off int) int {
	return bytes.LastIndexByte(text[:off], '\n') + 1
}

// commentBlock returns where the comment lines that directly precede the
// line starting at off begin (off when there are none). Comment lines at
// the very top of the file are the file's own, not the table's.
func commentBlock(text []byte, off int) int {
	start := off
	for start > 0 {
		prev := lineStart(text, start-1)
		if !bytes.HasPrefix(bytes.TrimLeft(text[prev:start], " \t"), []byte("#")) {
			break
		}
		start = prev
	}
	if start == 0 {
		return off
	}
	return start
}

// Check loads the edited text as the file alone and reports, as
// [*Problem]s naming the file, anything wrong with it; and it fails if
// the text does not read back as the file's other content unchanged and
// its servers as the edits made them. Write calls it.
func (e *Edit) Check() error {
	r := decodeTOML(e.File, e.text, e.home)
	if ps := r.problems(); len(ps) > 0 {
		return joinProblems(ps)
	}
	c := &Config{Servers: r.servers}
	c.setDefaults()
	v := &validator{files: map[string]*fileResult{e.File: r}, noURLPolicy: true}
	v.config(c)
	if len(v.problems) > 0 {
		return joinProblems(v.problems)
	}
	if len(r.servers) != len(e.servers) {
		return fmt.Errorf("%s: the edited text declares %d servers, not %d", e.File, len(r.servers), len(e.servers))
	}
	for i := range r.servers {
		if !r.servers[i].Equal(e.servers[i]) {
			return fmt.Errorf("%s: server %q does not read back as written", e.File, e.servers[i].ID)
		}
	}
	if err := e.checkEndpoints(r.endpoints); err != nil {
		return err
	}
	var before, after map[string]any
	if err := toml.Unmarshal(e.old, &before); err != nil {
		return fmt.Errorf("%s: %v", e.File, err)
	}
	if err := toml.Unmarshal(e.text, &after); err != nil {
		return fmt.Errorf("%s: %v", e.File, err)
	}
	delete(before, "mcp_servers")
	delete(after, "mcp_servers")
	delete(before, "endpoints")
	delete(after, "endpoints")
	if len(before) == 0 && len(after) == 0 {
		return nil
	}
	if !reflect.DeepEqual(before, after) {
		return fmt.Errorf("%s: the edit would change more than its servers and endpoints", e.File)
	}
	return nil
}

// Write checks the edit ([Edit.Check]), then replaces the file: the
// previous text is first copied to FILE.bak (returned; "" when the file is
// new), and the new text is written to a temporary file in the same folder,
// synced and renamed over the file, so a crash leaves the old or the new
// file, never half of one. The file keeps its permissions; a new one is
// created 0600 in a folder created 0700. A file changed by someone else
// since OpenEdit read it is not overwritten. Two writers at the same moment
// can still lose one change: there is no lock.
func (e *Edit) Write() (backup string, err error) {
	if err := e.Check(); err != nil {
		return "", err
	}
	path := e.File
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	perm := fs.FileMode(0o600)
	cur, err := ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if e.exists {
			return "", fmt.Errorf("%s was removed since it was read; run the command again", e.File)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", err
		}
	case err != nil:
		return "", err
	default:
		if !e.exists || !bytes.Equal(cur, e.old) {
			return "", fmt.Errorf("%s changed since it was read; run the command again", e.File)
		}
		if st, err := os.Stat(path); err == nil {
			perm = st.Mode().Perm()
		}
		backup = path + ".bak"
		if err := writeAtomic(backup, cur, perm); err != nil {
			return "", fmt.Errorf("backing up %s: %w", e.File, err)
		}
	}
	if err := writeAtomic(path, e.text, perm); err != nil {
		return backup, err
	}
	e.old, e.exists = slices.Clone(e.text), true
	e.appended = nil
	return backup, nil
}

// writeAtomic writes data to path through a temporary file in its folder.
func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing left to remove
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
