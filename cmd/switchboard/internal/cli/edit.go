package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
)

// The commands that change a config file (add, remove, import) share what
// is here: which file they write, and the check that the configuration as
// it would be loads without a problem, before anything is written.

// editTarget is the file add, remove and import write: the one --config or
// SWITCHBOARD_CONFIG names, else def ("" for the user's config.toml).
func (e *env) editTarget(def string) (string, error) {
	if f := e.configFile; f != "" {
		return f, nil
	}
	if f := e.getenv("SWITCHBOARD_CONFIG"); f != "" {
		return f, nil
	}
	if def != "" {
		return def, nil
	}
	dir := config.UserConfigDir(e.getenv)
	if dir == "" {
		return "", usageErr("no file to write: HOME is not set; name one with --config FILE")
	}
	return filepath.Join(dir, "config.toml"), nil
}

// home is the user's home folder, "" when unknown.
func (e *env) home() string {
	if h := e.getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// openEdit opens the target file for editing.
func (e *env) openEdit(path string) (*config.Edit, error) {
	ed, err := config.OpenEdit(path, e.home())
	if errors.Is(err, config.ErrNotTOML) {
		return nil, usageErr("%v", err)
	}
	if err != nil {
		if ps := config.Problems(err); len(ps) > 0 {
			return nil, &exitError{kind: daemon.KindConfig, err: fmt.Errorf("%s cannot be edited:\n%s", path, indent(err.Error())), details: problemDetails(err)}
		}
		return nil, failed(err)
	}
	return ed, nil
}

// loadWith loads the layered configuration as it would be with ed written
// (nil: as it is). The target may be a layer (the user's config.toml, the
// file --config names) or no layer at all (import --project writing a new
// ./switchboard.toml is one; a file named by neither is read too, last).
func (e *env) loadWith(ed *config.Edit) (*config.Config, error) {
	file := e.configFile
	if file == "" {
		file = e.getenv("SWITCHBOARD_CONFIG")
	}
	opts := &config.LoadOptions{File: file, Getenv: e.getenv}
	if ed != nil {
		target := absPath(ed.File)
		content := ed.Content()
		opts.ReadFile = func(p string) ([]byte, error) {
			if absPath(p) == target {
				return content, nil
			}
			return config.ReadFile(p)
		}
		if !e.isLayer(ed.File) {
			opts.File = ed.File
		}
	}
	return config.Load(opts)
}

// isLayer reports whether path is one of the files Load reads.
func (e *env) isLayer(path string) bool {
	p := absPath(path)
	file := e.configFile
	if file == "" {
		file = e.getenv("SWITCHBOARD_CONFIG")
	}
	for _, l := range []string{file, "switchboard.toml", filepath.Join(config.UserConfigDir(e.getenv), "config.toml")} {
		if l != "" && absPath(l) == p {
			return true
		}
	}
	return false
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// loadBefore loads the configuration as it is, refusing to change one that
// has problems: an edit is checked against it, and its problems would be
// taken for the edit's.
func (e *env) loadBefore() (*config.Config, error) {
	cfg, err := e.loadWith(nil)
	if err != nil {
		return nil, &exitError{kind: daemon.KindConfig, err: fmt.Errorf("the configuration has problems; fix them first (switchboard validate):\n%s", indent(err.Error())), details: problemDetails(err)}
	}
	return cfg, nil
}

// serverIndex matches the field path of a server of a native file.
var serverIndex = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^mcp_servers\[(\d+)\](?:\.(.*))?$`) })

// editProblems splits the problems of a load with ed written into those of
// ed's servers (by id, their field paths relative to the server) and the
// rest.
func editProblems(err error, ed *config.Edit) (byServer map[string][]string, other []*config.Problem) {
	byServer = map[string][]string{}
	servers := ed.Servers()
	target := absPath(ed.File)
	for _, p := range config.Problems(err) {
		m := serverIndex().FindStringSubmatch(p.Field)
		if m != nil && absPath(p.Pos.File) == target {
			if i, _ := strconv.Atoi(m[1]); i < len(servers) {
				msg := p.Msg
				if m[2] != "" {
					msg = m[2] + ": " + msg
				}
				byServer[servers[i].ID] = append(byServer[servers[i].ID], msg)
				continue
			}
		}
		other = append(other, p)
	}
	return byServer, other
}

// tildePath writes a path under the home folder with ~, for people.
func (e *env) tildePath(p string) string {
	h := e.home()
	if h != "" && (p == h || strings.HasPrefix(p, h+string(filepath.Separator))) {
		return "~" + p[len(h):]
	}
	return p
}

// commandLine is a server's command line or URL, for people.
func commandLine(s config.Server) string {
	if s.URL != "" {
		if s.Transport != "" && s.Transport != config.TransportHTTP && s.Transport != config.TransportWebSocket {
			return s.URL + " (" + string(s.Transport) + ")"
		}
		return s.URL
	}
	parts := append([]string{s.Command}, s.Args...)
	for i, p := range parts {
		if p == "" || strings.ContainsAny(p, " \t\"'\\$") {
			parts[i] = strconv.Quote(p)
		}
	}
	line := strings.Join(parts, " ")
	if len(line) > 90 {
		line = line[:87] + "..."
	}
	return line
}
