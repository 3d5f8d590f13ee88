package cli

import (
	"github.com/spf13/cobra"

	"github.com/switchboardmcp/switchboard/internal/version"
)

type versionJSON struct {
	Version  string `json:"version"`  // what servers and gateway clients are told (host.Version)
	Module   string `json:"module"`   // the module's own version: a tag, a pseudo-version or "(devel)"
	Commit   string `json:"commit"`   // "" when not built from a checkout
	Modified bool   `json:"modified"` // the checkout had uncommitted changes
	Time     string `json:"time,omitempty"`
	Go       string `json:"go"`
}

func (e *env) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print Switchboard's version and the commit it was built from",
		Long: `Prints the version of the module (a release tag, or a pseudo-version when built
in a checkout), the commit it was built from and whether the checkout had
changes, and the Go version, all from the build information. The gateway
tells its clients the same version (serverInfo), and servers are told it too
(clientInfo). --version prints the same line.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			i := version.Read()
			if e.jsonOut {
				return e.printJSON(versionJSON{Version: i.Short(), Module: i.Version, Commit: i.Commit, Modified: i.Modified, Time: i.Time, Go: i.Go})
			}
			e.printf("switchboard %s\n", i)
			return nil
		},
	}
}
