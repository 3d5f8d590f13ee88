package config

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/internal/userfile"
)

// The MCP clients whose configuration files `switchboard import` reads.
const (
	ClientClaudeDesktop = "claude-desktop"
	ClientClaudeCode    = "claude-code"
	ClientCursor        = "cursor"
	ClientVSCode        = "vscode"
	ClientWindsurf      = "windsurf"
)

// Clients lists the clients import knows, in the order their files are
// read; ClientTitle names each for people.
var Clients = []string{ClientClaudeDesktop, ClientClaudeCode, ClientCursor, ClientVSCode, ClientWindsurf}

// ClientTitle names a client for people: "Claude Desktop"; a file named by
// the user (client "") is "a file".
func ClientTitle(client string) string {
	switch client {
	case ClientClaudeDesktop:
		return "Claude Desktop"
	case ClientClaudeCode:
		return "Claude Code"
	case ClientCursor:
		return "Cursor"
	case ClientVSCode:
		return "VS Code"
	case ClientWindsurf:
		return "Windsurf"
	}
	return "a file"
}

// A ClientFile is a configuration file of another MCP client that may
// declare servers.
type ClientFile struct {
	// Client is one of [Clients]; "" for a file the user named, read in
	// every client's form.
	Client string
	Path   string
	// Project reports whether the file belongs to the project in the
	// working folder (.mcp.json, .cursor/mcp.json, .vscode/mcp.json,
	// Claude Code's servers for that folder) rather than to the user.
	Project bool
	// Containers are the objects of the file that hold server entries,
	// each a list of keys from the top: {"mcpServers"}, {"mcp",
	// "servers"}, {"projects", "/home/me/app", "mcpServers"}.
	Containers [][]string
	// dir is the project folder, for ${workspaceFolder}.
	dir string
}

// ClientOptions says where [ClientFiles] looks. Home and Dir are
// required.
type ClientOptions struct {
	Home string // the user's home folder
	Dir  string // the project folder: the working directory, absolute
	// GOOS is the system whose paths are used; default runtime.GOOS.
	GOOS string
	// Getenv looks up APPDATA (Windows), XDG_CONFIG_HOME (Linux) and
	// CLAUDE_CONFIG_DIR (Claude Code); default os.Getenv.
	Getenv func(string) string
}

// ClientFiles returns where the clients keep their MCP servers on this
// system, whether the files exist or not: the user's files, then those of
// the project in o.Dir.
//
//	claude-desktop  macOS ~/Library/Application Support/Claude/claude_desktop_config.json,
//	                Windows %APPDATA%\Claude\claude_desktop_config.json,
//	                Linux $XDG_CONFIG_HOME/Claude/claude_desktop_config.json (~/.config)
//	claude-code     ~/.claude.json (or $CLAUDE_CONFIG_DIR/.claude.json): mcpServers (user),
//	                projects.<Dir>.mcpServers (the project's, private); <Dir>/.mcp.json
//	cursor          ~/.cursor/mcp.json; <Dir>/.cursor/mcp.json
//	vscode          the user's mcp.json and settings.json (mcp.servers) in Code/User under
//	                ~/Library/Application Support, %APPDATA% or $XDG_CONFIG_HOME; <Dir>/.vscode/mcp.json
//	windsurf        ~/.codeium/windsurf/mcp_config.json
func ClientFiles(o *ClientOptions) []ClientFile {
	goos, getenv := o.GOOS, o.Getenv
	if goos == "" {
		goos = runtime.GOOS
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	home := o.Home
	join := filepath.Join
	if goos == "windows" {
		join = func(elem ...string) string { return strings.Join(elem, `\`) }
	}
	// appConfig is where desktop applications keep their settings.
	var appConfig string
	switch goos {
	case "darwin":
		appConfig = join(home, "Library", "Application Support")
	case "windows":
		appConfig = getenv("APPDATA")
		if appConfig == "" {
			appConfig = join(home, "AppData", "Roaming")
		}
	default:
		appConfig = getenv("XDG_CONFIG_HOME")
		if appConfig == "" {
			appConfig = join(home, ".config")
		}
	}
	claudeDir := getenv("CLAUDE_CONFIG_DIR")
	if claudeDir == "" {
		claudeDir = home
	}
	servers := [][]string{{"mcpServers"}}
	user := []ClientFile{
		{Client: ClientClaudeDesktop, Path: join(appConfig, "Claude", "claude_desktop_config.json"), Containers: servers},
		{Client: ClientClaudeCode, Path: join(claudeDir, ".claude.json"), Containers: servers},
		{Client: ClientCursor, Path: join(home, ".cursor", "mcp.json"), Containers: servers},
		{Client: ClientVSCode, Path: join(appConfig, "Code", "User", "mcp.json"), Containers: [][]string{{"servers"}}},
		{Client: ClientVSCode, Path: join(appConfig, "Code", "User", "settings.json"), Containers: [][]string{{"mcp", "servers"}}},
		{Client: ClientWindsurf, Path: join(home, ".codeium", "windsurf", "mcp_config.json"), Containers: servers},
	}
	dir := o.Dir
	project := []ClientFile{
		{Client: ClientClaudeCode, Path: join(claudeDir, ".claude.json"), Project: true, Containers: [][]string{{"projects", dir, "mcpServers"}}},
		{Client: ClientClaudeCode, Path: join(dir, ".mcp.json"), Project: true, Containers: servers},
		{Client: ClientCursor, Path: join(dir, ".cursor", "mcp.json"), Project: true, Containers: servers},
		{Client: ClientVSCode, Path: join(dir, ".vscode", "mcp.json"), Project: true, Containers: [][]string{{"servers"}}},
	}
	out := append(user, project...)
	for i := range out {
		out[i].dir = dir
	}
	return out
}

// UserFile returns a ClientFile for a file the user names: read in every
// client's form (mcpServers, servers, mcp.servers), with VS Code's
// variables; dir is the project folder ${workspaceFolder} stands for.
func UserFile(path, dir string) ClientFile {
	return ClientFile{Path: path, Containers: [][]string{{"mcpServers"}, {"servers"}, {"mcp", "servers"}}, dir: dir}
}

// An Entry is one server entry of another client's file, as import reads
// it.
type Entry struct {
	// Name is the entry's name in the file; Server.ID is the name made an
	// id (characters outside A-Z a-z 0-9 _ - become -).
	Name  string
	File  ClientFile
	Field string // the entry's field path in the file: mcpServers.github
	Line  int
	// Server is the entry decoded with the keys of the mcpServers JSON
	// format, the client's variables rewritten (see [ReadClientFile]).
	// Defaults are not applied, so a writer writes only what was there.
	Server Server
	// Problems say why the entry cannot be imported as it is; nil when it
	// can. The URL's address policy is left to the configuration it joins.
	Problems []*Problem
	// Disabled is set for an entry the client has switched off
	// ("disabled": true); it is not decoded.
	Disabled bool
}

// maxClientFileBytes bounds another client's file, which is larger than a
// configuration may be: Claude Code's ~/.claude.json keeps the settings and
// history of every project it has opened, tens of megabytes on a machine
// used for a while.
const maxClientFileBytes = 64 << 20

// ReadClientFile reads the server entries of f; home is what the clients'
// ${userHome} stands for. It fails when the file cannot be read or is not
// JSON (comments and trailing commas, which VS Code allows, are); a file
// without any of f.Containers has no entries. An entry that cannot be
// imported as it is has its Problems, each naming file, line and field.
//
// The clients' variables are rewritten to what Switchboard means by them:
// in env and headers values ${env:NAME} (VS Code, Cursor, Windsurf) and
// ${NAME} (Claude Code) become {{env.NAME}}; ${userHome},
// ${workspaceFolder}, ${workspaceFolderBasename} and ${pathSeparator} are
// replaced by what they stand for anywhere. Anything else — a variable in
// args, command, cwd or url (Switchboard expands none there: argv is
// readable by every user), a default (${NAME:-x}), VS Code's
// ${input:NAME} — is a problem of the entry. Claude Desktop expands
// nothing, so its files are read as written.
func ReadClientFile(f ClientFile, home string) ([]Entry, error) {
	data, err := userfile.Read(f.Path, maxClientFileBytes, "another client's configuration")
	if err != nil {
		return nil, err
	}
	data = standardJSON(data)
	r := newFileResult(f.Path, decode.JSON, "")
	doc, order, line, err := parseJSON(r, data)
	if err != nil {
		return nil, &Problem{Pos: Position{File: f.Path, Line: line}, Msg: "not valid JSON: " + err.Error()}
	}
	// Problems the walker found (duplicate keys) belong to the entries
	// they are in.
	walked := slices.Clone(r.Problems)
	r.Problems = nil
	var entries []Entry
	ids := map[string]string{}
	for _, keys := range f.Containers {
		path, v := "", doc
		for _, k := range keys {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			path, v = decode.KeyPath(path, k), m[k]
		}
		obj, ok := v.(map[string]any)
		if !ok {
			continue
		}
		for _, name := range order[path] {
			e := f.entry(r, path, name, obj[name], home, ids)
			for _, p := range walked {
				if p.Field == e.Field || strings.HasPrefix(p.Field, e.Field+".") {
					e.Problems = append(e.Problems, &Problem{Pos: Position{File: f.Path, Line: p.Line}, Field: p.Field, Msg: p.Msg})
				}
			}
			entries = append(entries, e)
		}
	}
	return entries, nil
}

// entry decodes one entry at container.name.
func (f ClientFile) entry(r *fileResult, container, name string, v any, home string, ids map[string]string) (e Entry) {
	field := decode.KeyPath(container, name)
	e = Entry{Name: name, File: f, Field: field, Line: r.LineOf(field)}
	before := len(r.Problems)
	defer func() {
		for _, p := range r.Problems[before:] {
			e.Problems = append(e.Problems, &Problem{Pos: Position{File: f.Path, Line: p.Line}, Field: p.Field, Msg: p.Msg})
		}
	}()
	m, ok := v.(map[string]any)
	if !ok {
		r.Errorf(field, "must be an object, not %s", r.TypeName(v))
		return e
	}
	if d, ok := m["disabled"].(bool); ok && d {
		e.Disabled = true
		return e
	}
	if u, ok := m["serverUrl"]; ok && f.Client == ClientWindsurf {
		// Windsurf's name for url.
		if _, both := m["url"]; !both {
			delete(m, "serverUrl")
			m["url"] = u
			r.Lines[decode.KeyPath(field, "url")] = r.Lines[decode.KeyPath(field, "serverUrl")]
		}
	}
	f.rewriteVars(r, field, m, home)
	s, _ := r.jsonServer(field, m)
	s.ID = jsonID(name)
	// "args": [] and "env": {} say nothing; an empty tools_allowlist does
	// (no tools), and is kept.
	if len(s.Args) == 0 {
		s.Args = nil
	}
	if len(s.Env) == 0 {
		s.Env = nil
	}
	if len(s.Headers) == 0 {
		s.Headers = nil
	}
	switch {
	case s.ID == "":
		r.Errorf(field, "an empty name cannot be a server id")
	case len(s.ID) > maxIDLen:
		r.Errorf(field, "name is %d characters; a server id has at most %d", len(s.ID), maxIDLen)
	case ids[s.ID] != "":
		r.Errorf(field, "id %q collides with %s (characters outside A-Z a-z 0-9 _ - become -)", s.ID, ids[s.ID])
	default:
		ids[s.ID] = field
	}
	e.Server = s
	if len(r.Problems) == before {
		c := &Config{Servers: []Server{s}}
		c.setDefaults()
		val := &validator{files: map[string]*fileResult{f.Path: r}, noURLPolicy: true}
		val.config(c)
		for _, p := range val.problems {
			r.ErrorAt(p.Pos.Line, p.Field, "%s", p.Msg)
		}
	}
	return e
}

// varRef matches a ${…} variable of the clients' files.
var varRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([^{}]*)\}`) })

// rewriteVars rewrites the client's ${…} variables in the string values of
// an entry (see ReadClientFile), reporting what cannot be rewritten.
func (f ClientFile) rewriteVars(r *fileResult, field string, m map[string]any, home string) {
	if f.Client == ClientClaudeDesktop {
		return
	}
	for _, k := range r.SortedKeys(field, m) {
		kp := decode.KeyPath(field, k)
		switch v := m[k].(type) {
		case string:
			m[k] = f.rewrite(r, kp, v, false, home)
		case []any:
			for i, e := range v {
				if s, ok := e.(string); ok {
					v[i] = f.rewrite(r, decode.IndexPath(kp, i), s, false, home)
				}
			}
		case map[string]any:
			if k != "env" && k != "headers" {
				continue
			}
			for _, ek := range r.SortedKeys(kp, v) {
				if s, ok := v[ek].(string); ok {
					v[ek] = f.rewrite(r, decode.KeyPath(kp, ek), s, true, home)
				}
			}
		}
	}
}

// rewrite rewrites the variables of one string value at field; inValue is
// set for env and headers values, the only place a placeholder may go.
func (f ClientFile) rewrite(r *fileResult, field, s string, inValue bool, home string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	sep := "/"
	if filepath.Separator == '\\' {
		sep = `\`
	}
	return varRef().ReplaceAllStringFunc(s, func(ref string) string {
		name := ref[2 : len(ref)-1]
		switch name {
		case "userHome":
			if home == "" {
				r.Errorf(field, "%s is the home folder, and there is none (HOME is not set)", ref)
				return ref
			}
			return home
		case "workspaceFolder", "workspaceFolderBasename":
			if f.dir == "" {
				r.Errorf(field, "%s is the folder the editor has open, and this file is in no .vscode or .cursor folder: write the path", ref)
				return ref
			}
			if name == "workspaceFolderBasename" {
				return filepath.Base(f.dir)
			}
			return f.dir
		case "pathSeparator", "/":
			return sep
		}
		envName, isEnv := strings.CutPrefix(name, "env:")
		if !isEnv && f.Client == ClientClaudeCode {
			envName, isEnv = name, true
		}
		switch {
		case strings.HasPrefix(name, "input:"):
			id := strings.TrimPrefix(name, "input:")
			r.Errorf(field, "%s asks VS Code's user for a value, and Switchboard asks no one: store it with `switchboard secrets set %s` and write {{secrets.%s}}", ref, id, id)
		case isEnv && strings.Contains(envName, ":-"):
			n, _, _ := strings.Cut(envName, ":-")
			r.Errorf(field, "%s has a default, which {{env.%s}} cannot keep", ref, n)
		case isEnv && !validEnvName(envName):
			r.Errorf(field, "%s: invalid variable name", ref)
		case isEnv && inValue:
			return "{{env." + envName + "}}"
		case isEnv:
			r.Errorf(field, "%s: Switchboard puts variables only in env and headers values (argv is readable by every user on this machine)", ref)
		default:
			r.Errorf(field, "%s: a variable Switchboard does not know", ref)
		}
		return ref
	})
}

// standardJSON turns JSON with comments and trailing commas (VS Code's
// settings.json and mcp.json) into JSON, replacing what it removes with
// spaces so that every byte keeps its offset, and so its line. Valid JSON
// is returned unchanged.
func standardJSON(data []byte) []byte {
	if !bytes.Contains(data, []byte("/")) && !bytes.Contains(data, []byte(",")) {
		return data
	}
	out := slices.Clone(data)
	blank := func(from, to int) {
		for k := from; k < to; k++ {
			if out[k] != '\n' && out[k] != '\r' {
				out[k] = ' '
			}
		}
	}
	last := -1 // the last byte that is neither space nor comment
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case c == '"':
			for i++; i < len(out) && out[i] != '"'; i++ {
				if out[i] == '\\' {
					i++
				}
			}
			last = i
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			end := bytes.IndexByte(out[i:], '\n')
			if end < 0 {
				end = len(out) - i
			}
			blank(i, i+end)
			i += end - 1
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := len(out)
			if j := bytes.Index(out[i+2:], []byte("*/")); j >= 0 {
				end = i + 2 + j + 2
			}
			blank(i, end)
			i = end - 1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			if (c == '}' || c == ']') && last >= 0 && out[last] == ',' {
				out[last] = ' '
			}
			last = i
		}
	}
	return out
}

// Dir is the project folder ${workspaceFolder} stands for.
func (f ClientFile) Dir() string { return f.dir }

// String names the file for people: "Claude Desktop (~/…/claude_desktop_config.json)".
func (f ClientFile) String() string {
	s := ClientTitle(f.Client) + " (" + f.Path + ")"
	if f.Client == "" {
		s = f.Path
	}
	if f.Project && f.Client == ClientClaudeCode && strings.HasSuffix(f.Path, ".claude.json") {
		s += " for " + f.dir
	}
	return s
}
