package workflow

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/secret"
)

// callRecorder is a CallRunner that records what the engine asks of it.
// With mine, Follow says each call is this process's and holds it until
// the engine closes: a call in flight when its process stopped.
type callRecorder struct {
	mine bool

	mu        sync.Mutex
	followed  []string
	recovered map[string][]bool // call id: again, per Recover
}

func (r *callRecorder) Follow(ctx context.Context, id string) (bool, error) {
	r.mu.Lock()
	r.followed = append(r.followed, id)
	r.mu.Unlock()
	if !r.mine {
		return false, nil
	}
	<-ctx.Done()
	return true, ctx.Err()
}

func (r *callRecorder) Recover(ctx context.Context, c DurableCall, again bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.recovered == nil {
		r.recovered = map[string][]bool{}
	}
	r.recovered[c.ID] = append(r.recovered[c.ID], again)
	return nil
}

func (r *callRecorder) snapshot() (followed int, recovered map[string][]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]bool{}
	for k, v := range r.recovered {
		out[k] = append([]bool(nil), v...)
	}
	return len(r.followed), out
}

// TestDurableCallRecovered: two durable calls, one idempotent, are in
// flight when their engine stops (a crashed process's, as far as the
// database goes: pending, their executor gone). Another engine adopts
// them: it makes the idempotent one again and reports the other
// interrupted, each once, and they end; adopting again finds nothing. A
// call whose arguments hold a secret's value is refused, never stored.
func TestDurableCallRecovered(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "state.db")
	h := newHost(t, filepath.Join(t.TempDir(), "calls.log"))
	red := secret.NewRedactor()
	red.Add("s3cret-value-1234")

	a := &callRecorder{mine: true}
	ea, err := New(ctx, &EngineOptions{Database: db, Host: h, ExecutorID: "a", Calls: a, Redactor: red})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []DurableCall{
		{ID: "read", Tool: "fx_echo", Arguments: `{"text":"a"}`, Idempotent: true},
		{ID: "write", Tool: "fx_echo", Arguments: `{"text":"b"}`},
	} {
		if err := ea.StartCall(ctx, c); err != nil {
			t.Fatalf("StartCall(%s): %v", c.ID, err)
		}
	}
	err = ea.StartCall(ctx, DurableCall{ID: "secret", Tool: "fx_echo", Arguments: `{"text":"s3cret-value-1234"}`, Idempotent: true})
	if !errors.Is(err, ErrHoldsSecret) {
		t.Errorf("StartCall with a secret in its arguments = %v, want ErrHoldsSecret", err)
	}
	wait.For(t, "engine a to follow both calls", func() (int, bool) {
		n, _ := a.snapshot()
		return n, n == 2
	})
	for _, id := range []string{"read", "write"} {
		if ok, err := ea.CallPending(ctx, id); !ok || err != nil {
			t.Errorf("CallPending(%s) while it runs = %v, %v; want true", id, ok, err)
		}
	}
	if ok, err := ea.CallPending(ctx, "secret"); ok || err != nil {
		t.Errorf("CallPending(secret), refused = %v, %v; want false", ok, err)
	}
	ea.Close()

	b := &callRecorder{}
	eb, err := New(ctx, &EngineOptions{Database: db, Host: h, ExecutorID: "b", Calls: b, Redactor: red})
	if err != nil {
		t.Fatal(err)
	}
	defer eb.Close()
	for _, id := range []string{"read", "write"} {
		if ok, err := eb.CallPending(ctx, id); !ok || err != nil {
			t.Errorf("CallPending(%s) after its engine stopped = %v, %v; want true", id, ok, err)
		}
	}
	gone := func(string) bool { return false }
	if _, err := eb.Adopt(ctx, gone); err != nil {
		t.Fatal(err)
	}
	wait.For(t, "both calls to end on engine b", func() (string, bool) {
		r, _ := eb.CallPending(ctx, "read")
		w, _ := eb.CallPending(ctx, "write")
		return fmt.Sprintf("read pending %v, write pending %v", r, w), !r && !w
	})
	if ids, err := eb.Adopt(ctx, gone); err != nil || len(ids) != 0 {
		t.Errorf("Adopt again = %v, %v; want nothing", ids, err)
	}
	_, rec := b.snapshot()
	if got := fmt.Sprint(rec); got != "map[read:[true] write:[false]]" {
		t.Errorf("engine b's recoveries = %s; want read called again once, write reported interrupted once", got)
	}
}
