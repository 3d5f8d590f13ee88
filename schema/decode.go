package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A decodeError is input the decoder cannot read at all.
type decodeError struct{ msg string }

func (e *decodeError) Error() string { return e.msg }

// decode reads one JSON value from b the way [jsonschema.UnmarshalJSON]
// does (numbers as json.Number), but refuses what decoders disagree on:
// invalid UTF-8, unpaired surrogate escapes and trailing data are errors,
// and each duplicate object key is returned as a problem. Containers may
// nest at most maxDepth levels.
func decode(b []byte, maxDepth int) (any, []Problem, error) {
	d := &decoder{maxDepth: maxDepth}
	v, err := d.decode(b)
	return v, d.problems, err
}

// decodeArgs is decode for call arguments, which also refuses, as a
// problem at its pointer, a number no server can read as a number (see
// numberProblem), and returns where integers beyond int64 are: whether
// those are acceptable depends on the schema (see Schema.Validate).
func decodeArgs(b []byte) (any, []Problem, []wideInt, error) {
	d := &decoder{maxDepth: maxArgsDepth, args: true}
	v, err := d.decode(b)
	return v, d.problems, d.wide, err
}

func (d *decoder) decode(b []byte) (any, error) {
	if err := checkText(b); err != nil {
		return nil, err
	}
	d.dec = json.NewDecoder(bytes.NewReader(b))
	d.dec.UseNumber()
	tok, err := d.dec.Token()
	if err != nil {
		return nil, syntaxErr(err)
	}
	v, err := d.value(tok, 1)
	if err != nil {
		return nil, err
	}
	if _, err := d.dec.Token(); err != io.EOF {
		return nil, &decodeError{"invalid JSON: unexpected data after the top-level value"}
	}
	return v, nil
}

// maxExponent bounds the decimal exponent of an argument number. The
// validator computes with exact rationals: 1E999999999 would cost it
// gigabytes, and an exponent beyond int's range made it panic. No tool
// argument needs more than float64's ±308.
const maxExponent = 1000

// numberInRange reports whether the JSON number n has an exponent within
// ±maxExponent.
func numberInRange(n string) bool {
	i := strings.IndexAny(n, "eE")
	if i < 0 {
		return true
	}
	e, err := strconv.Atoi(strings.TrimPrefix(n[i+1:], "+"))
	return err == nil && e >= -maxExponent && e <= maxExponent
}

type decoder struct {
	dec      *json.Decoder
	maxDepth int
	args     bool  // call arguments, not a schema: check numbers (see decodeArgs)
	path     []any // string keys and int indexes down to the current value
	problems []Problem
	wide     []wideInt
}

func (d *decoder) value(tok json.Token, depth int) (any, error) {
	delim, ok := tok.(json.Delim)
	if !ok {
		n, isNum := tok.(json.Number)
		switch {
		case !isNum:
		case d.args:
			if msg := numberProblem(string(n)); msg != "" {
				d.problems = append(d.problems, Problem{Pointer: pointer(d.path), Message: msg})
			} else if half, ok := beyondInt64(string(n)); ok {
				d.wide = append(d.wide, wideInt{path: slices.Clone(d.path), n: n, half: half})
			}
		case !numberInRange(string(n)):
			return nil, &decodeError{fmt.Sprintf("number %.40s is out of range (exponent beyond ±%d)", string(n), maxExponent)}
		}
		return tok, nil // string, json.Number, bool or nil
	}
	if depth > d.maxDepth {
		return nil, &decodeError{fmt.Sprintf("invalid JSON: nested deeper than %d levels", d.maxDepth)}
	}
	switch delim {
	case '{':
		m := make(map[string]any)
		for d.dec.More() {
			ktok, err := d.dec.Token()
			if err != nil {
				return nil, syntaxErr(err)
			}
			key, ok := ktok.(string)
			if !ok { // the decoder's own syntax check should prevent this
				return nil, &decodeError{"invalid JSON: object key is not a string"}
			}
			vtok, err := d.dec.Token()
			if err != nil {
				return nil, syntaxErr(err)
			}
			d.path = append(d.path, key)
			v, err := d.value(vtok, depth+1)
			if err != nil {
				return nil, err
			}
			if _, dup := m[key]; dup {
				d.problems = append(d.problems, Problem{Pointer: pointer(d.path), Message: "duplicate key"})
			} else {
				m[key] = v
			}
			d.path = d.path[:len(d.path)-1]
		}
		if _, err := d.dec.Token(); err != nil { // '}'
			return nil, syntaxErr(err)
		}
		return m, nil
	case '[':
		a := []any{}
		for i := 0; d.dec.More(); i++ {
			vtok, err := d.dec.Token()
			if err != nil {
				return nil, syntaxErr(err)
			}
			d.path = append(d.path, i)
			v, err := d.value(vtok, depth+1)
			if err != nil {
				return nil, err
			}
			d.path = d.path[:len(d.path)-1]
			a = append(a, v)
		}
		if _, err := d.dec.Token(); err != nil { // ']'
			return nil, syntaxErr(err)
		}
		return a, nil
	}
	return nil, &decodeError{fmt.Sprintf("invalid JSON: unexpected %q", delim)}
}

func syntaxErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &decodeError{"invalid JSON: unexpected end of input"}
	}
	var serr *json.SyntaxError
	if errors.As(err, &serr) {
		return &decodeError{fmt.Sprintf("invalid JSON at byte %d: %v", serr.Offset, serr)}
	}
	return &decodeError{"invalid JSON: " + err.Error()}
}

// checkText refuses invalid UTF-8 and \u escapes of unpaired UTF-16
// surrogates. encoding/json replaces both with U+FFFD; other decoders
// reject them or pass the bytes through, so the server could see a string
// the validator never did.
func checkText(b []byte) error {
	if !utf8.Valid(b) {
		return &decodeError{"invalid JSON: not valid UTF-8"}
	}
	// Backslashes occur only inside strings in valid JSON, and consuming
	// each escape whole keeps "\\ud800" (an escaped backslash) from
	// being read as a surrogate. Invalid JSON fails in the decoder anyway.
	for i := bytes.IndexByte(b, '\\'); i >= 0 && i < len(b); {
		if i+1 >= len(b) {
			break
		}
		if b[i+1] != 'u' {
			i = next(b, i+2)
			continue
		}
		r, ok := hex4(b, i+2)
		switch {
		case !ok:
			return nil // malformed escape: the decoder reports it
		case r >= 0xDC00 && r <= 0xDFFF:
			return &decodeError{"invalid JSON: unpaired UTF-16 surrogate escape"}
		case r >= 0xD800 && r <= 0xDBFF:
			lo, ok := rune(0), false
			if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
				lo, ok = hex4(b, i+8)
			}
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return &decodeError{"invalid JSON: unpaired UTF-16 surrogate escape"}
			}
			i = next(b, i+12)
		default:
			i = next(b, i+6)
		}
	}
	return nil
}

// next returns the index of the first backslash at or after i, or -1.
func next(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	j := bytes.IndexByte(b[i:], '\\')
	if j < 0 {
		return -1
	}
	return i + j
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[i:i+4]), 16, 32)
	return rune(n), err == nil
}

// pointer renders a path as a JSON Pointer (RFC 6901).
func pointer(path []any) string {
	var b []byte
	for _, p := range path {
		b = append(b, '/')
		switch p := p.(type) {
		case string:
			b = appendEscaped(b, p)
		case int:
			b = strconv.AppendInt(b, int64(p), 10)
		}
	}
	return string(b)
}

func appendEscaped(b []byte, tok string) []byte {
	for i := 0; i < len(tok); i++ {
		switch tok[i] {
		case '~':
			b = append(b, '~', '0')
		case '/':
			b = append(b, '~', '1')
		default:
			b = append(b, tok[i])
		}
	}
	return b
}
