// Package version says which Switchboard is running: the module's version
// and the commit it was built from, read from the build information the
// go command embeds in every binary (runtime/debug.ReadBuildInfo), so that
// nothing has to be stamped by hand and the CLI, the servers a host
// connects to and a gateway's clients are told the same thing.
package version

import (
	"runtime/debug"
	"strings"
)

// Module is Switchboard's module path.
const Module = "github.com/switchboardmcp/switchboard"

// Info is what the build information says of Switchboard.
type Info struct {
	// Version is the module's version: a release tag (v1.2.0) when
	// installed with go install …@version, a pseudo-version
	// (v0.0.0-20260102030405-abcdef123456, "+dirty" when the checkout had
	// changes) when built in a checkout with Go 1.24 or later, else
	// "(devel)".
	Version string
	// Commit is the VCS revision the binary was built from (vcs.revision);
	// "" when the go command did not stamp one (go run, go test, -buildvcs=false,
	// or Switchboard is a dependency of another program).
	Commit string
	// Modified says the checkout had uncommitted changes (vcs.modified).
	Modified bool
	// Time is the commit's time (vcs.time, RFC 3339), "" when unknown.
	Time string
	// Go is the Go version the binary was built with.
	Go string
}

// Read returns the build information's Info. Switchboard is the main
// module (the switchboard binary) or a dependency (a program embedding the
// host or the gateway); without build information, Version is "(devel)".
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "(devel)"}
	}
	return FromBuildInfo(bi)
}

// FromBuildInfo is what bi says of Switchboard: the build information of
// this binary (Read), or of another one (debug/buildinfo.ReadFile).
func FromBuildInfo(bi *debug.BuildInfo) Info {
	info := Info{Version: "(devel)"}
	if bi == nil {
		return info
	}
	info.Go = bi.GoVersion
	mod := &bi.Main
	if mod.Path != Module {
		mod = nil
		for _, d := range bi.Deps {
			if d.Path == Module {
				mod = d
				if d.Replace != nil {
					mod = d.Replace
				}
				break
			}
		}
	}
	if mod != nil && mod.Version != "" {
		info.Version = mod.Version
	}
	if bi.Main.Path == Module {
		// The VCS settings describe the main module's checkout only.
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			case "vcs.time":
				info.Time = s.Value
			}
		}
	}
	return info
}

// Short is the version to announce (serverInfo, clientInfo): Version,
// or for a "(devel)" build "devel" with the commit's first 12 digits when
// known ("devel+abcdef123456", "+dirty" when modified).
func (i Info) Short() string {
	if i.Version != "(devel)" && i.Version != "" {
		return i.Version
	}
	if i.Commit == "" {
		return "devel"
	}
	s := "devel+" + shortCommit(i.Commit)
	if i.Modified {
		s += "-dirty"
	}
	return s
}

// String is what `switchboard version` prints after the program's name:
// Short, then what else is known in parentheses — the whole commit,
// whether the checkout was modified, the Go version.
func (i Info) String() string {
	var more []string
	if i.Commit != "" {
		more = append(more, "commit "+i.Commit)
		if i.Modified {
			more = append(more, "modified")
		}
	}
	if i.Go != "" {
		more = append(more, i.Go)
	}
	if len(more) == 0 {
		return i.Short()
	}
	return i.Short() + " (" + strings.Join(more, ", ") + ")"
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
