//go:build !linux

package interop

// listenerOwned cannot tell who owns a port outside Linux; a successful dial
// while the process is alive has to do.
func listenerOwned(pid, port int) (bool, error) { return true, nil }
