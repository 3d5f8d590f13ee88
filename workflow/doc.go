// Package workflow runs durable, multi-step workflows over the host's tools,
// agents and people, and publishes them as MCP tools.
//
// A workflow is a YAML file (see [Parse] for the format; [Dirs], [Find] and
// [List] look in ./workflows/ and $XDG_CONFIG_HOME/switchboard/workflows/,
// like agent files). Its steps form a DAG (needs): a tool call through the
// host, an agent run, a gate that asks a person, a for_each over a list, or
// another workflow. Templates in Go's text/template syntax refer to the
// run's inputs, earlier steps' results and vars; every reference is checked
// when the file is loaded, not when a run meets it. What an agent step's
// agent may use — mcp_servers and tools — the workflow, the step and the
// run may each select ([Selection]); [CheckServers] checks them against
// the configuration when the workflows load.
//
// An [Engine] runs workflows on DBOS: each run is a durable DBOS workflow and
// each step a durable step, so a run survives a crash of the process (kill
// -9) and resumes from its last completed step without running a completed
// step again; a gate is a durable receive with a timeout, and still waits
// after a restart. The engine's database is the state store's (a SQLite file
// by default, or PostgreSQL), whose migrations make the engine's tables;
// DBOS keeps its own beside them.
//
// A step is called at most once unless it says otherwise. Each attempt of
// a tool or agent step is recorded as started before it calls anything; a
// step that was in flight when its process stopped is called again by
// recovery only when it is idempotent ([Step].Idempotent, or a tool that
// declares readOnlyHint or idempotentHint). Otherwise the run is
// interrupted there ([RunInterrupted], step:interrupted) until a person
// chooses ([Engine.Resolve]): retry it as a new attempt, skip it (its
// default is its result), or fail the run. Each tool call carries an
// idempotency key in its _meta (host.MetaKeyIdempotencyKey: run, step,
// attempt), so that servers that deduplicate do. An engine given its
// [Executor] calls nothing once the executor lost its lock on the
// database (another process may have adopted its runs), and closes.
//
// [Engine.StartCall] makes one tool call durable outside any workflow, by
// the same rule (the gateway's tasks of idempotent tools): a DBOS
// workflow that follows the call where it is made ([CallRunner]), and
// recovers it where it is adopted: called again when idempotent,
// reported interrupted otherwise.
//
// [Run] runs one workflow for a Go program, on an engine of its own (a
// temporary database unless told otherwise), with an event callback and
// gates answered in code.
//
// Every run emits [Event]s (run:started, step:started, step:completed,
// step:failed, gate:waiting, gate:answered, step:interrupted,
// step:resolved, run:completed, run:failed, run:cancelled) with sequence
// numbers; secrets never appear in them.
//
// [Engine.InProcess] publishes workflows as tools of an in-process MCP
// server of the host, so that every face (the gateway, the CLI) sees them
// with no knowledge of workflows: a call starts a run of its own, reports
// each step as progress and returns the run's outputs; a gate reaches the
// person through the calling client (elicitation, or an input-required
// result for 2026-07-28 clients). A caller's idempotency key (in the
// call's _meta) makes its retries one run, scoped to the caller the host
// names, never to anything a client says of itself.
//
// A gate takes exactly one answer: [Engine.Answer] calls at the same time,
// from any process on the database, have one winner, and the others fail
// with [ErrGateAnswered].
package workflow
