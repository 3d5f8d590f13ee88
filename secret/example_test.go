package secret_test

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/switchboardmcp/switchboard/secret"
)

func Example() {
	// In production the zero EnvStore reads SWITCHBOARD_SECRET_GITHUB.
	secrets := secret.EnvStore{LookupEnv: func(name string) (string, bool) {
		if name == "SWITCHBOARD_SECRET_GITHUB" {
			return "ghp_example0123", true
		}
		return "", false
	}}
	red := secret.NewRedactor()

	header, err := secret.Expand("Bearer {{ secrets.github }}", nil, secrets, red)
	fmt.Println(header, err)

	_, err = secret.Expand("Bearer {{secrets.gitlab}}", nil, secrets, red)
	fmt.Println(err)

	// Anything that leaves the process goes through the Redactor.
	fmt.Println(red.Redact("sending Authorization: " + header))
	log := slog.New(red.Handler(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})))
	log.Info("calling upstream", "authorization", header)
	// Output:
	// Bearer ghp_example0123 <nil>
	// {{secrets.gitlab}} is not set (set SWITCHBOARD_SECRET_GITLAB)
	// sending Authorization: Bearer [REDACTED]
	// level=INFO msg="calling upstream" authorization="Bearer [REDACTED]"
}
