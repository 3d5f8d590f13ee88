package config

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// The variables other clients expand in their JSON, which a server would
// otherwise get as literal text ("${env:GITHUB_TOKEN}" as its token):
//
//   - ${env:NAME} (VS Code, Cursor) and ${NAME} (Claude Code) read the
//     environment: they become {{env.NAME}}, and are refused where
//     Switchboard resolves no placeholder (anywhere but env and headers
//     values: argv, command, cwd and url are visible to every user on the
//     machine, or sent where a token does not belong).
//   - ${input:ID} (VS Code) asks the user for a value in a dialog, which
//     Switchboard has not: refused, saying to store the value as a secret.
//   - ${workspaceFolder}, ${workspaceFolderBasename} (VS Code, Cursor) are
//     the folder holding the .vscode or .cursor folder the file is in, and
//     its name; a file elsewhere has no workspace, and they are refused.
//   - ${userHome}, ${pathSeparator} and ${/} are the home folder and "/".
//
// Anything else in ${…} (${cwd}, ${config:…}, ${command:…}, a default as
// in ${NAME:-x}) is refused, naming it, rather than passed on literally.
// A value with a problem is left as written; the file does not load.

// clientVar matches one ${…}; the inner text is group 1.
var clientVar = regexp.MustCompile(`\$\{([^{}]*)\}`)

// envVarName is what ${NAME} and ${env:NAME} may name.
var envVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// clientVariables expands the other clients' variables in the string values
// of the entry m at path, in place, reporting each one it cannot expand.
func (r *fileResult) clientVariables(path string, m map[string]any) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		field := decode.KeyPath(path, k)
		switch v := m[k].(type) {
		case string:
			m[k] = r.expandClientVars(field, v, false)
		case []any:
			for i, e := range v {
				if s, ok := e.(string); ok {
					v[i] = r.expandClientVars(decode.IndexPath(field, i), s, false)
				}
			}
		case map[string]any:
			// Placeholders are resolved in env and headers values only.
			values := k == "env" || k == "headers"
			for _, name := range slices.Sorted(maps.Keys(v)) {
				if s, ok := v[name].(string); ok {
					v[name] = r.expandClientVars(decode.KeyPath(field, name), s, values)
				}
			}
		}
	}
}

// expandClientVars expands the variables in s, at field; placeholders says
// whether s is a value where {{env.NAME}} is resolved.
func (r *fileResult) expandClientVars(field, s string, placeholders bool) string {
	if !strings.Contains(s, "${") {
		return s
	}
	bad := false
	out := clientVar.ReplaceAllStringFunc(s, func(whole string) string {
		inner := whole[2 : len(whole)-1]
		v, msg := r.clientVar(inner, placeholders)
		if msg != "" {
			r.Errorf(field, "%s %s", whole, msg)
			bad = true
		}
		return v
	})
	if bad {
		return s
	}
	return out
}

// clientVar is the expansion of ${inner}, or why there is none.
func (r *fileResult) clientVar(inner string, placeholders bool) (string, string) {
	kind, name, hasKind := strings.Cut(inner, ":")
	switch {
	case hasKind && kind == "env" && envVarName.MatchString(name),
		!hasKind && envVarName.MatchString(inner) && !isVSCodeVar(inner):
		if !hasKind {
			name = inner
		}
		if !placeholders {
			return "", "reads the environment, which Switchboard does only in env and headers values " +
				"(argv, command, cwd and url are visible to every user on this machine): pass the value to the server through env"
		}
		return "{{env." + name + "}}", ""
	case hasKind && kind == "input":
		secretName := strings.Map(func(c rune) rune {
			if c < 0x80 && (c == '_' || c == '.' || c == '-' || decode.IsIDByte(byte(c))) {
				return c
			}
			return '_'
		}, name)
		if secretName == "" || !envVarName.MatchString(secretName[:1]) {
			secretName = "x" + secretName
		}
		return "", fmt.Sprintf("asks VS Code to prompt for a value, and Switchboard has no such prompt: "+
			"store the value with `switchboard secrets set %s` and write {{secrets.%s}}", secretName, secretName)
	case hasKind && envVarName.MatchString(kind) && strings.HasPrefix(name, "-"):
		return "", fmt.Sprintf("has a default, which Switchboard does not support: write ${%s} (or {{env.%s}}) and set %s", kind, kind, kind)
	case inner == "userHome":
		if r.Home == "" {
			return "", "is the home folder, and HOME is not set"
		}
		return r.Home, ""
	case inner == "pathSeparator" || inner == "/":
		return string(filepath.Separator), ""
	case inner == "workspaceFolder" || inner == "workspaceFolderBasename":
		ws, ok := workspaceOf(r.File)
		if !ok {
			return "", "is the folder the editor has open; this file is not in a .vscode or .cursor folder, so there is none: write the path"
		}
		if inner == "workspaceFolderBasename" {
			return filepath.Base(ws), ""
		}
		return ws, ""
	}
	return "", "is not a variable Switchboard knows: it expands ${env:NAME}, ${NAME}, ${workspaceFolder}, " +
		"${workspaceFolderBasename}, ${userHome}, ${pathSeparator} and ${/}; write the value"
}

// isVSCodeVar reports whether a bare ${name} is one of VS Code's own
// variables rather than Claude Code's ${NAME} for an environment variable.
func isVSCodeVar(name string) bool {
	switch name {
	case "userHome", "pathSeparator", "workspaceFolder", "workspaceFolderBasename",
		"cwd", "file", "fileBasename", "fileDirname", "fileExtname", "relativeFile",
		"lineNumber", "selectedText", "execPath", "defaultBuildTask":
		return true
	}
	return false
}

// workspaceOf is the workspace folder of a file in a .vscode or .cursor
// folder: the folder that holds that one.
func workspaceOf(file string) (string, bool) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", false
	}
	dir := filepath.Dir(abs)
	switch filepath.Base(dir) {
	case ".vscode", ".cursor":
		return filepath.Dir(dir), true
	}
	return "", false
}
