package workflow

import (
	"context"
	"testing"

	"github.com/switchboardmcp/switchboard/host"
)

// TestToolTaskNote: a detached call with a task note starts a run that
// keeps the note (RunStatus.Task, ToolTask.Task) and is listed by
// RunFilter.Tasks; a detached call without one, and a call followed to its
// end, start runs that are no task's.
func TestToolTaskNote(t *testing.T) {
	h, e := publish(t, greetWorkflow())
	ctx := context.Background()
	run := func(opts *host.CallOptions) string {
		t.Helper()
		res, err := h.CallTool(ctx, greetTool, []byte(`{"who":"ana"}`), opts)
		if err != nil || res.IsError {
			t.Fatalf("call %+v: %v %v", opts, res, err)
		}
		id, _ := res.Meta[host.MetaKeyRun].(string)
		return id
	}
	noted := run(&host.CallOptions{Detach: true, TaskNote: `{"caller":"oauth:ana"}`})
	plain := run(&host.CallOptions{Detach: true})
	run(nil)
	if noted == "" || plain == "" {
		t.Fatalf("detached calls named runs %q and %q", noted, plain)
	}
	all, err := e.Runs(ctx, nil)
	if err != nil || len(all) != 3 {
		t.Fatalf("Runs = %d runs, %v; want 3", len(all), err)
	}
	tasks, err := e.Runs(ctx, &RunFilter{Tasks: true})
	if err != nil || len(tasks) != 1 || tasks[0].ID != noted || tasks[0].Task != `{"caller":"oauth:ana"}` {
		t.Fatalf("Runs(Tasks) = %+v, %v; want the noted run alone, with its note", tasks, err)
	}
	if tt, err := e.ToolTask(ctx, noted); err != nil || tt.Task != tasks[0].Task {
		t.Errorf("ToolTask(noted) = %+v, %v; want its note", tt, err)
	}
	if tt, err := e.ToolTask(ctx, plain); err != nil || tt.Task != "" {
		t.Errorf("ToolTask(plain) = %+v, %v; want no note", tt, err)
	}
	for s, want := range map[RunState]string{RunQueued: TaskWorking, RunRunning: TaskWorking, RunInterrupted: TaskWorking,
		RunWaiting: TaskInputRequired, RunCompleted: TaskCompleted, RunFailed: TaskCompleted, RunCancelled: TaskCancelled} {
		if got := s.TaskStatus(); got != want {
			t.Errorf("%s.TaskStatus() = %q, want %q", s, got, want)
		}
	}
}
