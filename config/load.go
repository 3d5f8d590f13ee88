package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/internal/userfile"
)

// LoadOptions says where [Load] looks. The zero value (or nil) means the
// process's environment and working directory.
type LoadOptions struct {
	// File is the explicitly named config file (the caller takes it from
	// --config or SWITCHBOARD_CONFIG); "" means none. It must exist.
	File string
	// Dir is the working directory holding switchboard.toml; default ".".
	Dir string
	// UserConfigDir holds the user's config.toml; default
	// $XDG_CONFIG_HOME/switchboard, or ~/.config/switchboard.
	UserConfigDir string
	// Getenv looks up XDG_CONFIG_HOME and HOME; default os.Getenv.
	Getenv func(string) string
	// ReadFile reads a file; default [ReadFile]. A command about to change
	// a file passes its new content through it, so that the configuration
	// as it would be is loaded and validated before anything is written
	// (see [Edit]).
	ReadFile func(string) ([]byte, error)
}

// Load reads, in order, <UserConfigDir>/config.toml and <Dir>/switchboard.toml
// when they exist, then opts.File, and merges them: a later server with the
// same id replaces the earlier one whole, in the earlier one's place, and a
// later tool_name_format wins. It then applies the defaults (timeouts,
// tool_name_format, the transport inferred from command or url) and
// validates.
//
// On any problem Load returns the configuration as far as it could be read
// together with errors.Join of every [*Problem], from every file at once.
func Load(opts *LoadOptions) (*Config, error) {
	var o LoadOptions
	if opts != nil {
		o = *opts
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.ReadFile == nil {
		o.ReadFile = ReadFile
	}
	if o.Dir == "" {
		o.Dir = "."
	}
	if o.UserConfigDir == "" {
		o.UserConfigDir = UserConfigDir(o.Getenv)
	}

	var results []*fileResult
	read := map[string]bool{} // absolute paths, so that one file is read once
	load := func(path string, mustExist bool) {
		abs, err := filepath.Abs(path)
		if err == nil {
			if read[abs] {
				return
			}
			read[abs] = true
		}
		data, err := o.ReadFile(path)
		if err != nil {
			if !mustExist && errors.Is(err, fs.ErrNotExist) {
				return
			}
			results = append(results, readProblem(path, err))
			return
		}
		results = append(results, decodeFile(path, data, mustExist, o.Getenv("HOME")))
	}
	if o.UserConfigDir != "" {
		load(filepath.Join(o.UserConfigDir, "config.toml"), false)
	}
	load(filepath.Join(o.Dir, "switchboard.toml"), false)
	if o.File != "" {
		load(o.File, true)
	}
	return build(results)
}

// MaxFileBytes bounds a configuration file. One a person writes is a few
// kilobytes; the bound keeps a stray log, or a link to a device that never
// ends, from being read whole.
const MaxFileBytes = 4 << 20

// ReadFile reads a configuration file as [Load] does: only a regular file
// (a symbolic link is followed), of at most [MaxFileBytes]; a named pipe
// or a device is refused without being opened. The error names the file
// and says what it is or how large.
func ReadFile(path string) ([]byte, error) {
	return userfile.Read(path, MaxFileBytes, "a configuration")
}

// UserConfigDir is the folder of the user's config.toml, as [Load] finds
// it through getenv: $XDG_CONFIG_HOME/switchboard, else
// $HOME/.config/switchboard; "" when neither is set.
func UserConfigDir(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "switchboard")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "switchboard")
	}
	return ""
}

// LoadFile reads one file alone: native TOML, or mcpServers JSON when its
// name ends in .json or its content starts with '{'. Defaults and
// validation are as for [Load].
func LoadFile(path string) (*Config, error) {
	data, err := ReadFile(path)
	if err != nil {
		return build([]*fileResult{readProblem(path, err)})
	}
	home, _ := os.UserHomeDir()
	return build([]*fileResult{decodeFile(path, data, true, home)})
}

// decodeFile decodes one file in the format its name or content says; the
// well-known files are TOML only (allowJSON false). home is what ~ stands
// for in paths.
func decodeFile(path string, data []byte, allowJSON bool, home string) *fileResult {
	if allowJSON && isJSON(path, data) {
		return decodeJSON(path, data, home)
	}
	return decodeTOML(path, data, home)
}

func readProblem(path string, err error) *fileResult {
	r := newFileResult(path, decode.TOML, "")
	r.Problems = append(r.Problems, decode.Problem{Msg: ReadProblem(path, err).Msg})
	r.read = false // not listed in Config.Files
	return r
}

// build merges decoded files, applies defaults and validates.
func build(results []*fileResult) (*Config, error) {
	c := &Config{}
	v := &validator{files: map[string]*fileResult{}, merged: map[string]Position{}}
	var problems []*Problem
	var order []string
	byID := map[string]int{}   // id → index in c.Servers
	byName := map[string]int{} // name → index in c.Endpoints
	for _, r := range results {
		problems = append(problems, r.problems()...)
		order = append(order, r.File)
		if !r.read {
			continue
		}
		c.Files = append(c.Files, r.File)
		v.files[r.File] = r
		if r.toolNameFormatLine > 0 {
			c.ToolNameFormat = r.toolNameFormat
			v.tnfPos = Position{File: r.File, Line: r.toolNameFormatLine}
		}
		for _, w := range r.workflows {
			if !slices.Contains(c.Workflows, w) {
				c.Workflows = append(c.Workflows, w)
			}
		}
		for name, p := range r.providers {
			if c.Providers == nil {
				c.Providers = map[string]Provider{}
			}
			c.Providers[name] = p
		}
		for _, mt := range mergedTables {
			mt.merge(c, r, v)
		}
		// Guardrails run in order: every file's, the first file's first.
		c.Guardrails = append(c.Guardrails, r.guardrails...)
		mergeRegistries(c, r.registries)
		for _, e := range r.endpoints {
			// A later file's endpoint replaces the earlier one whole, in
			// its place.
			if i, ok := byName[e.Name]; ok {
				c.Endpoints[i] = e
				continue
			}
			byName[e.Name] = len(c.Endpoints)
			c.Endpoints = append(c.Endpoints, e)
		}
		for _, s := range r.servers {
			if i, ok := byID[s.ID]; ok && s.ID != "" {
				c.Servers[i] = s
				continue
			}
			byID[s.ID] = len(c.Servers)
			c.Servers = append(c.Servers, s)
		}
	}
	c.setDefaults()
	v.config(c)
	problems = append(problems, v.problems...)
	sortProblems(problems, order)
	sortProblems(v.warnings, order)
	c.Warnings = v.warnings
	return c, joinProblems(problems)
}

// setDefaults fills in what the files left unset.
func (c *Config) setDefaults() {
	if c.ToolNameFormat == "" {
		c.ToolNameFormat = DefaultToolNameFormat
	}
	for i := range c.Servers {
		s := &c.Servers[i]
		if s.Transport == "" {
			s.Transport = inferTransport(s)
		}
		if s.Timeout == 0 {
			s.Timeout = DefaultTimeout
		}
		if s.ConnectTimeout == 0 {
			s.ConnectTimeout = DefaultConnectTimeout
		}
	}
}

// Server returns the server with the given id.
func (c *Config) Server(id string) (Server, bool) {
	for _, s := range c.Servers {
		if s.ID == id {
			return s, true
		}
	}
	return Server{}, false
}
