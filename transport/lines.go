package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/switchboardmcp/switchboard/internal/strictjson"
)

// messageLines is what the SDK's framing reads a child's stdout through.
// MCP's stdio transport is one JSON-RPC message per line, but servers
// print other things to stdout too: a start-up banner ("Server running on
// stdio"), a stray console.log, a dotenv notice ("[dotenv@17.2.1]
// injecting env"), a JSON logger's records. The SDK's decoder fails the
// whole connection on the first of them. messageLines hands the SDK each
// line that is a JSON-RPC message, whole, and skips every other line,
// reporting it to skipped, as the TypeScript SDK's client (and so Claude
// Desktop) does.
//
// A line is a message when it is, by its shape, a JSON object whose
// "jsonrpc" member is "2.0" and that has a "method" member or a non-null
// "id" (or a non-empty array of such objects: a batch), with nothing but
// whitespace around it. The shape is all that is checked, without decoding
// (see isMessage): a line that has it but is not valid JSON inside
// ({"jsonrpc":"2.0","id":1,"result":tru}) is passed on, and the SDK fails
// the connection on it as before. Such a line is a corrupted message, not
// stray output, and skipping it would leave a call waiting for an answer
// that was lost.
//
// A message line the protocol does not allow (checkMessage: a repeated
// member name, bytes that are not UTF-8, a batch where none may be) is
// replaced by the error answers of the requests it answered
// (refusedAnswers), and reported to refused. A batch that may be (of
// requests and notifications, in a session before 2025-06-18) is handed
// on one message a line.
//
// A line longer than max bytes, message or not, fails the connection
// (ErrMessageTooLarge), and so does endless output without a newline: the
// bound on what one server can make the host hold.
type messageLines struct {
	r       io.ReadCloser
	max     int
	skipped func(line []byte) // nil: skipped silently
	refused func(error)       // nil: refused silently
	// batches, when set and true, lets batches of requests and
	// notifications through: the session is older than 2025-06-18.
	batches *atomic.Bool
	check   strictjson.Checker // every message line's (checkMessage)

	buf     []byte // read from r: buf[start:] is not yet classified
	start   int
	scanned int    // buf[start:scanned] holds no newline
	out     []byte // a message line (with its newline) still to hand on
	err     error  // r's error, once seen
}

// readChunk is how much messageLines asks its reader for at a time.
const readChunk = 64 << 10

func newMessageLines(r io.ReadCloser, max int, skipped func([]byte)) *messageLines {
	return &messageLines{r: r, max: max, skipped: skipped}
}

func (m *messageLines) Close() error { return m.r.Close() }

func (m *messageLines) Read(p []byte) (int, error) {
	if err := m.ready(); err != nil {
		return 0, err
	}
	n := copy(p, m.out)
	m.out = m.out[n:]
	return n, nil
}

// next returns the next message line, without its newline. It is valid
// until the next call.
func (m *messageLines) next() ([]byte, error) {
	if err := m.ready(); err != nil {
		return nil, err
	}
	line := m.out
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line, m.out = line[:i], line[i+1:]
	} else {
		m.out = nil
	}
	return line, nil
}

// ready reads until m.out holds a message line to hand on, or fails.
func (m *messageLines) ready() error {
	for len(m.out) == 0 {
		if i := bytes.IndexByte(m.buf[m.scanned:], '\n'); i >= 0 {
			end := m.scanned + i + 1
			if end-1-m.start > m.max {
				return m.tooLong()
			}
			line := m.buf[m.start:end]
			m.start, m.scanned = end, end
			m.take(line)
			continue
		}
		m.scanned = len(m.buf)
		if len(m.buf)-m.start > m.max {
			return m.tooLong()
		}
		if m.err != nil {
			if m.start < len(m.buf) {
				// The last line, without its newline.
				line := m.buf[m.start:]
				m.start, m.scanned = len(m.buf), len(m.buf)
				m.take(line)
				continue
			}
			return m.err
		}
		m.fill()
	}
	return nil
}

func (m *messageLines) tooLong() error {
	return fmt.Errorf("%w: a line of more than %d bytes on stdout", ErrMessageTooLarge, m.max)
}

// take hands line on, or skips it. The buffer is refilled only once m.out
// is empty, so m.out may point into it.
func (m *messageLines) take(line []byte) {
	content := bytes.TrimRight(line, "\r\n")
	if isMessage(content) {
		if err := checkMessage(&m.check, content, m.batches != nil && m.batches.Load()); err != nil {
			var out []byte
			for _, a := range refusedAnswers(content, err) {
				out = append(append(out, a...), '\n')
			}
			m.out = out
			if m.refused != nil {
				m.refused(err)
			}
			return
		}
		if firstByte(content) == '[' {
			// A batch of requests and notifications, which a session
			// before 2025-06-18 may have: handed on one message a line,
			// as the go-sdk's client fails on a batch of two
			// notifications ("duplicate message ID"). Its requests are
			// answered one by one, which JSON-RPC allows (SHOULD).
			var elems []json.RawMessage
			if json.Unmarshal(content, &elems) == nil {
				var out []byte
				for _, e := range elems {
					out = append(append(out, e...), '\n')
				}
				m.out = out
				return
			}
		}
		// Ended by a plain newline: the SDK refuses anything but a line
		// ending after a message ({...} followed by a space).
		m.out = line
		if t := bytes.TrimRight(content, " \t"); len(t) < len(line) {
			line[len(t)] = '\n'
			m.out = line[:len(t)+1]
		}
		return
	}
	if m.skipped != nil && len(bytes.TrimSpace(content)) > 0 {
		m.skipped(content)
	}
}

// fill reads more of r into the buffer, dropping what was consumed.
func (m *messageLines) fill() {
	if m.start > 0 {
		n := copy(m.buf, m.buf[m.start:])
		m.buf, m.scanned, m.start = m.buf[:n], m.scanned-m.start, 0
		if cap(m.buf) > 4*readChunk && n < readChunk {
			// Do not keep a huge message's buffer for the small ones.
			m.buf = append([]byte(nil), m.buf...)
		}
	}
	if cap(m.buf)-len(m.buf) < readChunk {
		m.buf = append(m.buf, make([]byte, readChunk)...)[:len(m.buf)]
	}
	n, err := m.r.Read(m.buf[len(m.buf):cap(m.buf)])
	m.buf = m.buf[:len(m.buf)+n]
	if err != nil {
		m.err = err
	}
}

// isMessage reports whether line has the shape of a JSON-RPC message: see
// messageLines. It reads the line once, without allocating, jumping over
// strings with IndexByte; nested values are skipped by counting brackets.
func isMessage(line []byte) bool {
	s := shape{b: line}
	s.space()
	switch s.peek() {
	case '{':
		if !s.message() {
			return false
		}
	case '[':
		s.i++
		s.space()
		if s.peek() == ']' {
			return false // an empty batch
		}
		for {
			s.space()
			if s.peek() != '{' || !s.message() {
				return false
			}
			s.space()
			if s.peek() == ']' {
				s.i++
				break
			}
			if s.peek() != ',' {
				return false
			}
			s.i++
		}
	default:
		return false
	}
	s.space()
	return s.i == len(s.b)
}

// shape scans the structure of JSON text, not its validity.
type shape struct {
	b []byte
	i int
}

func (s *shape) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *shape) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// message scans the object at s.i and reports whether its members make it
// a JSON-RPC message, the way the go-sdk's decoder reads one (keys are
// case-sensitive), or would under another reading of a repeated key: such
// a line is refused as a message (checkMessage), not skipped as output.
func (s *shape) message() bool {
	s.i++ // '{'
	var version, method, id bool
	s.space()
	if s.peek() == '}' {
		s.i++
		return false
	}
	for {
		s.space()
		k := s.i
		if !s.str() {
			return false
		}
		key := s.b[k:s.i]
		s.space()
		if s.peek() != ':' {
			return false
		}
		s.i++
		s.space()
		v := s.i
		if !s.value() {
			return false
		}
		val := s.b[v:s.i]
		switch {
		case stringIs(key, "jsonrpc"):
			version = version || stringIs(val, "2.0")
		case stringIs(key, "method"):
			method = true
		case stringIs(key, "id"):
			id = id || string(val) != "null"
		}
		s.space()
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return version && (method || id)
		default:
			return false
		}
	}
}

// value skips one value.
func (s *shape) value() bool {
	switch s.peek() {
	case '"':
		return s.str()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if !s.str() {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	}
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return s.i > start
		}
		s.i++
	}
	return s.i > start
}

// str skips the string at s.i.
func (s *shape) str() bool {
	if s.peek() != '"' {
		return false
	}
	for j := s.i + 1; ; {
		k := bytes.IndexByte(s.b[j:], '"')
		if k < 0 {
			return false
		}
		j += k
		// A quote is escaped when an odd number of backslashes precede it.
		n := 0
		for j-1-n > s.i && s.b[j-1-n] == '\\' {
			n++
		}
		j++
		if n%2 == 0 {
			s.i = j
			return true
		}
	}
}

// stringIs reports whether the JSON string token tok is want.
func stringIs(tok []byte, want string) bool {
	if len(tok) < 2 || tok[0] != '"' {
		return false
	}
	if bytes.IndexByte(tok, '\\') < 0 {
		return string(tok[1:len(tok)-1]) == want
	}
	var s string // escaped, as in "json\u0072pc": rare
	return json.Unmarshal(tok, &s) == nil && s == want
}
