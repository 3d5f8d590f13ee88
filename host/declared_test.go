package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
)

// A tool without an object input schema — null, missing, or not an object
// schema — was offered and called with any arguments; it is refused at
// discovery like a schema that does not compile (issue 11 §3). The raw
// schemas go over the wire as written, below the server's SDK.
func TestToolsWithoutObjectSchema(t *testing.T) {
	raw := map[string]string{
		"null_schema":   `{"name":"null_schema","inputSchema":null}`,
		"no_schema":     `{"name":"no_schema"}`,
		"string_schema": `{"name":"string_schema","inputSchema":"object"}`,
		"array_schema":  `{"name":"array_schema","inputSchema":{"type":"array","items":{"type":"string"}}}`,
		"list_schema":   `{"name":"list_schema","inputSchema":[{"type":"object"}]}`,
		"number_schema": `{"name":"number_schema","inputSchema":5}`,
		"raw_ok":        `{"name":"raw_ok","inputSchema":{"type":"object","properties":{"a":{"type":"integer"}}}}`,
	}
	var flags []string
	for _, r := range raw {
		flags = append(flags, "-raw-tool", r)
	}
	h, logs := start(t, []config.Server{fixture(t, "sc", flags...)}, nil)
	st := h.Servers()[0]
	if st.State != host.StateReady {
		t.Fatalf("state = %s (%v), want ready", st.State, st.Err)
	}
	reasons := map[string]string{}
	for _, sk := range st.Skipped {
		reasons[sk.Tool] = sk.Reason
	}
	for name := range raw {
		reason, skipped := reasons[name]
		switch {
		case name == "raw_ok":
			if skipped || !hasTool(h, "mcp_sc_raw_ok") {
				t.Errorf("raw_ok: skipped %v (%q), want it offered: a raw tool with an object schema is fine", skipped, reason)
			}
		case !skipped:
			t.Errorf("%s offered, want it skipped: tools = %v", name, toolNames(h))
		case !strings.Contains(reason, "schema"):
			t.Errorf("%s skipped for %q, want a reason naming the schema", name, reason)
		}
	}
	if r := reasons["null_schema"]; !strings.Contains(r, "no input schema (null or missing)") {
		t.Errorf("null_schema reason = %q", r)
	}
	_, err := h.CallTool(context.Background(), "mcp_sc_null_schema", json.RawMessage(`{"anything":1}`), nil)
	if !errors.Is(err, host.ErrUnknownTool) {
		t.Errorf("calling null_schema: err = %v, want ErrUnknownTool", err)
	}
	if _, err := h.CallTool(context.Background(), "mcp_sc_raw_ok", json.RawMessage(`{"a":"x"}`), nil); !errors.Is(err, host.ErrInvalidArguments) {
		t.Errorf("raw_ok with a string for an integer: err = %v, want ErrInvalidArguments", err)
	}
	if !strings.Contains(logs.String(), "null_schema") {
		t.Errorf("the skipped tools are not logged:\n%s", logs)
	}
}

// hiddenIn returns what in s a terminal would interpret or a person would
// not see: an escape or control character (other than newline and tab),
// a format character, a default-ignorable one, or a second variation
// selector in a row.
func hiddenIn(s string) string {
	prevVS := true
	for _, r := range s {
		vs := unicode.Is(unicode.Variation_Selector, r)
		switch {
		case r == '\n' || r == '\t':
		case unicode.Is(unicode.Cc, r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
			return fmt.Sprintf("%U", r)
		case vs && (prevVS || (r != '\uFE0E' && r != '\uFE0F')):
			return fmt.Sprintf("%U", r)
		}
		prevVS = vs
	}
	return ""
}

// checkVisible fails t for every string reachable from v (a value that
// marshals to JSON) that holds hidden characters.
func checkVisible(t *testing.T, what string, v any) {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case string:
			if h := hiddenIn(x); h != "" {
				t.Errorf("%s%s holds %s: %q", what, path, h, x)
			}
		case map[string]any:
			for k, e := range x {
				if k == "enum" || k == "const" {
					continue // values the server must get back: kept as written
				}
				walk(path+"."+k, e)
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
	}
	var doc any
	json.Unmarshal(raw, &doc)
	walk("", doc)
}

// What a server declares reached every face raw: terminal escapes and
// invisible characters in names, titles and descriptions, a megabyte of
// description (issue 11 §3). The host cleans and bounds it once, at
// discovery, and reports what it changed; identifiers with hidden
// characters are not offered.
func TestDeclaredTextCleaned(t *testing.T) {
	var mu sync.Mutex
	var progress, logged []string
	events := newStates()
	h, logs := start(t, []config.Server{fixture(t, "hs", "-hostile-text", "-description-bytes", "1048576")}, &host.Options{
		ProtocolVersion: "2025-11-25", // the server asks during the call
	}, events)
	ctx := context.Background()

	tool, ok := h.Tool("mcp_hs_hostile")
	if !ok {
		t.Fatalf("hostile not offered: %v", toolNames(h))
	}
	checkVisible(t, "tool hostile", tool.Tool)
	if want := "Adds numbers. red docs  evil zerowidth \U0001F600\uFE0F end\nline2"; tool.Tool.Description != want {
		t.Errorf("description = %q, want %q", tool.Tool.Description, want)
	}
	// Values the server must get back exactly are kept as it wrote them.
	props := tool.Tool.InputSchema.(map[string]any)["properties"].(map[string]any)
	if enum := props["x"].(map[string]any)["enum"].([]any); len(enum) != 2 || hiddenIn(enum[1].(string)) == "" {
		t.Errorf("the schema's enum was changed: %q", enum)
	}
	long, ok := h.Tool("mcp_hs_long")
	if !ok || len(long.Tool.Description) != config.DefaultMaxDescriptionBytes || !strings.HasSuffix(long.Tool.Description, "…") {
		t.Errorf("long description: %d bytes, want cut to %d", len(long.Tool.Description), config.DefaultMaxDescriptionBytes)
	}
	for _, tl := range h.Tools() {
		checkVisible(t, "tool "+tl.Name, tl.Tool)
	}

	st := h.Servers()[0]
	checkVisible(t, "serverInfo", st.ServerInfo)
	checkVisible(t, "status", st.Warnings)
	checkVisible(t, "skipped", st.Skipped)
	if hiddenIn(st.Instructions) != "" || !strings.HasPrefix(st.Instructions, "Adds numbers. red") {
		t.Errorf("instructions = %q", st.Instructions)
	}
	if st.ServerInfo.WebsiteURL != "" {
		t.Errorf("websiteUrl = %q, want it dropped", st.ServerInfo.WebsiteURL)
	}
	if !containsSkip(st.Skipped, `hid\u200bden`, "invisible") {
		t.Errorf("skipped = %+v, want hid\\u200bden refused for its name", st.Skipped)
	}
	warnings := strings.Join(st.Warnings, "\n")
	for _, want := range []string{
		`tool "long": description cut from 1048576 to 8192 bytes`,
		`tool "hostile": title 5 terminal escape sequences and 15 control or invisible characters removed; description 5 terminal escape sequences and 13 control or invisible characters removed`,
		`input schema 20 terminal escape sequences and 54 control or invisible characters removed`,
		`instructions 5 terminal escape sequences and 13 control or invisible characters removed`,
		`serverInfo name `, `websiteUrl dropped`,
	} {
		if !strings.Contains(warnings, want) {
			t.Errorf("warnings lack %q:\n%s", want, warnings)
		}
	}
	if !strings.Contains(logs.String(), "cleaned what the server declared") {
		t.Errorf("what was cleaned is not logged:\n%.3000s", logs)
	}

	// Prompts, resources and templates, listed on demand.
	ps, err := h.Prompts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkVisible(t, "prompts", ps)
	var prompts []string
	for _, p := range ps {
		prompts = append(prompts, p.Prompt.Name)
	}
	if strings.Contains(strings.Join(prompts, ","), "hid") || !strings.Contains(strings.Join(prompts, ","), "hostile") {
		t.Errorf("prompts = %q, want hostile and not hid\\u200bden", prompts)
	}
	rs, err := h.Resources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkVisible(t, "resources", rs)
	for _, r := range rs {
		if strings.Contains(r.Resource.URI, "hid") {
			t.Errorf("resource %q offered", r.Resource.URI)
		}
	}
	ts, err := h.ResourceTemplates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkVisible(t, "templates", ts)
	warnings = strings.Join(h.Servers()[0].Warnings, "\n")
	for _, want := range []string{`prompt "hid\u200bden" not offered`, `resource "test://hid\u200bden" not offered`,
		`prompt "hostile": title`, `argument "a" description`, `resource "test://hostile": name`, `resource template "test://hostile/{id}"`} {
		if !strings.Contains(warnings, want) {
			t.Errorf("warnings lack %q:\n%s", want, warnings)
		}
	}

	// What the server sends during calls: progress, log and error
	// messages, questions.
	if err := h.SetLoggingLevel(ctx, "debug"); err != nil {
		t.Fatal(err)
	}
	res, err := h.CallTool(ctx, "mcp_hs_hostile", nil, &host.CallOptions{Progress: func(p *mcp.ProgressNotificationParams) {
		mu.Lock()
		progress = append(progress, p.Message)
		mu.Unlock()
	}})
	if err != nil || res.IsError {
		t.Fatalf("hostile: %v %v", res, err)
	}
	// Its log message belongs to no call's handler: watchers get it.
	if ev := awaitEvent(t, events.w, host.EventLog, "hs"); ev.Log != nil {
		logged = append(logged, ev.Log.Logger, fmt.Sprint(ev.Log.Data))
	}
	_, err = h.CallTool(ctx, "mcp_hs_hostile_error", nil, nil)
	var je *jsonrpc.Error
	if err == nil || !errors.As(err, &je) {
		t.Fatalf("hostile_error: err = %v, want the server's protocol error", err)
	}
	errText := err.Error()
	var asked []string
	_, err = h.CallTool(ctx, "mcp_hs_hostile_elicit", nil, &host.CallOptions{Elicitation: func(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		raw, _ := json.Marshal(p)
		asked = append(asked, p.Message, string(raw))
		return &mcp.ElicitResult{Action: "decline"}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) != 1 || len(logged) != 2 || len(asked) != 2 {
		t.Fatalf("progress %q, log %q, questions %q: want one of each", progress, logged, asked)
	}
	for what, s := range map[string]string{"error": errText, "protocol error": je.Message, "progress": progress[0],
		"log logger": logged[0], "log data": logged[1], "question": asked[0]} {
		if h := hiddenIn(s); h != "" || !strings.Contains(s, "Adds numbers.") {
			t.Errorf("%s = %q: holds %s", what, s, h)
		}
	}
	var form any
	json.Unmarshal([]byte(asked[1]), &form)
	checkVisible(t, "the question's form", form)
}

// The bounds are the caller's (config [limits]).
func TestDeclaredTextLimits(t *testing.T) {
	long := strings.Repeat("n", 100)
	h, _ := start(t, []config.Server{fixture(t, "lim", "-description-bytes", "300", "-tool-name", long)},
		&host.Options{MaxDescriptionBytes: 128, MaxNameBytes: 64, ToolNameFormat: "{tool}"})
	tool, ok := h.Tool("long")
	if !ok || len(tool.Tool.Description) != 128 {
		t.Errorf("long: %d bytes, want 128", len(tool.Tool.Description))
	}
	st := h.Servers()[0]
	if !containsSkip(st.Skipped, long, "more than max_name_bytes (64)") {
		t.Errorf("skipped = %+v, want the 100-byte name refused", st.Skipped)
	}
	if !strings.Contains(strings.Join(st.Warnings, "\n"), `tool "long": description cut from 300 to 128 bytes`) {
		t.Errorf("warnings = %q", st.Warnings)
	}
}

// A stdio server's start-up banner and other non-message lines on stdout
// stopped it from starting (issue 11 §3). They are skipped; the first ten
// are logged, cleaned and cut, and all are counted in the status.
func TestStdoutBanner(t *testing.T) {
	h, logs := start(t, []config.Server{fixture(t, "chatty", "-banner", "25")}, nil)
	if got := callText(t, h, "mcp_chatty_echo", `{"text":"still here"}`, nil); got != "still here" {
		t.Errorf("echo = %q", got)
	}
	out := logs.String()
	if n := strings.Count(out, "skipped a line that is not a JSON-RPC message"); n != 10 {
		t.Errorf("%d skipped lines logged, want 10:\n%s", n, out)
	}
	for _, want := range []string{"Server running on stdio", "[dotenv@17.2.1] injecting env", "further lines that are not messages are counted"} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %q:\n%s", want, out)
		}
	}
	if strings.ContainsAny(out, "\x1b\x00") || strings.Contains(out, `\x1b`) || strings.Contains(out, `\x00`) {
		t.Errorf("a skipped line was logged with its escapes or control bytes:\n%s", out)
	}
	st := h.Servers()[0]
	if want := "stdout: 25 lines that were not JSON-RPC messages skipped (the first 10 logged)"; !strings.Contains(strings.Join(st.Warnings, "\n"), want) {
		t.Errorf("warnings = %q, want %q", st.Warnings, want)
	}
}
