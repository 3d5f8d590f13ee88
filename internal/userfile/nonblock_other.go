//go:build !unix

package userfile

// nonBlock is not needed where opening a file does not wait for a writer.
const nonBlock = 0
