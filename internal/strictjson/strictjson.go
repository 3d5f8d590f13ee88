// Package strictjson finds in JSON text what RFC 8259 leaves to the reader:
// a member name repeated in one object (§4: "the names within an object
// SHOULD be unique"; readers then differ, most keep the last, some the
// first, some fail) and bytes that are not UTF-8 (§8.1: JSON text
// exchanged between systems MUST be UTF-8; Go's decoder turns them into
// U+FFFD without a word).
//
// Both are how a message says one thing to one reader and another to the
// next: a server's answer with two "result" members is one result to a
// checker that keeps the first and another to the SDK that keeps the
// last; a REST body with two "command" members is validated as one and
// stored as the other. Switchboard refuses them where JSON comes in from
// outside: the messages of upstream servers (package transport) and the
// bodies of its REST API (package api).
//
// [Check] is one pass over the text (utf8.Valid, then a validating
// tokenizer that keeps the names of each open object) and allocates
// nothing when the text passes. It judges names and encoding only: text
// that is not JSON at all is left to the decoder that follows, whose
// syntax errors say more. An escaped lone surrogate ("\ud800") is valid
// JSON syntax that JavaScript's JSON.stringify writes for a string cut
// in the middle of an emoji; it is not refused.
package strictjson

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// The problems Check finds, matched with errors.Is.
var (
	// ErrDuplicateName: an object has the same member name twice (names
	// are compared after unescaping: "a" and "\u0061" are one name).
	ErrDuplicateName = errors.New("duplicate member name")
	// ErrInvalidUTF8: the text holds bytes that are not UTF-8.
	ErrInvalidUTF8 = errors.New("invalid UTF-8")
)

// Error is what Check found, and where. Its text never quotes a value of
// the document, only a member name (cut to 64 bytes) and a field path.
type Error struct {
	Err    error  // ErrDuplicateName or ErrInvalidUTF8
	Offset int64  // of the repeated name, or of the first byte that is not UTF-8
	Field  string // field path of the value at fault ("env.PATH", "args[2]"), "" for the whole text
	Name   string // the repeated name (ErrDuplicateName only)
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	if e.Err == ErrDuplicateName {
		fmt.Fprintf(&b, " %q", cut(e.Name, 64))
	}
	if parent := e.where(); parent != "" {
		fmt.Fprintf(&b, " in %s", parent)
	}
	if e.Err == ErrInvalidUTF8 {
		fmt.Fprintf(&b, " at byte %d", e.Offset)
	}
	return b.String()
}

// where is the field the problem is in: the object holding a repeated
// name, the string holding bad bytes.
func (e *Error) where() string {
	if e.Err == ErrDuplicateName {
		return decode.ParentPath(e.Field)
	}
	return e.Field
}

func (e *Error) Unwrap() error { return e.Err }

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// lenient reads what strict refuses (and only that), to find where it is.
var lenient = []jsontext.Options{jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)}

// fast is the validator's configuration: names unique, raw bytes checked
// by utf8.Valid beforehand, so that an escaped lone surrogate passes.
var fast = []jsontext.Options{jsontext.AllowInvalidUTF8(true)}

// Check returns nil when data has no repeated member name and no bytes
// that are not UTF-8, else an *Error saying which and where. It returns
// nil for text that is not JSON (a syntax error) past the last problem it
// could see: the decoder that reads data next reports that. It takes a
// [Checker] from a pool.
func Check(data []byte) error {
	c := checkers.Get().(*Checker)
	defer checkers.Put(c)
	return c.Check(data)
}

var checkers = sync.Pool{New: func() any { return new(Checker) }}

// A Checker checks texts as [Check] does, with a decoder of its own that
// it resets for each: once it has seen a text as deep as the next, a check
// allocates nothing, however the runtime treats pools (the race detector
// empties them at random). A reader of one stream of messages keeps one.
// Its zero value is ready; it is not for two goroutines at once.
type Checker struct {
	r bytes.Reader
	d *jsontext.Decoder
}

// Check is [Check] on c's decoder.
func (c *Checker) Check(data []byte) error {
	if !utf8.Valid(data) {
		return invalidUTF8(data)
	}
	c.r.Reset(data)
	defer c.r.Reset(nil) // keeps nothing of data
	if c.d == nil {
		c.d = jsontext.NewDecoder(&c.r, fast...)
	} else {
		c.d.Reset(&c.r, fast...)
	}
	for {
		err := c.d.SkipValue()
		switch {
		case err == nil:
			continue // several values in a row: their syntax is the next decoder's business
		case err == io.EOF:
			return nil
		}
		if se, ok := err.(*jsontext.SyntacticError); ok && errors.Is(se.Err, jsontext.ErrDuplicateName) {
			return &Error{Err: ErrDuplicateName, Offset: se.ByteOffset, Field: fieldPath(data, se.ByteOffset),
				Name: se.JSONPointer.LastToken()}
		}
		return nil // not JSON: the next decoder says so
	}
}

// invalidUTF8 reports the first byte of data that is not UTF-8.
func invalidUTF8(data []byte) error {
	off := 0
	for off < len(data) {
		r, n := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		off += n
	}
	return &Error{Err: ErrInvalidUTF8, Offset: int64(off), Field: fieldPath(data, int64(off))}
}

// fieldPath is the field path of the token that covers offset: the name
// or the string there. It reads data leniently, token by token, up to that
// token, and names the position the decoder then stands at.
func fieldPath(data []byte, offset int64) string {
	d := jsontext.NewDecoder(bytes.NewReader(data), lenient...)
	for d.InputOffset() <= offset {
		if _, err := d.ReadToken(); err != nil {
			break
		}
	}
	// The pointer's tokens are the stack's levels, outermost first: an
	// index for an array, a name for an object.
	var p string
	level := 0
	for tok := range d.StackPointer().Tokens() {
		level++
		if k, _ := d.StackIndex(level); k == '[' {
			if n, err := strconv.Atoi(tok); err == nil {
				p = decode.IndexPath(p, n)
				continue
			}
		}
		p = decode.KeyPath(p, tok)
	}
	return p
}
