package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newWireTransport returns a stdio transport whose inbound lines pass
// through a filter that carries out the wire-level misbehaviours of c before
// (or instead of) handing each line to the SDK. The SDK and the filter share
// stdout through a lock, so that their writes never interleave mid-message.
func newWireTransport(c *config, stdin io.Reader, stdout, stderr io.Writer) mcp.Transport {
	pr, pw := io.Pipe()
	out := &lockedWriter{w: stdout}
	f := &filter{c: c, out: out, stderr: stderr}
	var sdkOut io.Writer = out
	if len(c.rawTools) > 0 {
		f.raw = &rawTools{w: out}
		for _, t := range c.rawTools {
			f.raw.tools = append(f.raw.tools, json.RawMessage(t))
		}
		sdkOut = f.raw
	}
	go f.run(stdin, pw)
	return &mcp.IOTransport{Reader: pr, Writer: nopCloser{sdkOut}}
}

type filter struct {
	c      *config
	out    *lockedWriter
	stderr io.Writer
	raw    *rawTools // -raw-tool; nil without
}

// run copies stdin to the SDK line by line, applying the misbehaviours.
func (f *filter) run(stdin io.Reader, sdk *io.PipeWriter) {
	br := bufio.NewReaderSize(stdin, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && f.pass(line) {
			if _, werr := sdk.Write(line); werr != nil {
				return // the SDK closed the connection
			}
		}
		if err != nil {
			if f.c.ignoreStdinClose {
				return // the SDK keeps waiting for input that never comes
			}
			sdk.Close()
			return
		}
	}
}

// pass applies the misbehaviours to one inbound line and reports whether the
// SDK should still see it.
func (f *filter) pass(line []byte) bool {
	var msg struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.ID == nil {
		return true // batches, notifications, responses: the SDK's business
	}
	var id bytes.Buffer
	if json.Compact(&id, msg.ID) != nil {
		return true
	}
	switch msg.Method {
	case "initialize", "server/discover":
		return !f.c.hangInit
	case "tools/list":
		if f.raw != nil {
			f.raw.listing(id.String())
		}
		return true
	case "tools/call":
	default:
		return true
	}
	c := f.c
	if c.badAnswer != "" && msg.Params.Name == "bad" {
		f.out.raw(func(w io.Writer) error {
			_, err := io.WriteString(w, strings.ReplaceAll(badAnswers[c.badAnswer], "ID", id.String())+"\n")
			return err
		})
		return c.badAnswer == "notification" // the SDK answers after it
	}
	if c.garbage {
		f.out.raw(func(w io.Writer) error {
			_, err := io.WriteString(w, "this is not JSON\n"+
				"\x00\x01\x02 binary junk \xff\xfe\n"+
				"{\"jsonrpc\":\"2.0\",\"id\":\n"+
				"Content-Length: 42\n"+
				"\n")
			return err
		})
	}
	prefix := `{"jsonrpc":"2.0","id":` + id.String() + `,"result":{"content":[{"type":"text","text":"`
	switch {
	case c.hang:
		return false
	case c.crashOnCall:
		fmt.Fprintln(f.stderr, "testserver: -crash-on-call: exiting with status 3 in the middle of tools/call")
		f.out.raw(func(w io.Writer) error {
			_, err := io.WriteString(w, prefix+"partial answ")
			return err
		})
		os.Exit(3)
	case c.streamForever:
		f.out.raw(func(w io.Writer) error {
			if _, err := io.WriteString(w, prefix); err != nil {
				return err
			}
			chunk := bytes.Repeat([]byte("x"), 64<<10)
			for {
				if _, err := w.Write(chunk); err != nil {
					return err
				}
			}
		})
		fmt.Fprintln(f.stderr, "testserver: -stream-forever: stdout closed")
		os.Exit(1)
	case c.hugeLine > 0:
		f.out.raw(func(w io.Writer) error { return writeHugeLine(w, prefix, c.hugeLine, c.hugeLineNewline) })
		return false
	}
	return true
}

// badAnswers are -bad-answer's messages, by mode; ID is the call's id.
var badAnswers = map[string]string{
	"duplicate-result": `{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"checked"}]},"result":{"content":[{"type":"text","text":"smuggled"}]}}`,
	"invalid-utf8":     "{\"jsonrpc\":\"2.0\",\"id\":ID,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"bad \xff byte\"}]}}",
	"batch":            `[{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"in a batch"}]}}]`,
	"two-ids":          `{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"two ids"}]},"id":999}`,
	"notification":     `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"bad","data":"checked","data":"smuggled"}}`,
}

// writeHugeLine writes a JSON-RPC response of exactly n bytes (a text block
// padded with 'x'), or n 'x' bytes if n cannot hold the envelope, then a
// newline if newline is set. It never holds n bytes in memory.
func writeHugeLine(w io.Writer, prefix string, n int, newline bool) error {
	const suffix = `"}]}}`
	pad := n - len(prefix) - len(suffix)
	if pad < 0 {
		prefix, pad = "", n
	}
	if _, err := io.WriteString(w, prefix); err != nil {
		return err
	}
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for pad > 0 {
		k := min(pad, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			return err
		}
		pad -= k
	}
	if prefix != "" {
		if _, err := io.WriteString(w, suffix); err != nil {
			return err
		}
	}
	if newline {
		_, err := io.WriteString(w, "\n")
		return err
	}
	return nil
}

// lockedWriter serialises writes to stdout between the SDK and the filter.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// raw runs f with the lock held, for writes that must not be split.
func (l *lockedWriter) raw(f func(io.Writer) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return f(l.w)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
