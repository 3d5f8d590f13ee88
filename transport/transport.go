// Package transport provides the MCP transports that the go-sdk does not
// provide, and bounds for the ones it does.
//
// # Stdio child processes: Command
//
// [Command] is an [mcp.Transport] that runs a stdio MCP server as a child
// process. Unlike the go-sdk's [mcp.CommandTransport] it
//
//   - gives the child exactly [Command.Env] and nothing of the host's
//     environment (which holds API keys); [MinimalEnv] builds a sensible one;
//   - starts the child so that stopping it also stops its descendants (an
//     npx child leaves a node grandchild behind otherwise), even when the
//     child exits by itself: on Linux in a PID namespace of its own, which
//     no descendant can leave, and killed with the host process; elsewhere,
//     or where the kernel refuses, in its own process group ([Isolation]);
//   - on Linux, gives that namespace a /proc of its own, so that a server
//     cannot read the environment (the secrets) of another
//     ([IsolationPrivateProc]); a program that imports this package runs
//     itself as the child's init for that (procinit_linux.go);
//   - stops the child the MCP specification's way on Close: close stdin, wait
//     [Command.TerminateGrace], SIGTERM the group, wait again, SIGKILL the group;
//     a child that has read none of its input yet (a package runner such as
//     npx still installing the server, [Command.AwaitingReader]) gets SIGTERM
//     at once and [Command.InstallGrace] to finish or undo its install, since
//     SIGKILL mid-install leaves npm's cache broken;
//   - reports a program that does not exist as a [*NotFoundError], which
//     does not quote the PATH searched;
//   - drains stderr continuously into [Command.Stderr], so a chatty child
//     never blocks; [TailBuffer] keeps the last bytes of it for error messages;
//   - reports how the child died: [Command.Exited], [Command.ExitErr],
//     [Command.ProcessState].
//
// The framing (newline-delimited JSON) is the go-sdk's [mcp.IOTransport].
//
// # Stdout
//
// MCP's stdio transport is one JSON-RPC message per line, but servers print
// other things to stdout too: a start-up banner ("Server running on
// stdio"), a stray console.log, a dotenv notice, a JSON logger's records.
// The go-sdk's decoder fails the connection on the first of them; Command
// skips every line that is not a message and hands it to
// [Command.SkippedLine], as the TypeScript SDK's client does. A line is a
// message when it has the shape of one: a JSON object whose "jsonrpc" is
// "2.0" with a "method" or a non-null "id" (or a non-empty array of such,
// a batch), alone on its line. A line with that shape that is not valid
// JSON inside is a corrupted message, not stray output: the connection
// fails on it, since skipping it could leave a call waiting forever for
// its lost answer. A message split over several lines (pretty-printed,
// which MCP forbids) is skipped line by line.
//
// # WebSocket
//
// [WebSocket] is the client side and [NewWebSocketHandler] the server side of
// MCP over WebSocket (github.com/coder/websocket): subprotocol "mcp", one
// JSON-RPC message per text frame.
//
// # Refused messages
//
// A message from a server that the protocol does not allow is refused,
// not read the SDK's way: one with a member name twice in an object
// (RFC 8259 §4 leaves the meaning to the reader, and the go-sdk keeps the
// last "result", so a checker that keeps the first can be shown one
// answer while the caller gets another), one with bytes that are not
// UTF-8 (§8.1 requires it; the SDK would turn them into U+FFFD without a
// word), and a JSON-RPC batch where none may be (MCP removed batches in
// 2025-06-18, and a batch holding an answer answers nothing Switchboard
// sent: it never sends one). Each [Command] line, [WebSocket] message and
// (through [StrictBodies]) Streamable HTTP or SSE message is checked
// (internal/strictjson: one pass, well under a microsecond for a typical
// message, no allocation when it passes).
//
// What a refused message does: each request it answers fails at once
// with an error answer ([CodeRefusedMessage], read back by
// [RefusedAnswer]) that says what was wrong without quoting the message;
// a notification or request in it is dropped; the transport's
// RefusedMessage callback hears of it (the host logs it, naming the
// server); the connection stays up, since the framing (a line, a frame,
// an event) is intact. An answer with two ids fails both requests.
//
// # Bounds
//
// Every transport here bounds the size of one inbound JSON-RPC message,
// by default [DefaultMaxMessageBytes] (4 MiB): a stdio line (message or
// not), a WebSocket
// message, or (through [LimitBodies]) a plain JSON HTTP response body of the
// Streamable HTTP transport. A single legitimate MCP message is far smaller;
// one bigger than that comes from a broken or hostile server, and the bound
// keeps the host's memory bounded whatever a server sends. A message over the
// bound is an error that closes the connection.
//
// A session's close is bounded too: the go-sdk's Close waits for the
// requests in flight on the session, in both directions, and
// [SessionEnds] ends them first, so that a peer that never answers cannot
// hold a session (and whatever closes it) open.
package transport

import "errors"

// DefaultMaxMessageBytes is the default bound on one inbound JSON-RPC
// message. It keeps the host's memory bounded against a broken or hostile
// server (an endless line, a gigabyte-sized result) while leaving room for
// any legitimate message, such as a large tool result or a base64 image.
const DefaultMaxMessageBytes = 4 << 20

// ErrMessageTooLarge is returned (wrapped) when a stdio line, a WebSocket
// message or an HTTP response body bounded by [LimitBodies] exceeds its
// bound.
var ErrMessageTooLarge = errors.New("transport: message too large")
