package interop

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// AptInstall installs Debian packages (PostgreSQL, Chromium) that a test
// needs and the machine lacks, without recommended packages and without
// asking; the package lists are refreshed when the first attempt fails (a
// fresh container has none). It needs root; the caller decides whether it
// may run.
func AptInstall(pkgs ...string) error {
	run := func(args ...string) error {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("apt-get %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	installArgs := append([]string{"install", "-y", "--no-install-recommends"}, pkgs...)
	if err := run(installArgs...); err == nil {
		return nil
	}
	if err := run("update"); err != nil {
		return err
	}
	return run(installArgs...)
}
