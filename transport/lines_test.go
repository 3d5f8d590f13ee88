package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestIsMessage(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, true},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, true},
		{`{"jsonrpc":"2.0","id":"a","method":"ping","params":{}}`, true},
		{`{"result":{"content":[{"type":"text","text":"}{\"jsonrpc\"]["}]},"jsonrpc":"2.0","id":7}`, true}, // the TS SDK's key order
		{`  { "jsonrpc" : "2.0" , "id" : 1 , "error" : {"code":-1,"message":"x"} }  `, true},
		{`{"json\u0072pc":"2\u002e0","id":1,"result":{}}`, true},
		{`{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"result":{}}`, true}, // the last one counts
		{`{"jsonrpc":"2.0","method":null}`, true},
		{`{"jsonrpc":"2.0","id":1,"result":{"s":"a\\"}}`, true}, // an escaped backslash before the quote
		{`{"jsonrpc":"2.0","id":1,"result":tru}`, true},         // the shape: the SDK judges the rest
		{`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"x"}]`, true},

		{``, false},
		{`Server running on stdio`, false},
		{`[dotenv@17.2.1] injecting env (0) from .env`, false},
		{`[INFO] started`, false},
		{`{"level":30,"msg":"listening"}`, false},
		{`{"jsonrpc":"2.0"}`, false},
		{`{"jsonrpc":"2.0","id":null,"result":{}}`, false},
		{`{"jsonrpc":"2.0","result":{}}`, false},
		{`{"jsonrpc":2.0,"id":1,"result":{}}`, false},
		{`{"JSONRPC":"2.0","id":1,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{}}{"jsonrpc":"2.0","id":2,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{}} trailing`, false},
		{`{"jsonrpc":"2.0","id":`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{"a":"}`, false},
		{`{'jsonrpc': '2.0', 'id': 1}`, false}, // a Python dict printed
		{`[]`, false},
		{`[1,2,3]`, false},
		{`[{"jsonrpc":"2.0","id":1,"result":{}},{"level":30}]`, false},
		{`{}`, false},
		{"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", false}, // a byte order mark
		{`"jsonrpc"`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{}`, false},
		{`{"jsonrpc" "2.0","id":1}`, false},
	}
	for _, tt := range tests {
		if got := isMessage([]byte(tt.line)); got != tt.want {
			t.Errorf("isMessage(%s) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

func TestMessageLines(t *testing.T) {
	const (
		m1 = `{"jsonrpc":"2.0","id":1,"result":{}}`
		m2 = `{"jsonrpc":"2.0","method":"x"}`
	)
	tests := []struct {
		name    string
		in      string
		want    string // handed on
		skipped []string
	}{
		{"messages only", m1 + "\n" + m2 + "\n", m1 + "\n" + m2 + "\n", nil},
		{"banner first", "Server running on stdio\n" + m1 + "\n", m1 + "\n", []string{"Server running on stdio"}},
		{"between and after", m1 + "\nhello\n" + m2 + "\nbye\n", m1 + "\n" + m2 + "\n", []string{"hello", "bye"}},
		{"CRLF", "banner\r\n" + m1 + "\r\n", m1 + "\n", []string{"banner"}},
		{"trailing space", m1 + " \t\n" + m2 + "  ", m1 + "\n" + m2 + "\n", nil},
		{"blank lines are not reported", "\n  \n" + m1 + "\n\n", m1 + "\n", nil},
		{"last line without newline", "x\n" + m1, m1, []string{"x"}},
		{"last line not a message", m1 + "\ntail", m1 + "\n", []string{"tail"}},
		{"binary junk", "\x00\x01\x02 junk \xff\xfe\n" + m1 + "\n", m1 + "\n", []string{"\x00\x01\x02 junk \xff\xfe"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte at a time, and all at once: lines split across reads.
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				var skipped []string
				m := newMessageLines(io.NopCloser(r), 1024, func(line []byte) { skipped = append(skipped, string(line)) })
				got, err := io.ReadAll(m)
				if err != nil {
					t.Fatalf("ReadAll: %v", err)
				}
				if string(got) != tt.want {
					t.Errorf("handed on %q, want %q", got, tt.want)
				}
				if diff := cmp.Diff(tt.skipped, skipped); diff != "" {
					t.Errorf("skipped (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestMessageLinesBound(t *testing.T) {
	msg := func(n int) string { // a message line of exactly n bytes
		const head, tail = `{"jsonrpc":"2.0","method":"x","params":"`, `"}`
		return head + strings.Repeat("a", n-len(head)-len(tail)) + tail
	}
	for _, tc := range []struct {
		name string
		in   string
		ok   bool
	}{
		{"a message at the bound", msg(1024) + "\n", true},
		{"a message over it", msg(1025) + "\n", false},
		{"other output over it", strings.Repeat("b", 1025) + "\n" + msg(100) + "\n", false},
		{"endless output", strings.Repeat("c", 1<<20), false},
	} {
		m := newMessageLines(io.NopCloser(strings.NewReader(tc.in)), 1024, nil)
		_, err := io.ReadAll(m)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrMessageTooLarge)) {
			t.Errorf("%s: ReadAll error = %v, want ok %v (else ErrMessageTooLarge)", tc.name, err, tc.ok)
		}
		if cap(m.buf) > 4096+readChunk*2 {
			t.Errorf("%s: buffer grew to %d bytes for a 1024-byte bound", tc.name, cap(m.buf))
		}
	}
}

// No allocation per line once the buffer is there: the reader sits on
// every message of every stdio server.
func TestMessageLinesAllocs(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}` + "\n")
	in := bytes.Repeat(line, 64)
	r := bytes.NewReader(in)
	m := newMessageLines(io.NopCloser(r), 4096, nil)
	p := make([]byte, 512)
	read := func() {
		r.Reset(in)
		m.err = nil
		for {
			if _, err := m.Read(p); err != nil {
				return
			}
		}
	}
	read()
	if n := testing.AllocsPerRun(10, read); n > 0 {
		t.Errorf("%v allocations per 64 lines, want 0", n)
	}
}

// isMessage never drops what the go-sdk would read as a message.
func checkAgreesWithSDK(t *testing.T, line []byte) {
	if !json.Valid(line) {
		return
	}
	if _, err := jsonrpc.DecodeMessage(line); err == nil && !isMessage(line) {
		t.Errorf("isMessage(%s) = false, but the go-sdk decodes it", line)
	}
}
