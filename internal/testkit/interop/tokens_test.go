package interop_test

import (
	"sync"
	"testing"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// TestTokenizer: js-tiktoken's o200k_base counts as OpenAI's tiktoken
// does ("hello world" is two tokens; a newline in the text does not end
// the line the process reads), from several goroutines at once.
func TestTokenizer(t *testing.T) {
	tk := interop.NewTokenizer(t)
	var wg sync.WaitGroup
	for _, tc := range []struct {
		text string
		want int
	}{{"hello world", 2}, {"", 0}, {"hello\nworld", 3}} {
		wg.Go(func() {
			if n, err := tk.Count(tc.text); err != nil || n != tc.want {
				t.Errorf("Count(%q) = %d, %v; want %d", tc.text, n, err, tc.want)
			}
		})
	}
	wg.Wait()
}
