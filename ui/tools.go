package ui

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/agent"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/schema"
)

func (u *UI) toolRoutes() {
	u.mux.HandleFunc("GET /tools", u.toolsPage)
	u.mux.HandleFunc("GET /tools/{name}", u.toolPage)
	u.mux.HandleFunc("POST /tools/{name}/call", u.callTool)
	u.mux.HandleFunc("POST /tools/{name}/history/{id}", u.rerunTool)
	u.mux.HandleFunc("GET /tools/{name}/ask", u.askPoll)
	u.mux.HandleFunc("POST /tools/{name}/ask/{id}", u.askAnswer)
}

type toolsPageData struct {
	chrome
	Q, Server string
	Servers   []string
	Tools     []host.Tool
	Held      int // tool definitions held for approval (/tools/changes)
}

func (u *UI) toolsPage(w http.ResponseWriter, r *http.Request) {
	h := u.hostOr(w)
	if h == nil {
		return
	}
	q := r.URL.Query()
	p := toolsPageData{chrome: chrome{"Tools", "tools"}, Q: q.Get("q"), Server: q.Get("server")}
	tools := h.Tools()
	for _, t := range tools {
		if !slices.Contains(p.Servers, t.Server) {
			p.Servers = append(p.Servers, t.Server)
		}
	}
	if p.Server != "" {
		tools = slices.DeleteFunc(slices.Clone(tools), func(t host.Tool) bool { return t.Server != p.Server })
	}
	if strings.TrimSpace(p.Q) != "" {
		tools = agent.SearchTools(p.Q, tools)
	}
	p.Tools = tools
	p.Held = u.heldCount(r.Context(), "")
	u.render(w, http.StatusOK, "tools", "layout", p)
}

type toolPageData struct {
	chrome
	Tool   host.Tool
	Schema string
	Try    tryData
	Ask    askData
}

// tryData is the "try it" form and, once called, its result, the
// equivalent command line and this browser's history of the tool's calls.
type tryData struct {
	Name    string
	Fields  []field
	General []string
	Result  *result
	Called  bool
	Command string
	History []histEntry
	From    int64 // the history entry the form was loaded from, 0 for none
}

// toolOr is the running host and its tool the request's path names, or
// false once it answered 503 (no daemon) or 404 (no such tool).
func (u *UI) toolOr(w http.ResponseWriter, r *http.Request) (*host.Host, host.Tool, bool) {
	h := u.hostOr(w)
	if h == nil {
		return nil, host.Tool{}, false
	}
	t, ok := h.Tool(r.PathValue("name"))
	if !ok {
		http.Error(w, "no tool "+strconv.Quote(r.PathValue("name")), http.StatusNotFound)
		return nil, host.Tool{}, false
	}
	return h, t, true
}

func (u *UI) toolPage(w http.ResponseWriter, r *http.Request) {
	_, t, ok := u.toolOr(w, r)
	if !ok {
		return
	}
	sch, _ := json.MarshalIndent(t.Tool.InputSchema, "", "  ")
	d := tryData{Name: t.Name, Fields: fieldsOf(t.Tool.InputSchema)}
	// Named now, not by the first call: the page's poll for a question
	// asked during that call must already carry the cookie.
	browser := browserFor(w, r)
	// ?from=ID loads a call of the history into the form.
	if from, err := strconv.ParseInt(r.URL.Query().Get("from"), 10, 64); err == nil {
		if e, ok := u.tries.get(browser, from); ok && e.Tool == t.Name && e.Args != nil {
			fill(d.Fields, e.Args)
			d.From = e.ID
		}
	}
	d.History = u.tries.of(browser, t.Name)
	u.render(w, http.StatusOK, "tool", "layout", toolPageData{chrome{"Tool " + t.Name, "tools"}, t, string(sch), d, askData{Tool: t.Name}})
}

func (u *UI) callTool(w http.ResponseWriter, r *http.Request) {
	h, t, ok := u.toolOr(w, r)
	if !ok {
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	d := tryData{Name: t.Name, Fields: fieldsOf(t.Tool.InputSchema)}
	args, ok := argumentsOf(d.Fields, r.PostForm)
	if !ok {
		d.History = u.tries.of(browserOf(r), t.Name)
		u.render(w, http.StatusUnprocessableEntity, "tool", "try", d)
		return
	}
	u.try(w, r, h, d, args)
}

// rerunTool calls a tool again with the arguments of a call of this
// browser's history, and shows them in the form.
func (u *UI) rerunTool(w http.ResponseWriter, r *http.Request) {
	h, t, ok := u.toolOr(w, r)
	if !ok {
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	e, found := u.tries.get(browserOf(r), id)
	if err != nil || !found || e.Tool != t.Name {
		http.Error(w, "no call "+strconv.Quote(r.PathValue("id"))+" of "+t.Name+" in this browser's history (it keeps the last "+strconv.Itoa(historyPerSession)+" calls, until the daemon restarts)", http.StatusNotFound)
		return
	}
	if e.Args == nil {
		http.Error(w, "the arguments of call "+r.PathValue("id")+" were larger than "+strconv.Itoa(historyArgsMax)+" bytes and not kept", http.StatusUnprocessableEntity)
		return
	}
	d := tryData{Name: t.Name, Fields: fieldsOf(t.Tool.InputSchema), From: e.ID}
	fill(d.Fields, e.Args)
	u.try(w, r, h, d, e.Args)
}

// try calls the tool of d with args, records the call in the browser's
// history and renders the form with its result.
func (u *UI) try(w http.ResponseWriter, r *http.Request, h *host.Host, d tryData, args json.RawMessage) {
	browser := browserFor(w, r)
	start := time.Now()
	res, err := h.CallTool(r.Context(), d.Name, args, &host.CallOptions{
		Elicitation: func(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return u.asks.ask(ctx, browser, d.Name, server, p)
		},
	})
	e := histEntry{Tool: d.Name, At: start, Took: time.Since(start)}
	var secrets []string
	for _, f := range d.Fields {
		if f.Secret {
			secrets = append(secrets, f.Name)
		}
	}
	if len(args) <= historyArgsMax {
		e.Args = args
	}
	e.ArgsText = cut(maskArgs(args, secrets), historySummaryMax)
	e.Command = CallCommand(d.Name, args, secrets)
	d.Command = e.Command
	status := http.StatusOK
	if err != nil {
		var ve *schema.ValidationError
		if errors.As(err, &ve) {
			d.General = placeProblems(d.Fields, ve)
		} else {
			d.General = []string{err.Error()}
		}
		e.IsError, e.Summary = true, cut(err.Error(), historySummaryMax)
		status = daemon.StatusOf(err)
	} else {
		d.Called, d.Result = true, resultOf(res)
		e.IsError, e.Summary = res.IsError, summaryOf(d.Result)
	}
	e.Summary = h.Redactor().Redact(e.Summary)
	e.ArgsText = h.Redactor().Redact(e.ArgsText)
	u.tries.add(browser, e)
	d.History = u.tries.of(browser, d.Name)
	u.render(w, status, "tool", "try", d)
}

// --- the form a schema makes

// Field kinds.
const (
	kindString  = "string"
	kindNumber  = "number"
	kindInteger = "integer"
	kindBoolean = "boolean"
	kindEnum    = "enum"
	kindStrings = "strings" // an array of strings, one a line
	kindJSON    = "json"    // anything else, as JSON
)

// field is one property of a tool's input schema, as a form field.
type field struct {
	Name        string // the property
	ID          string // the input's id
	Kind        string
	Required    bool
	Title       string
	Description string
	Options     []option // kindEnum
	Value       string   // as submitted
	Errors      []string
	Secret      bool // format "password" or writeOnly: typed hidden, masked in a command line and the history
}

type option struct {
	Label string // the value as JSON, or the string itself
	Value string // its index
	JSON  json.RawMessage
	Sel   bool
}

// fieldsOf makes the form of an input schema: one field per property of
// the top-level object, in the schema's order when it can be told (Go's
// maps have none: the required properties first, then by name).
func fieldsOf(inputSchema any) []field {
	raw, _ := json.Marshal(inputSchema)
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	json.Unmarshal(raw, &s)
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		ra, rb := slices.Contains(s.Required, a), slices.Contains(s.Required, b)
		switch {
		case ra && !rb:
			return -1
		case rb && !ra:
			return 1
		}
		return strings.Compare(a, b)
	})
	var out []field
	for i, n := range names {
		var p struct {
			Type        any               `json:"type"`
			Enum        []json.RawMessage `json:"enum"`
			Title       string            `json:"title"`
			Description string            `json:"description"`
			Format      string            `json:"format"`
			WriteOnly   bool              `json:"writeOnly"`
			Items       *struct {
				Type any `json:"type"`
			} `json:"items"`
		}
		json.Unmarshal(s.Properties[n], &p)
		f := field{Name: n, ID: "arg-" + strconv.Itoa(i), Required: slices.Contains(s.Required, n), Title: p.Title, Description: p.Description,
			Secret: p.Format == "password" || p.WriteOnly}
		switch t := typeOf(p.Type); {
		case len(p.Enum) > 0:
			f.Kind = kindEnum
			for j, e := range p.Enum {
				label := string(e)
				var str string
				if json.Unmarshal(e, &str) == nil {
					label = str
				}
				f.Options = append(f.Options, option{Label: label, Value: strconv.Itoa(j), JSON: e})
			}
		case t == "string", t == "number", t == "integer", t == "boolean":
			f.Kind = t
		case t == "array" && p.Items != nil && typeOf(p.Items.Type) == "string":
			f.Kind = kindStrings
		default:
			f.Kind = kindJSON
		}
		out = append(out, f)
	}
	return out
}

// typeOf is a schema's one type: "string" for "string" or
// ["string","null"]; "" when it says none or several.
func typeOf(t any) string {
	switch t := t.(type) {
	case string:
		return t
	case []any:
		var one string
		for _, x := range t {
			if s, _ := x.(string); s != "null" {
				if one != "" {
					return ""
				}
				one = s
			}
		}
		return one
	}
	return ""
}

// argumentsOf reads the form into arguments, each field as its kind says.
// An empty field is left out (a required one is an error, so that it is
// shown next to the field rather than as the validator's message about
// the object). It returns false when a field is in error.
func argumentsOf(fields []field, form map[string][]string) (json.RawMessage, bool) {
	args := map[string]json.RawMessage{}
	ok := true
	for i := range fields {
		f := &fields[i]
		v := ""
		if vs := form[f.ID]; len(vs) > 0 {
			v = vs[0]
		}
		f.Value = v
		for j := range f.Options {
			f.Options[j].Sel = f.Options[j].Value == v
		}
		if strings.TrimSpace(v) == "" {
			if f.Required {
				f.Errors = append(f.Errors, "required")
				ok = false
			}
			continue
		}
		fail := func(msg string) { f.Errors = append(f.Errors, msg); ok = false }
		switch f.Kind {
		case kindString:
			b, _ := json.Marshal(v)
			args[f.Name] = b
		case kindNumber, kindInteger:
			t := strings.TrimSpace(v)
			var n json.Number
			if json.Unmarshal([]byte(t), &n) != nil {
				fail("not a number")
				continue
			}
			args[f.Name] = json.RawMessage(t)
		case kindBoolean:
			if v != "true" && v != "false" {
				fail("choose true or false")
				continue
			}
			args[f.Name] = json.RawMessage(v)
		case kindEnum:
			j := slices.IndexFunc(f.Options, func(o option) bool { return o.Value == v })
			if j < 0 {
				fail("choose one of the options")
				continue
			}
			args[f.Name] = f.Options[j].JSON
		case kindStrings:
			b, _ := json.Marshal(lines(v))
			args[f.Name] = b
		default:
			if !json.Valid([]byte(v)) {
				fail("not JSON")
				continue
			}
			args[f.Name] = json.RawMessage(v)
		}
	}
	if !ok {
		return nil, false
	}
	b, _ := json.Marshal(args)
	return b, true
}

// fill sets the fields' values from args, as argumentsOf would read them
// back: the inverse of argumentsOf, for a call loaded from the history.
func fill(fields []field, args json.RawMessage) {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return
	}
	for i := range fields {
		f := &fields[i]
		v, ok := m[f.Name]
		if !ok || f.Secret { // a secret is typed again, never written into a page
			continue
		}
		switch f.Kind {
		case kindString:
			json.Unmarshal(v, &f.Value)
		case kindEnum:
			for j := range f.Options {
				if compactJSON(string(f.Options[j].JSON)) == compactJSON(string(v)) {
					f.Options[j].Sel, f.Value = true, f.Options[j].Value
				}
			}
		case kindStrings:
			var ss []string
			if json.Unmarshal(v, &ss) == nil {
				f.Value = strings.Join(ss, "\n")
			}
		case kindJSON:
			f.Value = indent(v)
		default:
			f.Value = string(v)
		}
	}
}

// placeProblems puts each problem of a validation error next to the field
// its JSON pointer starts at; it returns those of no field.
func placeProblems(fields []field, ve *schema.ValidationError) []string {
	var rest []string
	for _, p := range ve.Problems {
		seg, sub, _ := strings.Cut(strings.TrimPrefix(p.Pointer, "/"), "/")
		seg = strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
		i := slices.IndexFunc(fields, func(f field) bool { return f.Name == seg })
		if p.Pointer == "" || i < 0 {
			rest = append(rest, p.String())
			continue
		}
		msg := p.Message
		if sub != "" {
			msg = "/" + sub + ": " + msg
		}
		fields[i].Errors = append(fields[i].Errors, msg)
	}
	if ve.Omitted > 0 {
		rest = append(rest, strconv.Itoa(ve.Omitted)+" more problems")
	}
	return rest
}

// --- results

// result is a tool's result as the page shows it.
type result struct {
	IsError    bool
	Blocks     []block
	Structured string // structuredContent as indented JSON
	Meta       string
}

// block is one content block.
type block struct {
	Kind     string // text, image, audio, resource_link, resource, other
	Text     string
	MIMEType string
	Src      template.URL // a data: URL, for image and audio types the page may show
	URI      string
	Name     string
	Size     int
	JSON     string // anything the page has no view for, as JSON
}

// Media types shown inline from a data: URL. Others (SVG: a document, not
// a picture) are described, not shown.
var inlineImages = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}
var inlineAudio = []string{"audio/wav", "audio/x-wav", "audio/mpeg", "audio/ogg", "audio/webm"}

func dataURL(mime string, data []byte, allowed []string) template.URL {
	if !slices.Contains(allowed, strings.ToLower(mime)) {
		return ""
	}
	// Safe as a URL: the media type is one of ours and the data is base64.
	return template.URL("data:" + strings.ToLower(mime) + ";base64," + base64.StdEncoding.EncodeToString(data))
}

func resultOf(res *mcp.CallToolResult) *result {
	out := &result{IsError: res.IsError}
	for _, c := range res.Content {
		var b block
		switch c := c.(type) {
		case *mcp.TextContent:
			b = block{Kind: "text", Text: c.Text}
			if t := strings.TrimSpace(c.Text); t != "" && (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t)) {
				b.Kind, b.JSON = "json", indent(json.RawMessage(c.Text))
			}
		case *mcp.ImageContent:
			b = block{Kind: "image", MIMEType: c.MIMEType, Size: len(c.Data), Src: dataURL(c.MIMEType, c.Data, inlineImages)}
		case *mcp.AudioContent:
			b = block{Kind: "audio", MIMEType: c.MIMEType, Size: len(c.Data), Src: dataURL(c.MIMEType, c.Data, inlineAudio)}
		case *mcp.ResourceLink:
			b = block{Kind: "resource_link", URI: c.URI, Name: c.Name, MIMEType: c.MIMEType, Text: c.Description}
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				b = blockOfResource(c.Resource)
			}
		default:
			b = block{Kind: "other", JSON: indent(c)}
		}
		out.Blocks = append(out.Blocks, b)
	}
	if res.StructuredContent != nil {
		out.Structured = indent(res.StructuredContent)
	}
	if len(res.Meta) > 0 {
		out.Meta = indent(res.Meta)
	}
	return out
}

func blockOfResource(r *mcp.ResourceContents) block {
	b := block{Kind: "resource", URI: r.URI, MIMEType: r.MIMEType, Text: r.Text, Size: len(r.Blob)}
	if len(r.Blob) > 0 {
		b.Src = dataURL(r.MIMEType, r.Blob, inlineImages)
	}
	return b
}

func indent(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}
