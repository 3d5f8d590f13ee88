package interop

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// tokenizerScript answers each line of stdin, a JSON string, with the
// number of its tokens in js-tiktoken's o200k_base (GPT-4o's and later
// OpenAI models' encoding).
const tokenizerScript = `const {getEncoding} = require(process.argv[1] + "/js-tiktoken");
const enc = getEncoding("o200k_base");
const rl = require("readline").createInterface({input: process.stdin, crlfDelay: Infinity});
rl.on("line", l => process.stdout.write(enc.encode(JSON.parse(l)).length + "\n"));`

// A Tokenizer counts tokens offline with js-tiktoken [JSTiktokenVersion]
// (OpenAI's BPE, o200k_base) in one Node process kept for the test: a
// figure "in tokens" is a tokenizer's, not a guess from bytes. Count is
// safe for concurrent use (an llmtest fake counts its requests with it).
type Tokenizer struct {
	mu  sync.Mutex
	in  io.WriteCloser
	out *bufio.Reader
}

// NewTokenizer starts the tokenizer's Node process, which ends with the
// test.
func NewTokenizer(t testing.TB) *Tokenizer {
	t.Helper()
	cmd := exec.Command(Node(t), "-e", tokenizerScript, JSTiktoken(t))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	// Started plainly (not StartWithTest, whose spawning goroutine a
	// goroutine-leak check would see): node ends at the end of its
	// input, which comes when the test process dies too.
	if err := cmd.Start(); err != nil {
		t.Fatalf("js-tiktoken: %v", err)
	}
	t.Cleanup(func() {
		in.Close() // node ends at the end of its input
		if err := cmd.Wait(); err != nil {
			t.Errorf("js-tiktoken: %v: %s", err, stderr.String())
		}
	})
	return &Tokenizer{in: in, out: bufio.NewReader(out)}
}

// Count returns text's number of tokens.
func (tk *Tokenizer) Count(text string) (int, error) {
	line, err := json.Marshal(text) // one line: newlines are escaped
	if err != nil {
		return 0, err
	}
	tk.mu.Lock()
	defer tk.mu.Unlock()
	if _, err := tk.in.Write(append(line, '\n')); err != nil {
		return 0, fmt.Errorf("js-tiktoken: %w", err)
	}
	answer, err := tk.out.ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("js-tiktoken: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(answer))
	if err != nil {
		return 0, fmt.Errorf("js-tiktoken answered %q", answer)
	}
	return n, nil
}

// CountTokens counts text's tokens with a [Tokenizer] of its own.
func CountTokens(t testing.TB, text []byte) int {
	t.Helper()
	n, err := NewTokenizer(t).Count(string(text))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
