// Package agent runs LLM agents over the tools of MCP servers.
//
// An agent is a file: Markdown with YAML front matter, whose body is the
// system prompt, or YAML (see [Parse] for the fields). [Find] and [List]
// look in ./agents/ and $XDG_CONFIG_HOME/switchboard/agents/. [Resolve]
// applies the layers in order — configuration, agent file, run flags — and
// gives the [Plan]: the servers to start and the tools the model may see.
//
// The caller starts a host.Host with the plan's servers (and, when the agent
// grants built-in tools, [Builtins.InProcess]), then [Run] drives the model:
// model → tool calls through the host (validated, timed out) → results →
// model, until an answer or max_steps. Run returns the run's [Event]s as an
// iterator; exactly one terminal event ends it: run:completed, run:failed
// (with an [ErrorCode]) or run:cancelled.
package agent
