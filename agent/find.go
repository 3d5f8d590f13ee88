package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/switchboardmcp/switchboard/config"
)

// ErrNotFound: no agent file has that name.
var ErrNotFound = errors.New("agent not found")

// extensions are the agent file formats, in the order Find tries them.
var extensions = []string{".md", ".yaml", ".yml"}

// Dirs returns the folders agents are found in, in order: ./agents, then
// $XDG_CONFIG_HOME/switchboard/agents (default ~/.config/switchboard/agents).
// getenv nil means os.Getenv.
func Dirs(getenv func(string) string) []string {
	if getenv == nil {
		getenv = os.Getenv
	}
	dirs := []string{"agents"}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		dirs = append(dirs, filepath.Join(x, "switchboard", "agents"))
	} else if h := getenv("HOME"); h != "" {
		dirs = append(dirs, filepath.Join(h, ".config", "switchboard", "agents"))
	}
	return dirs
}

// isPath reports whether name names a file rather than an agent id.
func isPath(name string) bool {
	if strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) {
		return true
	}
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".md" || ext == ".yaml" || ext == ".yml"
}

// Find loads the agent called name: a file when name is a path (it holds a
// path separator or ends in .md, .yaml or .yml), otherwise the agent with
// that id in the first of dirs that has it — the file NAME.md, NAME.yaml or
// NAME.yml, or else a file whose id field is NAME.
func Find(name string, dirs []string) (*Agent, error) {
	if isPath(name) {
		return Load(name)
	}
	for _, dir := range dirs {
		for _, ext := range extensions {
			p := filepath.Join(dir, name+ext)
			if _, err := os.Stat(p); err == nil {
				return Load(p)
			}
		}
	}
	for _, dir := range dirs {
		for _, p := range agentFiles(dir) {
			a, err := Load(p)
			if err == nil && a.ID == name {
				return a, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: %q (looked in %s)", ErrNotFound, name, strings.Join(dirs, ", "))
}

// List loads every agent file in dirs, sorted by id. An agent in an earlier
// folder hides one with the same id in a later folder. Files that fail to
// load are left out and their problems joined in the error.
func List(dirs []string) ([]*Agent, error) {
	var out []*Agent
	var errs []error
	seen := map[string]bool{}
	for _, dir := range dirs {
		for _, p := range agentFiles(dir) {
			a, err := Load(p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if seen[a.ID] {
				continue
			}
			seen[a.ID] = true
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, errors.Join(errs...)
}

// agentFiles lists dir's agent files, sorted; a missing dir has none.
func agentFiles(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") || strings.EqualFold(e.Name(), "README.md") {
			continue
		}
		if slices.Contains(extensions, strings.ToLower(filepath.Ext(e.Name()))) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// CheckConflicts reports every inline server that two agents, or an agent
// and the configuration, declare with the same id but different settings,
// naming both places. cfg may be nil.
func CheckConflicts(cfg *config.Config, agents []*Agent) error {
	type decl struct {
		s   config.Server
		pos config.Position
	}
	first := map[string]decl{}
	if cfg != nil {
		for _, s := range cfg.Servers {
			first[s.ID] = decl{s, s.Source}
		}
	}
	var errs []error
	for _, a := range agents {
		for _, e := range a.Servers {
			if e.Ref != "" {
				continue
			}
			if d, ok := first[e.Server.ID]; ok {
				if !d.s.Equal(e.Server) {
					errs = append(errs, conflict(e, d.pos))
				}
				continue
			}
			first[e.Server.ID] = decl{e.Server, e.Pos}
		}
	}
	return errors.Join(errs...)
}

func conflict(e ServerEntry, other config.Position) error {
	where := other.String()
	if other.Field != "" {
		where += " (" + other.Field + ")"
	}
	return &config.Problem{Pos: e.Pos, Field: e.Pos.Field,
		Msg: fmt.Sprintf("server %q is declared with different settings at %s; use ref: %s, or another id", e.Server.ID, where, e.Server.ID)}
}
