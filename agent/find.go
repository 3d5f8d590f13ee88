package agent

import (
	"errors"
	"fmt"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/internal/userfile"
)

// ErrNotFound: no agent file has that name.
var ErrNotFound = errors.New("agent not found")

// files are agent files: Markdown with front matter or YAML, in ./agents
// and the user's folder.
var files = &userfile.Named[*Agent]{Noun: "agent", Folder: "agents", Exts: []string{".md", ".yaml", ".yml"}, Skip: "README.md",
	Load: Load, ID: func(a *Agent) string { return a.ID }, NotFound: ErrNotFound}

// Dirs returns the folders agents are found in, in order: ./agents, then
// $XDG_CONFIG_HOME/switchboard/agents (default ~/.config/switchboard/agents).
// getenv nil means os.Getenv.
func Dirs(getenv func(string) string) []string { return files.Dirs(getenv) }

// Find loads the agent called name: a file when name is a path (it holds a
// path separator or ends in .md, .yaml or .yml), otherwise the agent with
// that id in the first of dirs that has it — the file NAME.md, NAME.yaml or
// NAME.yml, or else a file whose id field is NAME.
func Find(name string, dirs []string) (*Agent, error) { return files.Find(name, dirs) }

// List loads every agent file in dirs, sorted by id. An agent in an earlier
// folder hides one with the same id in a later folder. Files that fail to
// load are left out and their problems joined in the error.
func List(dirs []string) ([]*Agent, error) { return files.List(dirs) }

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
