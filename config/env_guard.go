package config

import (
	"strings"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// A stdio server's env may not set a variable that makes its program, or
// the loader or interpreter that runs it, load or run other code than its
// command says, unless the server lists it in allow_env. A config is
// copied from READMEs and shared: a reader checks command and args, and
// takes env for tokens. NODE_OPTIONS="--require /tmp/x.js" in env runs
// /tmp/x.js inside what looks like `npx some-server`.
//
// Names are compared case-insensitively: Windows does, npm reads its own
// variables in either case, and no program needs a lower-case spelling of
// one of these.
var (
	// injectionPrefixes are families of such variables.
	injectionPrefixes = []struct{ prefix, why string }{
		{"LD_", "is read by the dynamic loader, which loads a library it names (LD_PRELOAD, LD_AUDIT) or looks for libraries where it says (LD_LIBRARY_PATH)"},
		{"DYLD_", "is read by the macOS dynamic loader, which loads a library it names or looks for libraries where it says"},
		{"NPM_CONFIG_", "configures npm and npx, including the registry they install the server's code from and the shell they run scripts with"},
		{"CORECLR_PROFILER_PATH", "names a profiler library .NET loads into the program"},
		{"COR_PROFILER_PATH", "names a profiler library .NET loads into the program"},
		{"LUA_INIT", "is code lua runs at start, or names a file it runs"},
		{"LUA_PATH", "changes where lua loads modules from"},
		{"LUA_CPATH", "changes where lua loads native modules from"},
	}
	// injectionNames are single such variables.
	injectionNames = map[string]string{
		"GCONV_PATH":           "makes glibc load character-conversion modules from where it says",
		"NODE_OPTIONS":         "gives node options such as --require and --import, which run the code they name",
		"NODE_PATH":            "changes where node looks for modules",
		"PYTHONPATH":           "changes where python imports modules from",
		"PYTHONHOME":           "changes where python's standard library comes from",
		"PYTHONUSERBASE":       "changes where python's user site-packages are, whose .pth files run at start",
		"PYTHONSTARTUP":        "names a file python runs at start",
		"PERL5OPT":             "gives perl options such as -M, which load the module they name",
		"PERL5LIB":             "changes where perl loads modules from",
		"PERLLIB":              "changes where perl loads modules from",
		"PERL5DB":              "is code perl runs in its debugger",
		"RUBYOPT":              "gives ruby options such as -r, which load the code they name",
		"RUBYLIB":              "changes where ruby loads code from",
		"JAVA_TOOL_OPTIONS":    "gives the JVM options such as -javaagent, which load the code they name",
		"_JAVA_OPTIONS":        "gives the JVM options such as -javaagent, which load the code they name",
		"JDK_JAVA_OPTIONS":     "gives the java launcher options such as -javaagent, which load the code they name",
		"CLASSPATH":            "changes where java loads classes from",
		"DOTNET_STARTUP_HOOKS": "names assemblies .NET runs before the program",
		"BASH_ENV":             "names a file bash runs at start",
		"ENV":                  "names a file sh runs at start",
		"SHELLOPTS":            "sets bash options at start (xtrace runs the command substitutions in PS4)",
		"BASHOPTS":             "sets bash options at start",
		"PS4":                  "is expanded, command substitutions included, each time a shell traces a command",
		"PROMPT_COMMAND":       "is a command bash runs",
		"PHPRC":                "changes which php.ini php reads (auto_prepend_file runs code)",
		"PHP_INI_SCAN_DIR":     "adds php.ini files php reads (auto_prepend_file runs code)",
		"GOFLAGS":              "gives the go command flags such as -toolexec, which run the program they name",
		"UV_INDEX":             "changes where uv and uvx install the server's code from",
		"UV_INDEX_URL":         "changes where uv and uvx install the server's code from",
		"UV_DEFAULT_INDEX":     "changes where uv and uvx install the server's code from",
		"UV_EXTRA_INDEX_URL":   "adds where uv and uvx install the server's code from",
		"UV_FIND_LINKS":        "adds where uv and uvx install the server's code from",
		"UV_CONFIG_FILE":       "names the configuration uv and uvx read, which says where they install code from",
		"PIP_INDEX_URL":        "changes where pip installs code from",
		"PIP_EXTRA_INDEX_URL":  "adds where pip installs code from",
		"PIP_FIND_LINKS":       "adds where pip installs code from",
		"PIP_CONFIG_FILE":      "names the configuration pip reads, which says where it installs code from",
	}
)

// injectionEnv says why a variable set in a stdio server's env can make it
// run other code than its command says ("" when it cannot, as far as
// Switchboard knows): such a variable is refused unless the server lists it
// in allow_env.
func injectionEnv(name string) string {
	u := strings.ToUpper(name)
	if why, ok := injectionNames[u]; ok {
		return why
	}
	for _, p := range injectionPrefixes {
		if strings.HasPrefix(u, p.prefix) {
			return p.why
		}
	}
	return ""
}

// allowEnvExample is how the server's table would allow name, in the
// syntax of the file it is declared in (TOML for a server built in Go).
func (sc *serverCheck) allowEnvExample(name string) string {
	format := decode.TOML
	if sc.fr != nil {
		format = sc.fr.Format
	}
	switch format {
	case decode.JSON:
		return `"allow_env": ["` + name + `"]`
	case decode.YAML: // an agent file's inline server
		return `allow_env: [` + name + `]`
	}
	return `allow_env = ["` + name + `"]`
}

// checkEnvGuard reports the injection variables s sets without allowing
// them, and what is wrong with its allow_env; PATH set without allowing is
// a warning.
func (sc *serverCheck) checkEnvGuard() {
	s := sc.s
	allowed := map[string]bool{}
	for i, name := range s.AllowEnv {
		f := decode.IndexPath("allow_env", i)
		_, set := s.Env[name]
		switch {
		case hasPlaceholder(name):
			sc.errorf(f, placeholderMsg)
		case allowed[name]:
			sc.errorf(f, "duplicate %q", name)
		case injectionEnv(name) == "" && !isPathVar(name):
			sc.errorf(f, "%s needs no allowing: allow_env lists only variables that make a program load other code, such as NODE_OPTIONS, and PATH", name)
		case !set:
			sc.errorf(f, "%s is not set in env", name)
		}
		allowed[name] = true
	}
	for _, k := range sortedMapKeys(s.Env) {
		if isPathVar(k) && !allowed[k] {
			sc.warnPath(k)
		}
		if why := injectionEnv(k); why != "" && !allowed[k] && validEnvName(k) {
			sc.errorf(decode.KeyPath("env", k), "%s %s, so a config that sets it can make the server run other code than its command says; if this server needs it, add %s",
				k, why, sc.allowEnvExample(k))
		}
	}
}
