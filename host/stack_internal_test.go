package host

import (
	"encoding/json"
	"testing"

	"github.com/switchboardmcp/switchboard/schema"
)

// BenchmarkValidateOnFreshGoroutine is the start of a tools/call as the
// gateway makes it: on a goroutine started for the request (the go-sdk's),
// the arguments are validated. "grown" grows the stack first, in one step,
// as CallTool does; "as-is" lets validation grow it as it goes.
//
//	go test ./host -run '^$' -bench ValidateOnFreshGoroutine -count 5
func BenchmarkValidateOnFreshGoroutine(b *testing.B) {
	s, err := schema.Compile(json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","minLength":1},"n":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"required":["text"],"additionalProperties":false}`))
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"text":"hello","n":3,"tags":["a","b"]}`)
	for _, grow := range []bool{true, false} {
		name := "as-is"
		if grow {
			name = "grown"
		}
		b.Run(name, func(b *testing.B) {
			done := make(chan error)
			for b.Loop() {
				go func() {
					if grow {
						growStack()
					}
					_, err := s.Validate(args)
					done <- err
				}()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
