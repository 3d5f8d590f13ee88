package version

import (
	"runtime/debug"
	"testing"
)

func TestRead(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	for _, tc := range []struct {
		name        string
		bi          *debug.BuildInfo
		short, line string
	}{
		{"no build info", nil, "devel", "devel"},
		{"go install @version", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: Module, Version: "v1.2.0"}},
			"v1.2.0", "v1.2.0 (go1.26.8)"},
		{"go build in a checkout", &debug.BuildInfo{GoVersion: "go1.26.8",
			Main: debug.Module{Path: Module, Version: "v0.0.0-20260102030405-0123456789ab+dirty"}, Settings: vcs},
			"v0.0.0-20260102030405-0123456789ab+dirty",
			"v0.0.0-20260102030405-0123456789ab+dirty (commit 0123456789abcdef0123456789abcdef01234567, modified, go1.26.8)"},
		{"no module version", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: Module, Version: "(devel)"}, Settings: vcs},
			"devel+0123456789ab-dirty", "devel+0123456789ab-dirty (commit 0123456789abcdef0123456789abcdef01234567, modified, go1.26.8)"},
		{"a dependency", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "example.com/app", Version: "v9.9.9"},
			Deps: []*debug.Module{{Path: "golang.org/x/term", Version: "v0.40.0"}, {Path: Module, Version: "v1.3.0"}}, Settings: vcs},
			"v1.3.0", "v1.3.0 (go1.26.8)"},
		{"a replaced dependency", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{{Path: Module, Version: "v1.3.0", Replace: &debug.Module{Path: "../switchboard", Version: "(devel)"}}}},
			"devel", "devel"},
	} {
		i := FromBuildInfo(tc.bi)
		if got := i.Short(); got != tc.short {
			t.Errorf("%s: Short() = %q, want %q", tc.name, got, tc.short)
		}
		if got := i.String(); got != tc.line {
			t.Errorf("%s: String() = %q, want %q", tc.name, got, tc.line)
		}
	}
}
