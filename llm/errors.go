package llm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardmcp/switchboard/netguard"
)

// ErrorKind says what went wrong with a model call, in the terms a caller
// branches on. An ErrorKind is itself an error so that
// errors.Is(err, llm.KindRateLimit) works on any error wrapping an *Error.
type ErrorKind string

// The kinds of provider error.
const (
	KindAuth           ErrorKind = "auth"             // 401/403: missing, wrong or unauthorised key
	KindRateLimit      ErrorKind = "rate_limit"       // 429: retried, then reported
	KindUnavailable    ErrorKind = "unavailable"      // 5xx, overloaded, unreachable: retried, then reported
	KindContextTooLong ErrorKind = "context_too_long" // the conversation no longer fits the model
	KindBadRequest     ErrorKind = "bad_request"      // the provider refused the request (unknown model, bad parameter)
	KindCancelled      ErrorKind = "cancelled"        // the caller's context ended
	KindOther          ErrorKind = "other"
)

func (k ErrorKind) Error() string { return string(k) }

// Error is a failed model call. Its message never contains the API key.
type Error struct {
	Provider string // the configured provider name, e.g. "openai"
	Kind     ErrorKind
	Status   int    // the HTTP status, 0 when there was no response
	Message  string // what happened, for a person; Error() prefixes Provider
	// RetryAfter is what the provider asked us to wait before trying again
	// (Retry-After), when it said.
	RetryAfter time.Duration
	Err        error // the underlying SDK, network or context error

	final bool // retrying cannot help (e.g. OpenAI's insufficient_quota 429)
}

func (e *Error) Error() string { return e.Provider + ": " + e.Message }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is e's Kind, so that errors.Is(err, KindAuth) works.
func (e *Error) Is(target error) bool {
	k, ok := target.(ErrorKind)
	return ok && k == e.Kind
}

// retryable reports whether trying the same request again may succeed.
func (e *Error) retryable() bool {
	return !e.final && (e.Kind == KindRateLimit || e.Kind == KindUnavailable)
}

// Bounds of the retry policy.
const (
	// DefaultMaxRetries is Config.MaxRetries when it is 0.
	DefaultMaxRetries = 3
	// backoffBase is the first wait without a Retry-After; it doubles per attempt.
	backoffBase = time.Second
	// maxBackoff caps one wait, so a provider's huge Retry-After (or a long
	// exponential tail) does not hang a run: a longer request ends the retries.
	maxBackoff = 60 * time.Second
)

// backoff is the wait before retry number attempt (0-based) after err.
func backoff(err *Error, attempt int) (time.Duration, bool) {
	if err.RetryAfter > 0 {
		if err.RetryAfter > maxBackoff {
			return 0, false
		}
		return err.RetryAfter, true
	}
	d := backoffBase << min(attempt, 6)
	// Up to 20% jitter spreads out the clients a shared outage made wait together.
	d += time.Duration(rand.Int64N(int64(d) / 5))
	return min(d, maxBackoff), true
}

// sleepCtx waits for d or until ctx ends, whichever is first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryAfter reads how long a response asks us to wait: retry-after-ms
// (OpenAI), then Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// withRetries runs call until it succeeds, fails for good, or has been
// retried maxRetries times. call reports whether it has already passed text
// to the caller: such a call is never repeated, since the caller would see
// the text twice.
func withRetries(ctx context.Context, maxRetries int, sleep func(context.Context, time.Duration) error, call func() (*Response, bool, *Error)) (*Response, error) {
	for attempt := 0; ; attempt++ {
		resp, streamed, err := call()
		if err == nil {
			return resp, nil
		}
		if streamed || !err.retryable() || attempt >= maxRetries {
			return nil, err
		}
		d, ok := backoff(err, attempt)
		if !ok {
			return nil, err
		}
		if serr := sleep(ctx, d); serr != nil {
			return nil, &Error{Provider: err.Provider, Kind: KindCancelled,
				Message: fmt.Sprintf("cancelled while waiting %s to retry after: %s", d.Round(time.Millisecond), err.Message),
				Err:     errors.Join(serr, err)}
		}
	}
}

// classify turns a failure the SDK has not classified (no HTTP status) into
// an *Error: the context's end, or a network failure.
func classifyTransport(ctx context.Context, provider, baseURL string, err error) *Error {
	if ctxErr := ctx.Err(); ctxErr != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		if ctxErr == nil {
			ctxErr = err
		}
		return &Error{Provider: provider, Kind: KindCancelled, Message: "cancelled: " + ctxErr.Error(), Err: err}
	}
	// A guarded dialer's refusal is policy, not an outage: retrying cannot
	// help.
	refused := errors.Is(err, netguard.ErrRefused)
	return &Error{Provider: provider, Kind: KindUnavailable,
		Message: fmt.Sprintf("cannot reach %s: %v", baseURL, err), Err: err, final: refused}
}

// statusError builds the *Error of an HTTP error response. code and msg are
// the provider's error code (or type) and message; msg has the key redacted
// by the caller.
func statusError(provider, keySource string, status int, code, msg string, contextTooLong bool, h http.Header, err error) *Error {
	e := &Error{Provider: provider, Status: status, Err: err}
	text := http.StatusText(status)
	detail := msg
	if code != "" && detail != "" {
		detail = code + ": " + detail
	} else if code != "" {
		detail = code
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind = KindAuth
		what := "authentication failed"
		if status == http.StatusForbidden {
			what = "permission denied"
		}
		hint := "check the provider's api_key"
		if keySource != "" {
			hint = "check " + keySource
		}
		// The provider's own message is left out: OpenAI's echoes part of the key.
		e.Message = fmt.Sprintf("%s (%d): %s", what, status, hint)
		return e
	case contextTooLong:
		e.Kind = KindContextTooLong
		e.Message = fmt.Sprintf("context too long (%d): %s", status, detail)
		return e
	case status == http.StatusTooManyRequests:
		e.Kind = KindRateLimit
		e.RetryAfter = retryAfter(h, time.Now())
		e.Message = fmt.Sprintf("rate limited (%d)", status)
	case status == http.StatusRequestTimeout || status == http.StatusConflict || status >= 500:
		e.Kind = KindUnavailable
		e.RetryAfter = retryAfter(h, time.Now())
		e.Message = fmt.Sprintf("unavailable (%d %s)", status, text)
	case status >= 400 && status < 500:
		e.Kind = KindBadRequest
		e.Message = fmt.Sprintf("request refused (%d %s)", status, text)
	default:
		e.Kind = KindOther
		e.Message = fmt.Sprintf("unexpected response (%d %s)", status, text)
	}
	if detail != "" {
		e.Message += ": " + detail
	}
	return e
}

// redact removes the key from s: some providers quote what they were sent.
func redact(s, key string) string {
	if key == "" || len(key) < 4 {
		return s
	}
	return strings.ReplaceAll(s, key, "[REDACTED]")
}

func headerOf(r *http.Response) http.Header {
	if r == nil {
		return nil
	}
	return r.Header
}
