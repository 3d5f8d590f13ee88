package daemon

import (
	"testing"

	"github.com/switchboardmcp/switchboard/workflow"
)

// TestRunHubDrops: the engine's hook never blocks on a subscriber that
// does not read; the subscriber is told, once, how many events it lost,
// and counting starts again after it reads the count.
func TestRunHubDrops(t *testing.T) {
	var h runHub
	s := h.subscribe()
	defer h.unsubscribe(s)
	for i := range runSubBuffer + 3 {
		h.publish(workflow.Event{RunID: "r", Seq: int64(i + 1)}) // would hang the test if it blocked
	}
	select {
	case <-s.lost:
	default:
		t.Fatal("no signal of lost events")
	}
	if n := h.takeLost(s); n != 3 {
		t.Errorf("lost %d, want 3", n)
	}
	if n := len(s.ch); n != runSubBuffer {
		t.Errorf("%d events kept, want %d", n, runSubBuffer)
	}
	<-s.ch
	h.publish(workflow.Event{RunID: "r", Seq: runSubBuffer + 4})
	if n := h.takeLost(s); n != 0 {
		t.Errorf("lost %d after reading, want 0", n)
	}
	h.unsubscribe(s)
	h.publish(workflow.Event{RunID: "r"}) // to no one
}
