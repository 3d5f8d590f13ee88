package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/switchboardmcp/switchboard/secret"
)

// maxSecretBytes bounds a secret read from stdin: a value is a token or a
// key, and `secrets set x < /dev/zero` must not eat the memory.
const maxSecretBytes = 64 << 10

// openStore opens the secret store the environment selects.
func (e *env) openStore() (secret.Vault, error) {
	return secret.OpenStore(&secret.StoreOptions{LookupEnv: e.lookupEnv})
}

// secretStore is the store a host start resolves {{secrets.NAME}} with:
// the OS keyring or encrypted file, then the environment. If the store
// cannot be opened, the environment alone, with a warning.
func (e *env) secretStore() secret.Store {
	v, err := e.openStore()
	if err != nil {
		fmt.Fprintf(e.stderr, "switchboard: warning: %v; reading secrets from the environment only\n", err)
		return secret.EnvStore{LookupEnv: e.lookupEnv}
	}
	return v
}

type secretsJSON struct {
	Backend  string `json:"backend"`
	Location string `json:"location"`
	Fallback string `json:"fallback"`
}

func (e *env) secretsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secrets",
		Short: "Manage the secrets {{secrets.NAME}} placeholders read",
		Long: `Manages the secrets that {{secrets.NAME}} placeholders in env and headers
values resolve to. Alone, says which backend is in use.

Secrets live in the OS keyring where one answers (Keychain, Credential
Manager, the Secret Service over D-Bus), otherwise in an encrypted file under
$XDG_CONFIG_HOME/switchboard/ (AES-256-GCM, its key in a separate 0600
file). A secret the backend lacks is read from the environment variable
SWITCHBOARD_SECRET_<NAME> (upper-cased, '-' and '.' as '_').
SWITCHBOARD_SECRETS_BACKEND=keyring|file|env forces a backend.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := e.openStore()
			if err != nil {
				return failed(err)
			}
			j := secretsJSON{Backend: v.Backend(), Location: v.Location(), Fallback: "environment variables SWITCHBOARD_SECRET_<NAME>"}
			if v.Backend() == secret.BackendEnv {
				j.Fallback = ""
			}
			if e.jsonOut {
				return e.printJSON(j)
			}
			e.printf("backend: %s\nlocation: %s\n", j.Backend, j.Location)
			if j.Fallback != "" {
				e.printf("fallback: %s\n", j.Fallback)
			}
			return nil
		},
	}
	cmd.AddCommand(e.secretsSetCommand(), e.secretsListCommand(), e.secretsRmCommand())
	return cmd
}

func (e *env) secretsSetCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "set NAME",
		Short: "Store a secret; the value is read from stdin or a hidden prompt",
		Long: `Stores secret NAME. The value is read from stdin (one trailing newline is
dropped), or from a prompt that does not echo when stdin is a terminal. It is
never taken from the command line, which every user on the machine can read.`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usageErr("secrets set: name the secret: switchboard secrets set NAME")
			case len(args) > 1:
				// Do not echo the extra arguments: one of them is likely the value.
				return usageErr("secrets set takes only NAME; the value is read from stdin or a prompt, never from the command line")
			}
			if err := secret.ValidateName(args[0]); err != nil {
				return usageErr("secrets set: %v", err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			v, err := e.openStore()
			if err != nil {
				return failed(err)
			}
			value, err := e.readSecret(name)
			if err != nil {
				return err
			}
			// Whatever happens next, the value must not reach output.
			e.red.Add(value)
			if err := v.Set(name, value); err != nil {
				return failed(fmt.Errorf("secrets set %s: %w", name, err))
			}
			if len(value) < secret.MinLen {
				fmt.Fprintf(e.stderr, "switchboard: warning: a value shorter than %d bytes is not redacted from output\n", secret.MinLen)
			}
			fmt.Fprintf(e.stderr, "switchboard: secret %s stored (%s)\n", name, v.Backend())
			return nil
		},
	}
}

// readSecret reads a value from a terminal without echo, or from stdin.
func (e *env) readSecret(name string) (string, error) {
	if f, ok := e.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(e.stderr, "Value for %s: ", name)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(e.stderr)
		if err != nil {
			return "", failed(fmt.Errorf("reading the value: %w", err))
		}
		if len(b) == 0 {
			return "", usageErr("secrets set %s: empty value", name)
		}
		return string(b), nil
	}
	if e.stdin == nil {
		return "", usageErr("secrets set %s: no value on stdin", name)
	}
	b, err := io.ReadAll(io.LimitReader(e.stdin, maxSecretBytes+1))
	if err != nil {
		return "", failed(fmt.Errorf("reading the value from stdin: %w", err))
	}
	if len(b) > maxSecretBytes {
		return "", usageErr("secrets set %s: value longer than %d bytes", name, maxSecretBytes)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if len(b) == 0 {
		return "", usageErr("secrets set %s: empty value on stdin (pipe it in: printf %%s \"$TOKEN\" | switchboard secrets set %s)", name, name)
	}
	return string(b), nil
}

type secretNameJSON struct {
	Name string `json:"name"`
}

func (e *env) secretsListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the names of stored secrets (never their values)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := e.openStore()
			if err != nil {
				return failed(err)
			}
			names, err := v.List()
			if err != nil {
				return failed(err)
			}
			if e.jsonOut {
				out := make([]secretNameJSON, len(names))
				for i, n := range names {
					out[i] = secretNameJSON{Name: n}
				}
				return e.printJSON(map[string]any{"backend": v.Backend(), "secrets": out})
			}
			if len(names) > 0 {
				e.printf("%s\n", strings.Join(names, "\n"))
			}
			return nil
		},
	}
}

func (e *env) secretsRmCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove a stored secret",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := secret.ValidateName(args[0]); err != nil {
				return usageErr("secrets rm: %v", err)
			}
			v, err := e.openStore()
			if err != nil {
				return failed(err)
			}
			if err := v.Delete(args[0]); err != nil {
				if errors.Is(err, secret.ErrNotFound) {
					return failed(fmt.Errorf("secrets rm: no secret %q in the %s backend", args[0], v.Backend()))
				}
				return failed(fmt.Errorf("secrets rm %s: %w", args[0], err))
			}
			fmt.Fprintf(e.stderr, "switchboard: secret %s removed (%s)\n", args[0], v.Backend())
			return nil
		},
	}
}
