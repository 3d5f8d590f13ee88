package host

import (
	"bytes"
	"io"
	"testing"
)

// FuzzSSEProgressTap: the tap passes every byte of an event stream through
// unchanged, whatever the stream holds and however it is cut into reads
// (but for a line that holds a result with something of tasks, which it
// may rewrite: task.go), and never panics.
func FuzzSSEProgressTap(f *testing.F) {
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"switchboard-1\",\"progress\":1}}\n\n"), uint8(7))
	f.Add([]byte("event: message\ndata: {\"method\":\"notifications/progress\"\ndata: garbage\n\n"), uint8(1))
	f.Add(bytes.Repeat([]byte("x"), 70000), uint8(255))
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"task\":{\"taskId\":\"t\",\"status\":\"working\"}}}\r\n\n"), uint8(3))
	f.Fuzz(func(t *testing.T, stream []byte, chunk uint8) {
		h := &Host{}
		tap := &sseProgressTap{rc: io.NopCloser(&chunked{data: stream, n: int(chunk%64) + 1}), h: h}
		got, err := io.ReadAll(tap)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, stream) && !mayHoldTask(stream) {
			t.Fatalf("the tap changed the stream")
		}
		if len(tap.line) > tap.maxTapLine() {
			t.Fatalf("the tap holds %d bytes of one line", len(tap.line))
		}
	})
}

// chunked reads data n bytes at a time.
type chunked struct {
	data []byte
	n    int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[n:]
	return n, nil
}
