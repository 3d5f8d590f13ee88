package transport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// StrictBodies wraps rt (nil means http.DefaultTransport) so that the MCP
// messages in its responses are checked as [Command] checks a stdio line,
// for the go-sdk's Streamable HTTP and legacy SSE clients, which read the
// bodies themselves: each event of a text/event-stream body, and the
// application/json body of a Streamable HTTP POST (a POST whose Accept
// lists text/event-stream; other JSON, such as OAuth's, is left alone).
//
// A refused message is reported to refused (nil drops it silently) and
// replaced in the body, which the SDK then reads: an event by one event
// per error answer to a request it answered, or by nothing; a JSON body by
// the error answer to the POST's own request. Nothing else changes, and a
// body the SDK cannot read (an event without a colon, text that is not
// JSON) reaches it as before, for it to fail as it does.
//
// One event is held until its end (the blank line the SDK waits for as
// well), at most maxEvent bytes of it (zero or negative means
// [DefaultMaxMessageBytes]): past that the event is handed on cut short,
// then an error wrapping [ErrMessageTooLarge] ends the body, so that no
// part of it is decoded unchecked. Give the SDK's MaxEventSize the same
// bound: the SDK then fails on the event as it did without the check. A JSON body is read whole when the SDK first reads it: wrap a
// RoundTripper that bounds bodies ([LimitBodies]).
func StrictBodies(rt http.RoundTripper, maxEvent int, refused func(error)) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	if maxEvent <= 0 {
		maxEvent = DefaultMaxMessageBytes
	}
	return &strictBodies{rt: rt, max: maxEvent, refused: refused}
}

type strictBodies struct {
	rt      http.RoundTripper
	max     int
	refused func(error)
}

func (s *strictBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.rt.RoundTrip(req)
	if err != nil || resp.Body == nil || resp.Body == http.NoBody || resp.StatusCode/100 != 2 {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case mt == "text/event-stream":
		resp.Body = &strictEvents{rc: resp.Body, br: bufio.NewReader(resp.Body), max: s.max, refused: s.refused}
	case mt == "application/json" && req.Method == http.MethodPost && strings.Contains(req.Header.Get("Accept"), "text/event-stream"):
		resp.Body = &strictJSON{rc: resp.Body, req: req, refused: s.refused}
	}
	return resp, nil
}

// CloseIdleConnections forwards to the wrapped RoundTripper.
func (s *strictBodies) CloseIdleConnections() {
	if c, ok := s.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// strictJSON is a Streamable HTTP POST's JSON answer, checked whole.
type strictJSON struct {
	rc      io.ReadCloser
	req     *http.Request
	refused func(error)
	r       *bytes.Reader // once read
}

func (b *strictJSON) Read(p []byte) (int, error) {
	if b.r == nil {
		body, err := io.ReadAll(b.rc)
		if err != nil {
			return 0, err
		}
		if err := checkMessage(nil, body, false); err != nil {
			if b.refused != nil {
				b.refused(err)
			}
			body = b.answer(body, err)
		}
		b.r = bytes.NewReader(body)
	}
	return b.r.Read(p)
}

// answer is what replaces a refused JSON body: the error answer to the
// POST's own request, which is what the body answers whatever it says; or,
// without it, to the first request the body may answer. Empty when there
// is neither: the SDK then fails the connection, as the body cannot say
// which request it failed.
func (b *strictJSON) answer(body []byte, err error) []byte {
	if b.req.GetBody != nil {
		if rc, gerr := b.req.GetBody(); gerr == nil {
			sent, _ := io.ReadAll(rc)
			rc.Close()
			if msg, derr := jsonrpc.DecodeMessage(sent); derr == nil {
				if call, ok := msg.(*jsonrpc.Request); ok && call.IsCall() {
					if id, merr := json.Marshal(call.ID.Raw()); merr == nil {
						return errorAnswer(id, err)
					}
				}
			}
		}
	}
	if answers := refusedAnswers(body, err); len(answers) > 0 {
		return answers[0]
	}
	return nil
}

func (b *strictJSON) Close() error { return b.rc.Close() }

// strictEvents checks each event of an event stream. It reads events the
// way the go-sdk's scanner does (lines end at "\n" and lose any trailing
// "\r" and "\n"; an empty line ends an event; "data" lines are trimmed
// and joined with "\n"), so that it checks exactly the message the SDK
// will decode: the legacy SSE client decodes every event but the first,
// whatever its name, and the Streamable HTTP client every "message" one;
// data that is not JSON (the legacy endpoint event's URL) passes.
type strictEvents struct {
	rc      io.ReadCloser
	br      *bufio.Reader
	max     int
	refused func(error)

	event []byte // the lines of the event being read, as received
	out   []byte // what is ready to hand on
	err   error  // the body's read error, once seen
}

func (e *strictEvents) Read(p []byte) (int, error) {
	for len(e.out) == 0 {
		if e.err != nil {
			return 0, e.err
		}
		line, err := e.readLine()
		e.event = append(e.event, line...)
		switch {
		case errors.Is(err, ErrMessageTooLarge):
			// Handed on unchecked but cut short, then the error: the SDK
			// fails on the event as it would without this check (its
			// bound being the same), and nothing of it is decoded.
			e.err = err
			e.out, e.event = e.event, nil
		case err != nil:
			e.err = err
			if len(e.event) > 0 { // the last event, ended by the body's end
				e.out = e.flush()
			}
		case len(bytes.TrimRight(line, "\r\n")) == 0:
			e.out = e.flush()
		}
	}
	n := copy(p, e.out)
	e.out = e.out[n:]
	return n, nil
}

// readLine reads one line, with its "\n", within what is left of the
// event's bound.
func (e *strictEvents) readLine() ([]byte, error) {
	var line []byte
	for {
		frag, err := e.br.ReadSlice('\n')
		line = append(line, frag...)
		if len(e.event)+len(line) > e.max {
			return line, fmt.Errorf("%w: an event of more than %d bytes in an event stream", ErrMessageTooLarge, e.max)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

// flush returns the event read, checked: as it came, or what replaces it.
func (e *strictEvents) flush() []byte {
	event := e.event
	e.event = nil
	var data, rest []byte
	hasData := false
	for _, line := range bytes.SplitAfter(event, []byte("\n")) {
		trimmed := bytes.TrimRight(line, "\r\n")
		if len(trimmed) == 0 {
			continue
		}
		key, value, found := bytes.Cut(trimmed, []byte(":"))
		if !found {
			return event // malformed: the SDK fails on it
		}
		if string(key) != "data" {
			rest = append(rest, line...)
			continue
		}
		if hasData {
			data = append(data, '\n')
		}
		data = append(data, bytes.TrimSpace(value)...)
		hasData = true
	}
	if len(data) == 0 {
		return event
	}
	err := checkMessage(nil, data, false)
	if err == nil {
		return event
	}
	if e.refused != nil {
		e.refused(err)
	}
	// An event per answer; the first keeps the event's other fields (its
	// id, for resumption). With no answer, no event: the legacy client
	// would fail on one without data.
	var out []byte
	for i, a := range refusedAnswers(data, err) {
		if i == 0 {
			out = append(out, rest...)
		}
		out = append(out, "data: "...)
		out = append(out, a...)
		out = append(out, "\n\n"...)
	}
	return out
}

func (e *strictEvents) Close() error { return e.rc.Close() }
