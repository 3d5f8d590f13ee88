package transport

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readEvents reads stream through strictEvents, a few bytes at a time.
func readEvents(stream string, max int) (string, []error, error) {
	var refused []error
	e := &strictEvents{rc: io.NopCloser(strings.NewReader(stream)), max: max, refused: func(err error) { refused = append(refused, err) }}
	e.br = bufio.NewReaderSize(iotest.HalfReader(e.rc), 16) // lines longer than its buffer too
	out, err := io.ReadAll(e)
	return string(out), refused, err
}

func TestStrictEventsPassThrough(t *testing.T) {
	for _, stream := range []string{
		"event: endpoint\ndata: /message?session=1\n\n",
		"id: 1\ndata: \n\n: keep-alive\n\n",
		"event: message\r\nid: 2\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\r\n",
		"data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{}}\n\n",
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", // ended by the body's end
		"data {\"jsonrpc\":\"2.0\"}\n\n",                     // no colon: the SDK fails on it
		"data: not json \xff\n\n",                            // not JSON: the SDK fails on it
		"data: " + strings.Repeat("x", 300) + "\n\n",
	} {
		got, refused, err := readEvents(stream, 1024)
		if err != nil || got != stream || len(refused) != 0 {
			t.Errorf("events %q: read %q, refused %v, %v; want them unchanged", stream, got, refused, err)
		}
	}
}

func TestStrictEventsRefused(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		// The answer to request 7 fails; the event keeps its id.
		{"event: message\nid: 9\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{},\"result\":{}}\n\n",
			"event: message\nid: 9\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32090,\"message\":\"refused the server's message: duplicate member name \\\"result\\\"\"}}\n\n"},
		// A notification is dropped, event and all; what follows is not.
		{"data: {\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"a\":1,\"a\":2}}\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n\n",
			"data: {\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n\n"},
		// A batch: an event per answer.
		{"data: [{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"result\":{}}]\n\n",
			"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32090,\"message\":\"refused the server's message: a JSON-RPC batch (an array of messages), which MCP has not had since 2025-06-18\"}}\n\n" +
				"data: {\"jsonrpc\":\"2.0\",\"id\":\"b\",\"error\":{\"code\":-32090,\"message\":\"refused the server's message: a JSON-RPC batch (an array of messages), which MCP has not had since 2025-06-18\"}}\n\n"},
	} {
		got, refused, err := readEvents(tt.in, 1024)
		if err != nil || got != tt.want || len(refused) != 1 {
			t.Errorf("events %q:\nread %q\nwant %q\n(refused %v, %v)", tt.in, got, tt.want, refused, err)
		}
	}
}

// TestStrictEventsBound: an event over the bound is handed on cut short,
// unchecked, then the body fails: the SDK, bounded alike, fails on it.
func TestStrictEventsBound(t *testing.T) {
	stream := "data: {\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":\"" + strings.Repeat("x", 2000) + "\"}\n\n"
	got, _, err := readEvents(stream, 1024)
	if !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("read %d bytes, %v; want ErrMessageTooLarge", len(got), err)
	}
	if len(got) > 1024+4096 || !strings.HasPrefix(stream, got) {
		t.Errorf("handed on %d bytes, not a prefix of the event within the bound", len(got))
	}
}

// FuzzStrictEvents: whatever a stream holds, strictEvents never panics nor
// hangs, hands on what it accepts unchanged, and holds at most its bound.
func FuzzStrictEvents(f *testing.F) {
	f.Add("event: message\nid: 9\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{},\"result\":{}}\n\n")
	f.Add("data: [{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}]\n\ndata: x\n")
	f.Add("data: {\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"result\":\"\xff\"}\r\n\r\n")
	f.Add(": comment\n\n\n\nretry: 10\n")
	f.Fuzz(func(t *testing.T, stream string) {
		got, refused, err := readEvents(stream, 512)
		if err != nil && !errors.Is(err, ErrMessageTooLarge) {
			t.Fatalf("read error %v", err)
		}
		if len(refused) == 0 && err == nil && got != stream {
			t.Fatalf("nothing refused, yet %q became %q", stream, got)
		}
	})
}
