//go:build !unix

package oauth

// lockFile is a no-op where flock is missing: the in-process lock alone
// orders refreshes (two processes may then race one).
func lockFile(path string) (func(), error) { return func() {}, nil }
