// Package toolpin pins tool definitions: it gives each definition a digest,
// so that a definition that changes after it was trusted — the "rug pull":
// a list_changed, a restart or an npx upgrade that rewrites a description
// the user approved — is seen, held back and shown as a diff until a
// person approves it.
//
// A [Definition] is the part of a tool that reaches a model or decides what
// a call may carry: its name, title, description, input and output schemas
// and annotations. [Of] takes it from a go-sdk tool in a canonical form
// (object keys sorted, insignificant space removed), so that the same
// definition has the same [Definition.Digest] whatever order a server
// writes its keys in, and any other change — one character of a
// description, a new enum value, a changed readOnlyHint — changes it.
// [Diff] shows two definitions' difference line by line.
//
// A [Pin] is what a state store keeps per (server, tool): the trusted
// definition and, when the server now declares another, the held one
// waiting for approval. What is done with a held tool — not offered on any
// endpoint, its calls refused with an error naming the change — is the
// host's (host/pin.go); the [Mode] is a server's setting:
//
//   - off: nothing is pinned;
//   - first-use: the first definition seen is trusted, and a later one
//     that differs is held;
//   - approve: nothing is offered until a person approves it, and a
//     changed definition is held.
//
// The package has no state and no side effects; it is safe for concurrent
// use.
package toolpin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Mode is a server's pinning setting (config: pin).
type Mode string

// The pinning modes.
const (
	// Off pins nothing (the default).
	Off Mode = "off"
	// FirstUse trusts the first definition seen, and holds any later one
	// that differs from it until a person approves it.
	FirstUse Mode = "first-use"
	// Approve offers no tool until a person has approved its definition,
	// and holds a changed one likewise.
	Approve Mode = "approve"
)

// Definition is a tool's definition in canonical form: what reaches a
// model or bounds a call.
type Definition struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
}

// Of returns t's definition in canonical form. A schema or annotations
// that do not encode (which a listed tool's cannot) are kept as their
// error's text, so that they still count in the digest.
func Of(t *mcp.Tool) Definition {
	d := Definition{Name: t.Name, Title: t.Title, Description: t.Description}
	d.InputSchema = canonical(t.InputSchema)
	d.OutputSchema = canonical(t.OutputSchema)
	if t.Annotations != nil {
		d.Annotations = canonical(t.Annotations)
	}
	return d
}

// canonical encodes v with object keys sorted and no insignificant space;
// nil for nil (a JSON null included).
func canonical(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	raw, err := encode(v)
	if err != nil {
		raw, _ = encode(map[string]string{"unencodable": err.Error()})
		return raw
	}
	if bytes.Equal(raw, []byte("null")) {
		return nil
	}
	// Decoding into any and encoding again sorts object keys (encoding/json
	// writes a map's keys in order); UseNumber keeps numbers as written.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return raw
	}
	out, err := encode(generic)
	if err != nil {
		return raw
	}
	return out
}

// encode is json.Marshal without HTML escaping: <, > and & stay as they
// are, so that a definition reads in a diff as the server wrote it.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// JSON returns d's canonical encoding, the text its digest is taken of.
func (d Definition) JSON() json.RawMessage {
	raw, _ := encode(d) // strings and canonical raw JSON: cannot fail
	return raw
}

// Digest returns "sha256:" and the hex SHA-256 of d's canonical encoding.
func (d Definition) Digest() string {
	sum := sha256.Sum256(d.JSON())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Parse reads a definition in the form [Definition.JSON] writes, and
// canonicalises it (an imported file may have been reformatted).
func Parse(raw json.RawMessage) (Definition, error) {
	var d Definition
	if err := json.Unmarshal(raw, &d); err != nil {
		return Definition{}, fmt.Errorf("definition: %w", err)
	}
	if d.Name == "" {
		return Definition{}, fmt.Errorf("definition: no name")
	}
	d.InputSchema = canonicalRaw(d.InputSchema)
	d.OutputSchema = canonicalRaw(d.OutputSchema)
	d.Annotations = canonicalRaw(d.Annotations)
	return d, nil
}

func canonicalRaw(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	return canonical(raw)
}

// Changed names the fields in which a and b differ, in the order of
// Definition's fields ("description", "inputSchema", …).
func Changed(a, b Definition) []string {
	var out []string
	if a.Name != b.Name {
		out = append(out, "name")
	}
	if a.Title != b.Title {
		out = append(out, "title")
	}
	if a.Description != b.Description {
		out = append(out, "description")
	}
	if !bytes.Equal(a.InputSchema, b.InputSchema) {
		out = append(out, "inputSchema")
	}
	if !bytes.Equal(a.OutputSchema, b.OutputSchema) {
		out = append(out, "outputSchema")
	}
	if !bytes.Equal(a.Annotations, b.Annotations) {
		out = append(out, "annotations")
	}
	return out
}

// Pin is what a state store keeps for one tool of one server.
type Pin struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Digest and Definition are the trusted definition's; Digest is ""
	// when none is trusted yet (a tool of an approve-mode server that
	// nobody has approved).
	Digest     string          `json:"digest,omitempty"`
	Definition json.RawMessage `json:"definition,omitempty"`
	// PinnedAt is when it was trusted; PinnedBy how: FirstUse, "import",
	// or who approved it.
	PinnedAt time.Time `json:"pinnedAt,omitzero"`
	PinnedBy string    `json:"pinnedBy,omitempty"`
	// Held is the definition the server declares now and that is held
	// back until a person approves it; nil when none is.
	Held *Held `json:"held,omitempty"`
}

// Held is a definition held back for approval.
type Held struct {
	Digest     string          `json:"digest"`
	Definition json.RawMessage `json:"definition"`
	// Since is when this definition was first held.
	Since time.Time `json:"since"`
	// Reason says why: changed from its pin (naming the fields), new
	// under approve, or the description scanner's findings.
	Reason string `json:"reason"`
}

// PinnedByFirstUse and PinnedByImport are Pin.PinnedBy's values for a pin
// no person approved.
const (
	PinnedByFirstUse = "first-use"
	PinnedByImport   = "import"
)

// Export is the file `switchboard tools pins export` writes and import
// reads: the trusted definitions, never the held ones (what is trusted
// moves between machines; what waits for approval is each machine's own).
type Export struct {
	// Version is ExportVersion.
	Version int   `json:"version"`
	Pins    []Pin `json:"pins"`
}

// ExportVersion is the version of the export format.
const ExportVersion = 1

// Check reports whether p is a trusted pin an import may take: it names a
// server and a tool, and its digest is its definition's. The error names
// the server and tool.
func (p Pin) Check() error {
	if p.Server == "" || p.Tool == "" {
		return fmt.Errorf("pin of %q/%q: server and tool are required", p.Server, p.Tool)
	}
	d, err := Parse(p.Definition)
	if err != nil {
		return fmt.Errorf("pin of %s/%s: %w", p.Server, p.Tool, err)
	}
	if d.Name != p.Tool {
		return fmt.Errorf("pin of %s/%s: its definition is of tool %q", p.Server, p.Tool, d.Name)
	}
	if got := d.Digest(); got != p.Digest {
		return fmt.Errorf("pin of %s/%s: digest %s is not its definition's (%s): the file was edited or is damaged", p.Server, p.Tool, p.Digest, got)
	}
	return nil
}

// maxDiffLines bounds a diff's lines: a definition of megabytes would
// otherwise cost quadratic time to compare.
const maxDiffLines = 2000

// Diff returns a line diff from a to b of their indented encodings, each
// line prefixed "  " (both), "- " (a only) or "+ " (b only); "" when they
// are equal. A zero a (no name) stands for no definition: every line of
// b is added. Definitions longer than 2,000 lines are shown whole, removed
// then added.
func Diff(a, b Definition) string {
	var la []string
	if a.Name != "" {
		la = lines(a)
	}
	lb := lines(b)
	if strings.Join(la, "\n") == strings.Join(lb, "\n") {
		return ""
	}
	var out strings.Builder
	if len(la) > maxDiffLines || len(lb) > maxDiffLines {
		for _, l := range la {
			out.WriteString("- " + l + "\n")
		}
		for _, l := range lb {
			out.WriteString("+ " + l + "\n")
		}
		return out.String()
	}
	// Longest common subsequence, by dynamic programming from the end.
	n, m := len(la), len(lb)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if la[i] == lb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && la[i] == lb[j]:
			out.WriteString("  " + la[i] + "\n")
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			out.WriteString("- " + la[i] + "\n")
			i++
		default:
			out.WriteString("+ " + lb[j] + "\n")
			j++
		}
	}
	return out.String()
}

// lines is d's indented encoding, one line per element.
func lines(d Definition) []string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, d.JSON(), "", "  "); err != nil {
		return []string{string(d.JSON())}
	}
	return strings.Split(buf.String(), "\n")
}
