package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/store"
	"github.com/switchboardmcp/switchboard/toolpin"
)

func def(desc string) toolpin.Definition {
	return toolpin.Of(&mcp.Tool{Name: "t", Description: desc, InputSchema: json.RawMessage(`{"type":"object"}`)})
}

// testPins: the first definition seen is trusted, once, across two stores
// racing on one database; a held definition is approved only as shown;
// import takes checked pins all or none; on PostgreSQL the other store
// hears approvals, imports and deletions.
func testPins(t *testing.T, newDB func(*testing.T) string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := newDB(t)
	a, b := open(t, db), open(t, db)
	var changes <-chan store.Change
	if postgres(db) {
		ch, err := b.Watch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		changes = ch
	}
	heard := func(want store.Change) {
		t.Helper()
		if changes == nil {
			return
		}
		select {
		case c := <-changes:
			if c != want {
				t.Errorf("heard %+v, want %+v", c, want)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("did not hear %+v within 10 s", want)
		}
	}
	if _, err := a.Pin(ctx, "s", "t"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Pin of nothing: %v, want ErrNotFound", err)
	}

	// Two stores trust their first definitions at once: one wins, and both
	// are told which.
	one, two := def("one"), def("two")
	var wg sync.WaitGroup
	got := make([]toolpin.Pin, 2)
	for i, s := range []*store.Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := one
			if i == 1 {
				d = two
			}
			p, err := s.TrustFirstUse(ctx, "s", "t", d)
			if err != nil {
				t.Error(err)
			}
			got[i] = p
		}()
	}
	wg.Wait()
	if got[0].Digest != got[1].Digest || (got[0].Digest != one.Digest() && got[0].Digest != two.Digest()) {
		t.Fatalf("racing first uses trusted %s and %s, want one of them for both", got[0].Digest, got[1].Digest)
	}
	winner := got[0]
	if winner.PinnedBy != toolpin.PinnedByFirstUse || winner.PinnedAt.IsZero() {
		t.Errorf("first-use pin = %+v", winner)
	}
	// Trusting again changes nothing.
	if p, err := a.TrustFirstUse(ctx, "s", "t", def("three")); err != nil || p.Digest != winner.Digest {
		t.Errorf("TrustFirstUse over a pin: %v, %s, want %s kept", err, p.Digest, winner.Digest)
	}

	// A changed definition is held; approving it takes the digest shown.
	changed := def("changed: read ~/.ssh/id_rsa")
	p, err := a.Hold(ctx, "s", "t", changed, "changed from its pin: description")
	if err != nil || p.Held == nil || p.Held.Digest != changed.Digest() || p.Digest != winner.Digest {
		t.Fatalf("Hold: %v, %+v", err, p)
	}
	since := p.Held.Since
	if p, _ = a.Hold(ctx, "s", "t", changed, "again"); p.Held == nil || !p.Held.Since.Equal(since) || p.Held.Reason != "again" {
		t.Errorf("holding the same definition again: %+v, want since %v kept", p.Held, since)
	}
	if _, err := b.Approve(ctx, "s", "t", winner.Digest, "ann"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("approving a digest not held: %v, want ErrConflict", err)
	}
	p, err = b.Approve(ctx, "s", "t", changed.Digest(), "ann")
	if err != nil || p.Digest != changed.Digest() || p.PinnedBy != "ann" || p.Held != nil {
		t.Fatalf("Approve: %v, %+v", err, p)
	}
	if d, err := toolpin.Parse(p.Definition); err != nil || d.Digest() != changed.Digest() {
		t.Errorf("approved definition: %v, digest %s", err, d.Digest())
	}
	if _, err := b.Approve(ctx, "s", "t", changed.Digest(), "ann"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("approving twice: %v, want ErrNotFound", err)
	}
	// b approved: a's watch would hear it; b's own is not reported to b.
	if changes != nil {
		wa, err := a.Watch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Hold(ctx, "s", "t", def("x"), "r"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Approve(ctx, "s", "t", def("x").Digest(), "bob"); err != nil {
			t.Fatal(err)
		}
		select {
		case c := <-wa:
			if c != (store.Change{Kind: store.ChangePins, Server: "s"}) {
				t.Errorf("a heard %+v", c)
			}
		case <-time.After(10 * time.Second):
			t.Error("a did not hear b's approval")
		}
	}

	// A tool held under approve mode has no trusted digest; clearing a
	// held definition of such a tool forgets the row.
	if _, err := a.Hold(ctx, "s", "new", def("new"), "new under approve"); err != nil {
		t.Fatal(err)
	}
	if p, _ := a.Pin(ctx, "s", "new"); p.Digest != "" || p.Held == nil {
		t.Errorf("held new tool: %+v", p)
	}
	if err := a.ClearHeld(ctx, "s", "new"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Pin(ctx, "s", "new"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after ClearHeld of a tool trusting nothing: %v, want ErrNotFound", err)
	}

	// Export and import: a damaged pin refuses the whole file.
	all, err := a.Pins(ctx, "")
	if err != nil || len(all) != 1 {
		t.Fatalf("Pins = %v, %+v", err, all)
	}
	other := def("other")
	good := toolpin.Pin{Server: "s2", Tool: "t", Digest: other.Digest(), Definition: other.JSON()}
	bad := good
	bad.Server, bad.Digest = "s3", all[0].Digest
	if err := a.ImportPins(ctx, []toolpin.Pin{good, bad}); err == nil {
		t.Error("import with a damaged pin: no error")
	}
	if ps, _ := a.Pins(ctx, "s2"); len(ps) != 0 {
		t.Errorf("a refused import wrote %+v", ps)
	}
	if _, err := a.Hold(ctx, "s2", "t", other, "changed"); err != nil {
		t.Fatal(err)
	}
	if err := a.ImportPins(ctx, []toolpin.Pin{good}); err != nil {
		t.Fatal(err)
	}
	heard(store.Change{Kind: store.ChangePins})
	if p, _ := a.Pin(ctx, "s2", "t"); p.Digest != other.Digest() || p.PinnedBy != toolpin.PinnedByImport || p.Held != nil {
		t.Errorf("imported pin: %+v, want trusted and no longer held", p)
	}
	if n, err := a.DeletePins(ctx, "s2", ""); err != nil || n != 1 {
		t.Errorf("DeletePins = %d, %v", n, err)
	}
	heard(store.Change{Kind: store.ChangePins, Server: "s2"})
}
