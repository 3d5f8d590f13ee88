// Package sandbox runs code mode's programs (package codemode) in goja, a
// pure-Go JavaScript engine, within their budgets: Run. What a program
// may do, how its tools are called and what holds are in codemode's
// documentation and docs/security.md ("Code mode sandbox").
//
// It is a package of its own so that only a binary that runs programs
// links goja (docs/size.md).
package sandbox
