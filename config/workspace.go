package config

import "path/filepath"

// clientOf is the client whose file path is, as far as its name and folder
// tell, for the variables it expands: Claude Code's .mcp.json and
// .claude.json (${NAME}), Claude Desktop's file (none), VS Code's and
// Cursor's project files; "" for any other file (${env:NAME} and VS Code's
// variables, as `import --file` reads one).
func clientOf(path string) string {
	switch filepath.Base(path) {
	case ".mcp.json", ".claude.json":
		return ClientClaudeCode
	case "claude_desktop_config.json":
		return ClientClaudeDesktop
	}
	switch filepath.Base(filepath.Dir(path)) {
	case ".vscode":
		return ClientVSCode
	case ".cursor":
		return ClientCursor
	}
	return ""
}

// workspaceOf is the workspace folder of a file in a .vscode or .cursor
// folder, which ${workspaceFolder} stands for: the folder that holds that
// one. A file elsewhere (a user's settings, Claude Desktop's file) has
// none: "".
func workspaceOf(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return ""
	}
	dir := filepath.Dir(abs)
	switch filepath.Base(dir) {
	case ".vscode", ".cursor":
		return filepath.Dir(dir)
	}
	return ""
}
