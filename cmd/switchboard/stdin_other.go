//go:build !unix

package main

import "os"

func pollableStdin() *os.File { return os.Stdin }
