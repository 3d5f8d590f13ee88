package userfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// A Named is a kind of file people place in folders and name by id, such
// as agents and workflows: ./Folder, then
// $XDG_CONFIG_HOME/switchboard/Folder.
type Named[T any] struct {
	Noun   string   // "workflow", in messages
	Folder string   // "workflows"
	Exts   []string // the file formats, in the order Find tries them
	// Skip is a file name (any case) in the folders that is not one of
	// them ("README.md"); "" for none.
	Skip     string
	Load     func(path string) (T, error)
	ID       func(T) string
	NotFound error // the sentinel Find's error wraps
}

// Dirs returns the folders the files are found in, in order: ./Folder,
// then $XDG_CONFIG_HOME/switchboard/Folder (default
// ~/.config/switchboard/Folder). getenv nil means os.Getenv.
func (k *Named[T]) Dirs(getenv func(string) string) []string {
	if getenv == nil {
		getenv = os.Getenv
	}
	dirs := []string{k.Folder}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		dirs = append(dirs, filepath.Join(x, "switchboard", k.Folder))
	} else if h := getenv("HOME"); h != "" {
		dirs = append(dirs, filepath.Join(h, ".config", "switchboard", k.Folder))
	}
	return dirs
}

// IsPath reports whether name names a file rather than an id: it holds a
// path separator or ends in one of Exts.
func (k *Named[T]) IsPath(name string) bool {
	if strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) {
		return true
	}
	return slices.Contains(k.Exts, strings.ToLower(filepath.Ext(name)))
}

// Find loads the file called name: a file when name is a path
// ([Named.IsPath]), otherwise the one with that id in the first of dirs
// that has it — the file NAME.EXT for one of Exts, or else a file whose id
// is NAME.
func (k *Named[T]) Find(name string, dirs []string) (T, error) {
	if k.IsPath(name) {
		return k.Load(name)
	}
	for _, dir := range dirs {
		for _, ext := range k.Exts {
			p := filepath.Join(dir, name+ext)
			if _, err := os.Stat(p); err == nil {
				return k.Load(p)
			}
		}
	}
	for _, dir := range dirs {
		for _, p := range k.files(dir) {
			v, err := k.Load(p)
			if err == nil && k.ID(v) == name {
				return v, nil
			}
		}
	}
	var zero T
	return zero, fmt.Errorf("%w: %q (looked in %s)", k.NotFound, name, strings.Join(dirs, ", "))
}

// List loads every file in dirs, then the files listed, sorted by id. One
// in an earlier folder hides one with the same id in a later folder; a
// listed file whose id a folder has already is an error (two definitions,
// one name). Files that fail to load are left out and their problems
// joined in the error.
func (k *Named[T]) List(dirs []string, listed ...string) ([]T, error) {
	var out []T
	var errs []error
	seen := map[string]string{}
	loaded := map[string]bool{}
	for _, dir := range dirs {
		for _, p := range k.files(dir) {
			abs, _ := filepath.Abs(p)
			loaded[abs] = true
			v, err := k.Load(p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if _, dup := seen[k.ID(v)]; dup {
				continue
			}
			seen[k.ID(v)] = p
			out = append(out, v)
		}
	}
	for _, p := range listed {
		if abs, _ := filepath.Abs(p); loaded[abs] {
			continue // in a folder too
		}
		loaded[p] = true
		v, err := k.Load(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if prev, dup := seen[k.ID(v)]; dup {
			errs = append(errs, fmt.Errorf("%s: %s id %q is also %s's", p, k.Noun, k.ID(v), prev))
			continue
		}
		seen[k.ID(v)] = p
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return k.ID(out[i]) < k.ID(out[j]) })
	return out, errors.Join(errs...)
}

// files lists dir's files of the kind, sorted; a missing dir has none.
func (k *Named[T]) files(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") || k.Skip != "" && strings.EqualFold(e.Name(), k.Skip) {
			continue
		}
		if slices.Contains(k.Exts, strings.ToLower(filepath.Ext(e.Name()))) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}
