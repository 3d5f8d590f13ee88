package workflow

import (
	"errors"

	"github.com/switchboardmcp/switchboard/internal/userfile"
)

// ErrNotFound: no workflow file has that id.
var ErrNotFound = errors.New("workflow not found")

// files are workflow files, in ./workflows and the user's folder.
var files = &userfile.Named[*Workflow]{Noun: "workflow", Folder: "workflows", Exts: []string{".yaml", ".yml"},
	Load: Load, ID: func(w *Workflow) string { return w.ID }, NotFound: ErrNotFound}

// Dirs returns the folders workflows are found in, in order: ./workflows,
// then $XDG_CONFIG_HOME/switchboard/workflows (default
// ~/.config/switchboard/workflows). getenv nil means os.Getenv.
func Dirs(getenv func(string) string) []string { return files.Dirs(getenv) }

// IsPath reports whether name names a file rather than a workflow id: it
// holds a path separator or ends in .yaml or .yml.
func IsPath(name string) bool { return files.IsPath(name) }

// Find loads the workflow called name: a file when name is a path (it holds
// a path separator or ends in .yaml or .yml), otherwise the workflow with
// that id in the first of dirs that has it — the file NAME.yaml or
// NAME.yml, or else a file whose id field is NAME.
func Find(name string, dirs []string) (*Workflow, error) { return files.Find(name, dirs) }

// List loads every workflow file in dirs, then the files listed (the
// config's workflows = [...]), sorted by id. A workflow in an earlier
// folder hides one with the same id in a later folder; a listed file whose
// id a folder has already is an error (two definitions, one name). Files
// that fail to load are left out and their problems joined in the error.
func List(dirs []string, listed ...string) ([]*Workflow, error) { return files.List(dirs, listed...) }
