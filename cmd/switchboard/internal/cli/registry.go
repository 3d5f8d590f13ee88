package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/registry"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/toolpin"
)

// registryCacheDir is where registry answers are kept with their ETags:
// $XDG_CACHE_HOME/switchboard/registry, else ~/.cache/switchboard/registry.
func (e *env) registryCacheDir() string {
	base := e.getenv("XDG_CACHE_HOME")
	if base == "" {
		home := e.getenv("HOME")
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "switchboard", "registry")
}

// registryClient returns a client of reg, its token resolved.
func (e *env) registryClient(cfg *config.Config, reg config.Registry) (*registry.Client, error) {
	token := ""
	if reg.Token != "" {
		t, err := secret.Expand(reg.Token, e.lookupEnv, e.secretStore(), e.red)
		if err != nil {
			return nil, fmt.Errorf("registry %s: token: %w", reg.Name, err)
		}
		token = t
	}
	return registry.New(reg.URL, &registry.Options{
		Token:    token,
		CacheDir: e.registryCacheDir(),
		Network:  &netguard.Network{AllowCIDRs: cfg.Network.AllowCIDRs, DenyCIDRs: cfg.Network.DenyCIDRs},
	})
}

// registriesFor returns the configured registries, or only the one named.
func registriesFor(cfg *config.Config, name string) ([]config.Registry, error) {
	all := cfg.RegistryList()
	if name == "" {
		return all, nil
	}
	for _, r := range all {
		if r.Name == name {
			return []config.Registry{r}, nil
		}
	}
	var names []string
	for _, r := range all {
		names = append(names, r.Name)
	}
	return nil, usageErr("no registry %q (configured: %s)", name, strings.Join(names, ", "))
}

// registryByURL returns the configured registry at url, or one without a
// token.
func registryByURL(cfg *config.Config, url string) config.Registry {
	for _, r := range cfg.RegistryList() {
		if strings.TrimSuffix(r.URL, "/") == strings.TrimSuffix(url, "/") {
			return r
		}
	}
	return config.Registry{Name: url, URL: url}
}

type registryErrorJSON = registry.SearchError

func (e *env) searchCommand() *cobra.Command {
	var regName string
	cmd := &cobra.Command{
		Use:   "search [QUERY]",
		Short: "Search MCP registries for servers",
		Long: `Lists the latest version of each server whose name contains QUERY, from
every registry the configuration declares ([[registries]]), or the official
one (` + config.DefaultRegistryURL + `) when it declares none: name, version, how it
runs (npm, pypi, oci, streamable-http, sse, …), status and description. An
entry that does not validate against the server.json schema is listed as
invalid. Add one with: switchboard add --from-registry NAME[@VERSION]`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			query := ""
			if len(args) == 1 {
				query = args[0]
			}
			cfg, err := e.loadConfig()
			if err != nil {
				return err
			}
			regs, err := registriesFor(cfg, regName)
			if err != nil {
				return err
			}
			var named []registry.Named
			var unread []registry.SearchError
			for _, reg := range regs {
				c, err := e.registryClient(cfg, reg)
				if err != nil {
					unread = append(unread, registry.SearchError{Registry: reg.Name, Error: err.Error()})
					continue
				}
				named = append(named, registry.Named{Name: reg.Name, Client: c})
			}
			out := registry.SearchAll(cmd.Context(), named, query)
			if len(unread) > 0 {
				out.Errors = append(unread, out.Errors...)
			}
			for _, x := range out.Errors {
				fmt.Fprintf(e.stderr, "switchboard: warning: registry %s: %s\n", x.Registry, x.Error)
			}
			if len(out.Errors) == len(regs) {
				if e.jsonOut {
					e.printJSON(out)
				}
				return failed(errors.New("search: no registry answered"))
			}
			if e.jsonOut {
				return e.printJSON(out)
			}
			if len(out.Servers) == 0 {
				fmt.Fprintf(e.stderr, "switchboard: no server matches %q\n", query)
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tVERSION\tKINDS\tSTATUS\tDESCRIPTION")
			for _, s := range out.Servers {
				status := s.Status
				if s.Invalid != "" {
					status = "invalid"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.Version, strings.Join(s.Kinds, ","), status, s.Description)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&regName, "registry", "", "search only this registry (by its name in [[registries]])")
	return cmd
}

// registryFlags are add's and upgrade's flags for a registry entry.
type registryFlags struct {
	from, registry, kind, id string
	vars, varEnv             []string
	force                    bool
	// env is add's --env: variables set on top of the entry's.
	env []string
}

func (f *registryFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.registry, "registry", "", "the registry to read (by its name in [[registries]]; default: the first that has the server)")
	fl.StringVar(&f.kind, "kind", "", "which package or remote of the entry to use: npm, pypi, oci or remote (default: the first of those it has)")
	fl.StringArrayVar(&f.vars, "var", nil, "a value the entry asks for, `NAME=VALUE` (repeatable); a secret one goes to the secret store")
	fl.StringArrayVar(&f.varEnv, "var-env", nil, "a value the entry asks for, read from an environment variable: `NAME=ENVVAR` (repeatable), keeping a secret off the command line")
	fl.BoolVar(&f.force, "force", false, "install a version the registry marks deprecated or deleted")
}

// values collects the values given by flags; entryValues redacts and
// stores those the entry marks secret.
func (f *registryFlags) values(e *env) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range f.vars {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageErr("--var wants NAME=VALUE")
		}
		m[k] = v
	}
	for _, kv := range f.varEnv {
		k, name, ok := strings.Cut(kv, "=")
		if !ok || k == "" || name == "" {
			return nil, usageErr("--var-env wants NAME=ENVVAR")
		}
		v, ok := e.lookupEnv(name)
		if !ok {
			return nil, usageErr("--var-env %s: environment variable %s is not set", k, name)
		}
		m[k] = v
	}
	return m, nil
}

// findEntry reads name@version from the first registry that has it.
func (e *env) findEntry(cfg *config.Config, f *registryFlags, name, version string) (registry.Entry, error) {
	regs, err := registriesFor(cfg, f.registry)
	if err != nil {
		return registry.Entry{}, err
	}
	var errs []error
	for _, reg := range regs {
		c, err := e.registryClient(cfg, reg)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		en, err := c.Get(e.ctx, name, version)
		if err == nil {
			return en, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 1 && errors.Is(errs[0], registry.ErrNotFound) {
		return registry.Entry{}, usageErr("%v (switchboard search %s)", errs[0], name)
	}
	return registry.Entry{}, failed(errors.Join(errs...))
}

// containerRuntime is the container runtime on PATH, "" when none.
func containerRuntime() string {
	for _, r := range []string{"docker", "podman"} {
		if _, err := exec.LookPath(r); err == nil {
			return r
		}
	}
	return ""
}

// entryValues completes values for en's variables: from the flags, else a
// prompt on a terminal. Secret values are kept apart (secrets, by the
// name they will be stored under) and replaced by their placeholders.
func (e *env) entryValues(en registry.Entry, kind, id string, values map[string]string) (map[string]string, map[string]string, error) {
	vars, err := registry.Variables(en.Server, kind)
	if err != nil {
		return nil, nil, usageErr("add: %v", err)
	}
	known := map[string]bool{}
	for _, v := range vars {
		known[v.Key] = true
	}
	for k := range values {
		if !known[k] {
			var keys []string
			for _, v := range vars {
				keys = append(keys, v.Key)
			}
			return nil, nil, usageErr("add: %s does not ask for %s (it asks for: %s)", en.Server.Name, k, strings.Join(keys, ", "))
		}
	}
	tty := false
	var f *os.File
	if x, ok := e.stdin.(*os.File); ok && term.IsTerminal(int(x.Fd())) {
		f, tty = x, true
	}
	var in *bufio.Reader
	secrets := map[string]string{}
	for _, v := range vars {
		val, given := values[v.Key]
		if !given && tty {
			what := v.Description
			if v.Default != "" {
				what += fmt.Sprintf(" [default %s]", v.Default)
			}
			if !v.IsRequired {
				what += " (optional: Enter to skip)"
			}
			fmt.Fprintf(e.stderr, "%s %s: %s\n%s: ", v.Where, v.Key, what, v.Key)
			if v.IsSecret {
				b, err := term.ReadPassword(int(f.Fd()))
				fmt.Fprintln(e.stderr)
				if err != nil {
					return nil, nil, failed(fmt.Errorf("reading %s: %w", v.Key, err))
				}
				val = string(b)
			} else {
				if in == nil {
					in = bufio.NewReader(f)
				}
				line, _ := in.ReadString('\n')
				val = strings.TrimRight(line, "\r\n")
			}
			if val == "" {
				continue
			}
			given = true
		}
		if !given {
			continue
		}
		if v.IsSecret && !strings.Contains(val, "{{secrets.") && !strings.Contains(val, "{{env.") {
			e.red.Add(val)
			name := registry.SecretName(id, v.Key)
			secrets[name] = val
			val = "{{secrets." + name + "}}"
		}
		values[v.Key] = val
	}
	return values, secrets, nil
}

// addFromRegistry is `switchboard add --from-registry NAME[@VERSION]`.
func (e *env) addFromRegistry(f *registryFlags, replace, dryRun bool) error {
	cfg, err := e.loadBefore()
	if err != nil {
		return err
	}
	name, version, _ := strings.Cut(f.from, "@")
	en, err := e.findEntry(cfg, f, name, version)
	if err != nil {
		return err
	}
	if err := registry.Installable(en, f.force); err != nil {
		return usageErr("add: %v", err)
	}
	if en.Status() != registry.StatusActive {
		fmt.Fprintf(e.stderr, "switchboard: warning: %s %s is %s in the registry; installed as --force asks\n", en.Server.Name, en.Server.Version, en.Status())
	}
	id := f.id
	if id == "" {
		id = registry.DefaultID(en.Server.Name)
	}
	given, err := f.values(e)
	if err != nil {
		return err
	}
	values, secrets, err := e.entryValues(en, f.kind, id, given)
	if err != nil {
		return err
	}
	s, err := registry.Convert(en, &registry.ConvertOptions{ID: id, Kind: f.kind, Values: values, ContainerRuntime: containerRuntime(), Force: f.force})
	if err != nil {
		return usageErr("add: %v", err)
	}
	for _, kv := range f.env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usageErr("add: --env wants NAME=VALUE, not %q", k)
		}
		if s.Command == "" {
			return usageErr("add: --env is for a server run as a command; %s is a remote", en.Server.Name)
		}
		if s.Env == nil {
			s.Env = map[string]string{}
		}
		s.Env[k] = v
	}
	if s.Command == "docker" || s.Command == "podman" {
		if !strings.Contains(strings.Join(s.Args, " "), "@sha256:") {
			fmt.Fprintf(e.stderr, "switchboard: warning: %s: the entry pins its image by tag, which its publisher can move; pin a digest (image@sha256:…) with switchboard edit if you need one\n", id)
		}
	}
	stored, err := e.storeSecrets(secrets, dryRun)
	if err != nil {
		return err
	}
	if err := e.add(s, replace, dryRun); err != nil {
		e.unstoreSecrets(stored)
		return err
	}
	return nil
}

// storeSecrets stores the secret values an entry was given.
func (e *env) storeSecrets(secrets map[string]string, dryRun bool) ([]string, error) {
	if len(secrets) == 0 || dryRun {
		return nil, nil
	}
	v, err := e.openStore()
	if err != nil {
		return nil, failed(fmt.Errorf("add: the secret store: %w", err))
	}
	var stored []string
	for _, name := range slices.Sorted(mapKeysOf(secrets)) {
		if err := v.Set(name, secrets[name]); err != nil {
			e.unstoreSecrets(stored)
			return nil, failed(fmt.Errorf("add: storing secret %s: %w", name, err))
		}
		stored = append(stored, name)
		fmt.Fprintf(e.stderr, "switchboard: secret %s stored (%s)\n", name, v.Backend())
	}
	return stored, nil
}

// unstoreSecrets removes the secrets an add that failed stored.
func (e *env) unstoreSecrets(names []string) {
	if len(names) == 0 {
		return
	}
	v, err := e.openStore()
	if err != nil {
		return
	}
	for _, n := range names {
		v.Delete(n)
	}
}

func mapKeysOf(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

type outdatedJSON struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Current       string `json:"current"`
	Latest        string `json:"latest"`
	Registry      string `json:"registry"`
	CurrentStatus string `json:"current_status,omitempty"`
}

type outdatedListJSON struct {
	Outdated []outdatedJSON      `json:"outdated"`
	Errors   []registryErrorJSON `json:"errors"`
}

func (e *env) outdatedCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "outdated",
		Short: "List servers added from a registry that have a newer version",
		Long: `For every server added with switchboard add --from-registry (those with a
registry = { name, version, url } table), asks its registry for the latest
version and lists the servers whose pinned version is older, and those whose
pinned version the registry now marks deprecated or deleted. Move one with
switchboard upgrade ID.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := e.loadConfig()
			if err != nil {
				return err
			}
			out := outdatedListJSON{Outdated: []outdatedJSON{}, Errors: []registryErrorJSON{}}
			for _, s := range cfg.Servers {
				if s.Registry == nil {
					continue
				}
				row, err := e.outdated(cfg, s)
				if err != nil {
					out.Errors = append(out.Errors, registryErrorJSON{Registry: s.Registry.URL, Error: fmt.Sprintf("%s: %v", s.ID, err)})
					fmt.Fprintf(e.stderr, "switchboard: warning: %s: %v\n", s.ID, err)
					continue
				}
				if row.Latest != row.Current || row.CurrentStatus != "" {
					out.Outdated = append(out.Outdated, row)
				}
			}
			if e.jsonOut {
				return e.printJSON(out)
			}
			if len(out.Outdated) == 0 {
				fmt.Fprintln(e.stderr, "switchboard: every server added from a registry is at its latest version")
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tCURRENT\tLATEST\tNOTE")
			for _, r := range out.Outdated {
				note := ""
				if r.CurrentStatus != "" {
					note = "current version " + r.CurrentStatus
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Name, r.Current, r.Latest, note)
			}
			return tw.Flush()
		},
	}
}

// outdated compares server s with its registry's latest version.
func (e *env) outdated(cfg *config.Config, s config.Server) (outdatedJSON, error) {
	row := outdatedJSON{ID: s.ID, Name: s.Registry.Name, Current: s.Registry.Version, Registry: s.Registry.URL}
	c, err := e.registryClient(cfg, registryByURL(cfg, s.Registry.URL))
	if err != nil {
		return row, err
	}
	latest, err := c.Get(e.ctx, s.Registry.Name, "latest")
	if err != nil {
		return row, err
	}
	row.Latest = latest.Server.Version
	if cur, err := c.Get(e.ctx, s.Registry.Name, s.Registry.Version); err == nil && cur.Status() != registry.StatusActive {
		row.CurrentStatus = cur.Status()
	}
	return row, nil
}

// kindOf is the registry kind an entry written by Convert was made from.
func kindOf(s config.Server) string {
	switch s.Command {
	case "npx":
		return registry.KindNPM
	case "uvx":
		return registry.KindPyPI
	case "docker", "podman":
		return registry.KindOCI
	case "":
		return registry.KindRemote
	}
	return ""
}

func (e *env) upgradeCommand() *cobra.Command {
	var f registryFlags
	var to string
	var dryRun, checkTools bool
	cmd := &cobra.Command{
		Use:   "upgrade ID",
		Short: "Move a server added from a registry to its latest version",
		Long: `Rewrites server ID, added with switchboard add --from-registry, as the
registry's latest version of its entry (or --to VERSION) describes it, and
shows the change to its table. Its environment variables and headers keep
their values (secrets stay in the secret store, under the same names); a
value the new version asks for anew is asked for as add asks. The rest of
its settings (timeouts, pin, tools_allowlist, …) are kept.

The tool definitions the new version offers are checked against the server's
pins when it next starts, if it pins them (pin = "first-use" or "approve"):
a changed definition is held and listed by switchboard tools changes.
--tools starts the server before and after the change (here, not in a
running serve) and lists the tool definitions the new version adds, removes
and changes, each change as a line diff; under a pin, a changed one is said
to be held, with the command that approves it.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("upgrade: name one server: switchboard upgrade ID")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.upgrade(&f, args[0], to, dryRun, checkTools)
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&checkTools, "tools", false, "start the server before and after, and list the tool definitions the new version changes")
	cmd.Flags().StringVar(&to, "to", "", "the version to move to (default: the latest)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show the change; write nothing")
	return cmd
}

func (e *env) upgrade(f *registryFlags, id, to string, dryRun, checkTools bool) error {
	cfg, err := e.loadBefore()
	if err != nil {
		return err
	}
	old, ok := cfg.Server(id)
	if !ok {
		return usageErr("upgrade %s: no such server (%s)", id, serverIDs(cfg))
	}
	// The table as the file writes it, without the defaults loading
	// fills in, so that the table rewritten keeps to what it said.
	if target, err := e.editTarget(""); err == nil {
		if ed, err := e.openEdit(target); err == nil {
			for _, x := range ed.Servers() {
				if x.ID == id {
					old = x
				}
			}
		}
	}
	if old.Registry == nil {
		return usageErr("upgrade %s: not added from a registry (it has no registry = { … } table); switchboard add --from-registry NAME --id %s --replace replaces it", id, id)
	}
	if f.registry == "" {
		f.registry = registryByURL(cfg, old.Registry.URL).Name
		if _, err := registriesFor(cfg, f.registry); err != nil {
			f.registry = ""
		}
	}
	var en registry.Entry
	if f.registry == "" {
		c, err := e.registryClient(cfg, registryByURL(cfg, old.Registry.URL))
		if err != nil {
			return failed(err)
		}
		if en, err = c.Get(e.ctx, old.Registry.Name, to); err != nil {
			return failed(err)
		}
	} else if en, err = e.findEntry(cfg, f, old.Registry.Name, to); err != nil {
		return err
	}
	if en.Server.Version == old.Registry.Version {
		fmt.Fprintf(e.stderr, "switchboard: %s is at %s %s already\n", id, en.Server.Name, en.Server.Version)
		return nil
	}
	if err := registry.Installable(en, f.force); err != nil {
		return usageErr("upgrade %s: %v", id, err)
	}
	kind := f.kind
	if kind == "" {
		kind = kindOf(old)
	}
	given, err := f.values(e)
	if err != nil {
		return err
	}
	// The values the server has now, by name, unless a flag gives another.
	for k, v := range old.Env {
		if _, ok := given[k]; !ok {
			given[k] = v
		}
	}
	for k, v := range old.Headers {
		if _, ok := given[k]; !ok {
			given[k] = v
		}
	}
	vars, err := registry.Variables(en.Server, kind)
	if err != nil {
		return usageErr("upgrade %s: %v", id, err)
	}
	asked := map[string]bool{}
	for _, v := range vars {
		asked[v.Key] = true
	}
	for k := range given {
		if !asked[k] {
			delete(given, k)
		}
	}
	values, secrets, err := e.entryValues(en, kind, id, given)
	if err != nil {
		return err
	}
	conv, err := registry.Convert(en, &registry.ConvertOptions{ID: id, Kind: kind, Values: values, ContainerRuntime: containerRuntime(), Force: f.force})
	if err != nil {
		return usageErr("upgrade %s: %v", id, err)
	}
	s := old
	s.Source = config.Position{}
	s.Description, s.Transport, s.Command, s.Args, s.Env, s.URL, s.Headers, s.Registry =
		conv.Description, conv.Transport, conv.Command, conv.Args, conv.Env, conv.URL, conv.Headers, conv.Registry
	if old.Transport == "" || old.Transport == inferredTransport(old) {
		s.Transport = conv.Transport
	}
	if s.Transport == inferredTransport(s) {
		s.Transport = ""
	}
	diff := lineDiff(string(config.ServerTOML(old)), string(config.ServerTOML(s)))
	fmt.Fprintf(e.stderr, "switchboard: %s: %s %s → %s\n", id, en.Server.Name, old.Registry.Version, en.Server.Version)
	e.printf("%s", diff)
	if old.Pin != "" && old.Pin != config.PinOff {
		fmt.Fprintf(e.stderr, "switchboard: %s pins its tool definitions (pin = %q): those the new version changes are held at its next start; see switchboard tools changes\n", id, old.Pin)
	} else {
		fmt.Fprintf(e.stderr, "switchboard: %s does not pin its tool definitions: the new version's tools are offered as they come (pin = \"first-use\" would hold changed ones)\n", id)
	}
	var before map[string]*mcp.Tool
	if checkTools && !dryRun {
		if before, err = e.serverTools(id); err != nil {
			fmt.Fprintf(e.stderr, "switchboard: warning: %s %s did not start (%v): the new version's tools are listed as new\n", id, old.Registry.Version, err)
		}
	}
	stored, err := e.storeSecrets(secrets, dryRun)
	if err != nil {
		return err
	}
	if err := e.add(s, true, dryRun); err != nil {
		e.unstoreSecrets(stored)
		return err
	}
	if checkTools && !dryRun {
		return e.toolsChanged(id, old, en.Server.Version, before)
	}
	return nil
}

// serverTools starts server id alone, here, and returns its tools by
// their own names.
func (e *env) serverTools(id string) (map[string]*mcp.Tool, error) {
	saved := e.noDaemon
	e.noDaemon = true
	defer func() { e.noDaemon = saved }()
	h, _, err := e.startHost(e.ctx, false, id)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	out := map[string]*mcp.Tool{}
	for _, t := range h.Tools() {
		if t.Server == id {
			out[t.Tool.Name] = t.Tool
		}
	}
	return out, nil
}

// toolsChanged prints the tool definitions of server id that changed
// from before to its version now written.
func (e *env) toolsChanged(id string, old config.Server, version string, before map[string]*mcp.Tool) error {
	after, err := e.serverTools(id)
	if err != nil {
		return failed(fmt.Errorf("upgrade %s: the new version did not start, so its tools are not compared: %w", id, err))
	}
	held := map[string]daemon.ToolChange{}
	if old.Pin != "" && old.Pin != config.PinOff {
		if p, done, err := e.openPins(e.ctx); err == nil {
			changes, _ := p.ToolChanges(e.ctx, id)
			done()
			for _, c := range changes {
				held[c.Tool] = c
			}
		}
	}
	names := map[string]bool{}
	for n := range before {
		names[n] = true
	}
	for n := range after {
		names[n] = true
	}
	for n := range held {
		names[n] = true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tools of %s, %s → %s:\n", id, old.Registry.Version, version)
	changed := 0
	for _, n := range slices.Sorted(mapKeysBool(names)) {
		a, inA := before[n]
		c, inB := after[n]
		if h, ok := held[n]; ok {
			changed++
			fmt.Fprintf(&b, "~ %s: held until approved (%s): switchboard tools approve %s %s\n", n, h.Reason, id, n)
			for _, l := range strings.Split(strings.TrimSuffix(h.Diff, "\n"), "\n") {
				fmt.Fprintf(&b, "    %s\n", l)
			}
			continue
		}
		switch {
		case inA && !inB:
			changed++
			fmt.Fprintf(&b, "- %s: gone\n", n)
		case !inA && inB:
			changed++
			fmt.Fprintf(&b, "+ %s: new\n", n)
		default:
			d := toolpin.Diff(toolpin.Of(a), toolpin.Of(c))
			if d == "" {
				continue
			}
			changed++
			fmt.Fprintf(&b, "~ %s: changed\n", n)
			for _, l := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
				fmt.Fprintf(&b, "    %s\n", l)
			}
		}
	}
	if changed == 0 {
		fmt.Fprintf(&b, "  (no tool definition changed: %d tools)\n", len(after))
	}
	e.printf("%s", b.String())
	return nil
}

func mapKeysBool(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func inferredTransport(s config.Server) config.Transport {
	if s.URL != "" {
		return config.TransportHTTP
	}
	return config.TransportStdio
}

// lineDiff is a minimal line diff of two short texts: lines only in a as
// "- ", only in b as "+ ", common ones as "  ".
func lineDiff(a, b string) string {
	al, bl := strings.Split(strings.TrimSuffix(a, "\n"), "\n"), strings.Split(strings.TrimSuffix(b, "\n"), "\n")
	// Longest common subsequence; a server's table is a few lines.
	n, m := len(al), len(bl)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if al[i] == bl[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && al[i] == bl[j]:
			out.WriteString("  " + al[i] + "\n")
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			out.WriteString("- " + al[i] + "\n")
			i++
		default:
			out.WriteString("+ " + bl[j] + "\n")
			j++
		}
	}
	return out.String()
}
