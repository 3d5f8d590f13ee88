package config

import (
	"fmt"
	"time"
)

// A server's upstream task settings (Server.UpstreamTask): when the host
// calls the server's tools as tasks of the server's own (the tasks of
// protocol 2025-11-25, which server-everything and the TypeScript SDK
// speak, and those of the 2026-07-28 tasks extension, which Switchboard's
// gateway serves): the server runs the call on, the host polls it, and
// the call's caller gets its result as from any call. These are the
// server's tasks, the host a client of them; the gateway's own tasks
// (Task, ToolTasks) are another thing, though a tool whose task mode is
// TaskAlways is called as UpstreamTaskAlways would.
const (
	// UpstreamTaskAuto calls a tool as a task when the server says the
	// tool requires one (execution.taskSupport "required", or a -32021
	// naming the tasks extension), which it cannot be called without;
	// a 2026-07-28 connection to a server that offers the extension
	// declares it on every call, and the server decides. The default.
	UpstreamTaskAuto = "auto"
	// UpstreamTaskAlways calls every tool that may run as a task
	// (taskSupport "optional" or "required"; any tool of a server that
	// offers the extension) as one: for tools known to run longer than a
	// call's timeout.
	UpstreamTaskAlways = "always"
	// UpstreamTaskNever calls no tool as a task: a tool that requires one
	// fails as the server says.
	UpstreamTaskNever = "never"
)

// DefaultUpstreamTaskTimeout bounds a call made as a task when the server
// sets no upstream_task_timeout: an hour. A task is for what outlives a
// call's timeout, so it is not bounded by that.
const DefaultUpstreamTaskTimeout = time.Hour

// checkUpstreamTask checks a server's upstream_task.
func checkUpstreamTask(s string) string {
	switch s {
	case "", UpstreamTaskAuto, UpstreamTaskAlways, UpstreamTaskNever:
		return ""
	}
	return fmt.Sprintf("invalid upstream_task %q: want auto, always or never", s)
}
