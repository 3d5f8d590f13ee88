package transport_test

import (
	"context"
	"errors"
	"testing"

	"github.com/switchboardmcp/switchboard/transport"
)

// TestSessionEnds: End cancels what Hold gave out for that session only,
// with its cause, and refuses new holds until the session is closed; the
// parent's end ends every session's.
func TestSessionEnds(t *testing.T) {
	parent, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	e := transport.NewSessionEnds[string](parent)

	a1, releaseA1, err := e.Hold("a")
	if err != nil {
		t.Fatal(err)
	}
	b, releaseB, err := e.Hold("b")
	if err != nil {
		t.Fatal(err)
	}
	defer releaseB()
	deleted := errors.New("deleted")
	closed := e.End("a", deleted)
	if got := context.Cause(a1); !errors.Is(got, deleted) {
		t.Errorf("a's held context after End: cause %v, want %v", got, deleted)
	}
	if b.Err() != nil {
		t.Errorf("b's context ended with a's session: %v", context.Cause(b))
	}
	if _, _, err := e.Hold("a"); !errors.Is(err, deleted) {
		t.Errorf("Hold(a) while a closes = %v, want %v", err, deleted)
	}
	releaseA1()
	releaseA1() // twice is once
	closed()
	a2, releaseA2, err := e.Hold("a") // a new session that reuses the key
	if err != nil || a2.Err() != nil {
		t.Fatalf("Hold(a) after a was closed = %v, %v; want a live context", a2, err)
	}
	defer releaseA2()

	// End with nothing held refuses holds too.
	closedC := e.End("c", nil)
	if _, _, err := e.Hold("c"); !errors.Is(err, transport.ErrSessionEnded) {
		t.Errorf("Hold(c) after End(c, nil) = %v, want ErrSessionEnded", err)
	}
	closedC()

	shutdown := errors.New("shutting down")
	stop(shutdown)
	for name, ctx := range map[string]context.Context{"a": a2, "b": b} {
		if got := context.Cause(ctx); !errors.Is(got, shutdown) {
			t.Errorf("%s's context after the parent ended: cause %v, want %v", name, got, shutdown)
		}
	}
}
