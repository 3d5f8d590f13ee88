package workflow

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// ErrNotFound: no workflow file has that id.
var ErrNotFound = errors.New("workflow not found")

// extensions are the workflow file formats, in the order Find tries them.
var extensions = []string{".yaml", ".yml"}

// Dirs returns the folders workflows are found in, in order: ./workflows,
// then $XDG_CONFIG_HOME/switchboard/workflows (default
// ~/.config/switchboard/workflows). getenv nil means os.Getenv.
func Dirs(getenv func(string) string) []string {
	if getenv == nil {
		getenv = os.Getenv
	}
	dirs := []string{"workflows"}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		dirs = append(dirs, filepath.Join(x, "switchboard", "workflows"))
	} else if h := getenv("HOME"); h != "" {
		dirs = append(dirs, filepath.Join(h, ".config", "switchboard", "workflows"))
	}
	return dirs
}

// IsPath reports whether name names a file rather than a workflow id: it
// holds a path separator or ends in .yaml or .yml.
func IsPath(name string) bool {
	if strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) {
		return true
	}
	return slices.Contains(extensions, strings.ToLower(filepath.Ext(name)))
}

// Find loads the workflow called name: a file when name is a path (it holds
// a path separator or ends in .yaml or .yml), otherwise the workflow with
// that id in the first of dirs that has it — the file NAME.yaml or
// NAME.yml, or else a file whose id field is NAME.
func Find(name string, dirs []string) (*Workflow, error) {
	if IsPath(name) {
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
		for _, p := range files(dir) {
			w, err := Load(p)
			if err == nil && w.ID == name {
				return w, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: %q (looked in %s)", ErrNotFound, name, strings.Join(dirs, ", "))
}

// List loads every workflow file in dirs, then the files listed (the
// config's workflows = [...]), sorted by id. A workflow in an earlier
// folder hides one with the same id in a later folder; a listed file whose
// id a folder has already is an error (two definitions, one name). Files
// that fail to load are left out and their problems joined in the error.
func List(dirs []string, listed ...string) ([]*Workflow, error) {
	var out []*Workflow
	var errs []error
	seen := map[string]string{}
	loaded := map[string]bool{}
	for _, dir := range dirs {
		for _, p := range files(dir) {
			abs, _ := filepath.Abs(p)
			loaded[abs] = true
			w, err := Load(p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if _, dup := seen[w.ID]; dup {
				continue
			}
			seen[w.ID] = p
			out = append(out, w)
		}
	}
	for _, p := range listed {
		if abs, _ := filepath.Abs(p); loaded[abs] {
			continue // in a folder too
		}
		loaded[p] = true
		w, err := Load(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if prev, dup := seen[w.ID]; dup {
			errs = append(errs, fmt.Errorf("%s: workflow id %q is also %s's", p, w.ID, prev))
			continue
		}
		seen[w.ID] = p
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, errors.Join(errs...)
}

// files lists dir's workflow files, sorted; a missing dir has none.
func files(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if slices.Contains(extensions, strings.ToLower(filepath.Ext(e.Name()))) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}
