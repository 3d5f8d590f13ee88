package daemon

import (
	"slices"
	"testing"
)

// TestAgentRunFailedServers: an agent run's status names the servers its
// events say failed to start: run:started's, then its terminal event's
// (which has those that failed during the run too).
func TestAgentRunFailedServers(t *testing.T) {
	r := &agentRun{st: AgentRun{State: AgentRunning}, more: make(chan struct{})}
	r.add(AgentEvent{Type: "run:started", Seq: 1, Data: []byte(`{"type":"run:started","failed_servers":["broken"]}`)})
	if got := r.status().FailedServers; !slices.Equal(got, []string{"broken"}) {
		t.Errorf("after run:started: %q, want [broken]", got)
	}
	r.add(AgentEvent{Type: "run:completed", Seq: 2, Terminal: true,
		Data: []byte(`{"type":"run:completed","text":"ok","failed_servers":["broken","late"]}`)})
	if st := r.status(); st.State != AgentCompleted || !slices.Equal(st.FailedServers, []string{"broken", "late"}) {
		t.Errorf("after run:completed: %+v, want completed with [broken late]", st)
	}
}
