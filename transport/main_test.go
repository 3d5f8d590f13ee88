package transport_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/transport"
)

// childEnv selects the behaviour of the test binary when it runs as a child
// (the fork/exec trick of the go-sdk's cmd_test.go).
const childEnv = "SWITCHBOARD_TRANSPORT_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		run := children[mode]
		if run == nil {
			log.Fatalf("unknown child mode %q", mode)
		}
		run()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var children = map[string]func(){
	// server is a go-sdk MCP server on stdio; it exits when stdin closes.
	"server": runServer,
	// sleep is a grandchild: it sleeps until killed.
	"sleep": func() { time.Sleep(time.Hour) },
	// orphan starts a grandchild, reports both PIDs, and exits when it
	// has read a line (the test's sign that it knows who is who).
	"orphan": func() {
		ready(map[string]int{"pid": os.Getpid(), "grandchild": spawnGrandchild(false)})
		bufio.NewReader(os.Stdin).ReadString('\n')
	},
	// setsid-orphan is orphan with a grandchild in a session of its own.
	"setsid-orphan": func() {
		ready(map[string]int{"pid": os.Getpid(), "grandchild": spawnGrandchild(true)})
		bufio.NewReader(os.Stdin).ReadString('\n')
	},
	// group starts a grandchild, reports both PIDs and stays.
	"group": func() {
		ready(map[string]int{"pid": os.Getpid(), "grandchild": spawnGrandchild(false)})
		io.Copy(io.Discard, os.Stdin) // exits on stdin close
	},
	// setsid starts a grandchild in a session (and so a process group) of
	// its own, and one in its own group, reports the PIDs and stays.
	"setsid": func() {
		ready(map[string]int{"pid": os.Getpid(), "grandchild": spawnGrandchild(false), "setsid": spawnGrandchild(true)})
		io.Copy(io.Discard, os.Stdin) // exits on stdin close
	},
	// setsid-stay is setsid, but stays after stdin closes, as a server
	// that notices no EOF does.
	"setsid-stay": func() {
		ready(map[string]int{"pid": os.Getpid(), "grandchild": spawnGrandchild(false), "setsid": spawnGrandchild(true)})
		io.Copy(io.Discard, os.Stdin)
		select {}
	},
	// host is a host: it starts a Command in mode setsid-stay, reports
	// the PIDs of all three and its isolation, and waits to be killed.
	"host": func() {
		exe, err := os.Executable()
		if err != nil {
			log.Fatal(err)
		}
		cmd := &transport.Command{
			Path:           exe,
			Env:            transport.MinimalEnv(map[string]string{childEnv: "setsid-stay", "GORACE": "atexit_sleep_ms=0"}),
			NoPIDNamespace: os.Getenv(noNamespaceEnv) != "",
		}
		conn, err := cmd.Connect(context.Background())
		if err != nil {
			log.Fatal(err)
		}
		msg, err := conn.Read(context.Background())
		if err != nil {
			log.Fatal(err)
		}
		var pids map[string]int
		if err := json.Unmarshal(msg.(*jsonrpc.Request).Params, &pids); err != nil {
			log.Fatal(err)
		}
		report := map[string]any{}
		for k, pid := range pids {
			if report[k], err = interop.HostPIDIn(cmd.Pid(), pid); err != nil {
				log.Fatal(err)
			}
		}
		iso, _ := cmd.Isolation()
		report["isolation"] = iso.String()
		ready(report)
		select {}
	},
	// ignore-term ignores both stdin close and SIGTERM.
	"ignore-term": func() {
		signal.Ignore(syscall.SIGTERM)
		ready(nil)
		time.Sleep(time.Hour)
	},
	// ignore-stdin ignores stdin close but dies of SIGTERM.
	"ignore-stdin": func() {
		ready(nil)
		time.Sleep(time.Hour)
	},
	// huge-line writes a message that never ends.
	"huge-line": func() {
		os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"x","params":"`)
		chunk := []byte(strings.Repeat("a", 64<<10))
		for {
			if _, err := os.Stdout.Write(chunk); err != nil {
				return
			}
		}
	},
	// banner writes what servers print to stdout besides messages (see
	// bannerLines), then serves; its tool chatty prints to stdout too.
	"banner": func() {
		os.Stdout.WriteString(strings.Join(bannerLines, "\n") + "\n")
		runServer()
	},
	// corrupt writes a line shaped like a message that is not valid JSON,
	// then waits for stdin to close.
	"corrupt": func() {
		os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"ready","params":tru}` + "\n")
		io.Copy(io.Discard, os.Stdin)
	},
	// installer reads no stdin, as a package runner still installing the
	// server does; on SIGTERM it takes a second to undo its work (as npm
	// rolls an interrupted install back), says so on stderr, and exits 0.
	"installer": func() {
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		ready(nil)
		<-term
		os.Stderr.WriteString("installer: rolling back\n")
		time.Sleep(time.Second) // the work a rollback does, not a wait for anything
		os.Stderr.WriteString("installer: rolled back\n")
		os.Exit(0)
	},
	// late-reader reads no stdin until SIGUSR1, then reads it to its end.
	"late-reader": func() {
		usr := make(chan os.Signal, 1)
		signal.Notify(usr, syscall.SIGUSR1)
		ready(nil)
		<-usr
		io.Copy(io.Discard, os.Stdin)
	},
	// snoop waits for a request {"needle", "pid"} and answers with what
	// interop.SnoopEnviron found: a hostile server looking for another's
	// secret. The needle comes on stdin, not in its environment, where it
	// would find it in itself.
	"snoop": func() {
		ready(nil)
		line, err := bufio.NewReader(os.Stdin).ReadBytes('\n')
		if err != nil {
			log.Fatal(err)
		}
		var req struct {
			Params struct {
				Needle string
				Pid    int
			}
		}
		if err := json.Unmarshal(line, &req); err != nil {
			log.Fatal(err)
		}
		ready(map[string]string{"report": interop.SnoopEnviron(req.Params.Needle, req.Params.Pid)})
		io.Copy(io.Discard, os.Stdin)
	},
	// stderr-flood writes 8 MiB to stderr and then serves.
	"stderr-flood": func() {
		line := strings.Repeat("x", 1023) + "\n"
		for range 8 << 10 {
			os.Stderr.WriteString(line)
		}
		os.Stderr.WriteString("END OF STDERR\n")
		runServer()
	},
}

// bannerLines are lines real servers print to stdout before or between
// their messages.
var bannerLines = []string{
	"Server running on stdio",
	"[dotenv@17.2.1] injecting env (0) from .env",
	`{"level":30,"time":1700000000000,"msg":"listening"}`,
	`{"jsonrpc":"2.0"}`,
	`{"jsonrpc":"2.0","id":null,"result":{}}`,
	"[]",
	"\x1b[32mready\x1b[0m",
}

// chattyLine is what the tool chatty prints to stdout during its call.
const chattyLine = "console.log: chatty was called"

// ready writes a JSON-RPC notification "ready" with params to stdout: the
// child's signal that it is set up.
func ready(params any) {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "ready", "params": params})
	if err != nil {
		log.Fatal(err)
	}
	os.Stdout.Write(append(b, '\n'))
}

// noNamespaceEnv set makes mode host start its child with NoPIDNamespace.
const noNamespaceEnv = "SWITCHBOARD_TRANSPORT_TEST_NO_PIDNS"

// spawnGrandchild starts a grandchild that sleeps, in a session of its own
// if setsid, and returns its PID as the child sees it (see hostPID).
func spawnGrandchild(setsid bool) int {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=sleep")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	return cmd.Process.Pid
}

// hostPID returns the host's ID of the process that the child cmd (in a
// PID namespace of its own or not) calls pid. The process must still run.
func hostPID(t *testing.T, cmd *transport.Command, pid int) int {
	t.Helper()
	h, err := interop.HostPIDIn(cmd.Pid(), pid)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

type greetArgs struct {
	Name string `json:"name"`
}

func runServer() {
	s := mcp.NewServer(&mcp.Implementation{Name: "child", Version: "v0.0.1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *mcp.CallToolRequest, args greetArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hi " + args.Name}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "env"}, func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		env := os.Environ()
		sort.Strings(env)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(env, "\n")}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "chatty"}, func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		os.Stdout.WriteString(chattyLine + "\n")
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "said so"}}}, nil, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Print(err)
	}
}

// checkLeaks fails t if goroutines started during the test are still
// running when it ends. Register it first so that it runs last.
func checkLeaks(t *testing.T) {
	t.Helper()
	before := goroutines()
	t.Cleanup(func() {
		wait.For(t, "the goroutines the test started to end", func() (string, bool) {
			var leaked []string
			for id, stack := range goroutines() {
				if _, ok := before[id]; !ok && !benign(stack) {
					leaked = append(leaked, stack)
				}
			}
			return fmt.Sprintf("%d left:\n%s", len(leaked), strings.Join(leaked, "\n\n")), len(leaked) == 0
		})
	})
}

// benign reports goroutines that belong to the runtime or the test
// framework, not to the code under test.
func benign(stack string) bool {
	for _, s := range []string{
		"testing.(*T).Run", "testing.tRunner", "runtime.goexit0",
		"os/signal.signal_recv", "testing.(*M).startAlarm", "created by runtime.gc",
		"net/http.(*persistConn)", "net/http.(*Transport).dialConnFor", // idle keep-alive conns of http.DefaultTransport
	} {
		if strings.Contains(stack, s) {
			return true
		}
	}
	return false
}

func goroutines() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	m := make(map[string]string)
	self := ""
	for i, g := range strings.Split(string(buf), "\n\n") {
		id, _, _ := strings.Cut(strings.TrimPrefix(g, "goroutine "), " ")
		if i == 0 {
			self = id // the caller
			continue
		}
		m[id] = g
	}
	delete(m, self)
	return m
}

// gone reports whether pid no longer runs: it does not exist or is a zombie
// waiting for a reaper (in a container, PID 1 may never reap).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return os.IsNotExist(err)
	}
	// pid (comm) S ...: the state follows the last ')'.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}
