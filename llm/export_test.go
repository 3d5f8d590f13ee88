package llm

import (
	"context"
	"time"
)

// WithSleep returns cfg with f as the wait between retries, so tests assert
// the waits instead of sleeping.
func WithSleep(cfg Config, f func(ctx context.Context, d time.Duration) error) Config {
	cfg.sleep = f
	return cfg
}

// RetryAfter exposes retryAfter.
var RetryAfter = retryAfter
