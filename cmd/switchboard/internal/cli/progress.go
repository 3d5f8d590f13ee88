package cli

// Progress on stderr while servers start and while a call runs. On a
// terminal, one line drawn in place ("starting: a, b") and each progress
// notification of a call. Elsewhere (a pipe, a CI log) plain lines, and
// only for what is slow: nothing when everything is done within a quiet
// period, then a line when it is over, one per server that changes state
// after that, and one every so often while something still runs.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
)

const (
	// plainQuiet is how long a start or a call runs before a plain line
	// says so: what is done sooner is not worth a line in a log.
	plainQuiet = 2 * time.Second
	// plainEvery is how often a plain line says that something still
	// runs: often enough to tell a slow start or call from a hung one,
	// seldom enough to keep a log readable.
	plainEvery = 10 * time.Second
	// callEvery bounds how often a call's progress is written as plain
	// lines: the latest progress, at most once per period.
	callEvery = 5 * time.Second
)

// progress shows which servers are still starting, and what one is doing
// when the host can tell (npx installing it).
type progress struct {
	e     *env
	start time.Time

	mu      sync.Mutex
	pending map[string]string // id → what it is doing, if known
	shown   bool              // terminal: a line is drawn
	told    bool              // plain: the start was said to be slow
	timer   *time.Timer       // plain: the next "still starting" line
	over    bool
}

func (e *env) startProgress(servers []config.Server) *progress {
	p := &progress{e: e, start: time.Now(), pending: map[string]string{}}
	for _, s := range servers {
		p.pending[s.ID] = ""
	}
	if !e.stderrTTY {
		p.timer = time.AfterFunc(plainQuiet, p.tick)
	}
	return p
}

// follow updates the progress from h's state events until the returned
// func is called, which returns once the events published before it are
// shown.
func (p *progress) follow(h *host.Host) (stop func()) {
	w := h.Watch(0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer w.Close()
		// Once ctx ends, Events still yields what is queued, then ends.
		for ev := range w.Events(ctx) {
			if ev.Kind == host.EventState {
				p.update(ev.Status)
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

func (p *progress) update(st host.ServerStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	detail, pending := p.pending[st.ID]
	if p.over || !pending {
		return
	}
	switch st.State {
	case host.StateConnecting, host.StateInstalling:
		p.pending[st.ID] = st.Detail
		if st.Detail == detail || p.e.stderrTTY || !p.told {
			break
		}
		// What it does changed since the start was said to be slow
		// (npx began installing it): one line.
		if st.Detail != "" {
			fmt.Fprintf(p.e.stderr, "switchboard: %s: %s (%s)\n", st.ID, st.Detail, since(p.start))
		}
		return
	default:
		delete(p.pending, st.ID)
		if !p.e.stderrTTY {
			if p.told {
				// One line per server that ends its start after the start
				// was said to be slow; why it failed, the command says.
				fmt.Fprintf(p.e.stderr, "switchboard: %s: %s (%s)\n", st.ID, st.State, since(p.start))
			}
			return
		}
	}
	if !p.e.stderrTTY {
		return
	}
	line := ""
	if ids := p.pendingLocked(); len(ids) > 0 {
		line = "starting: " + strings.Join(ids, ", ")
		if len(line) > 100 {
			line = line[:97] + "..."
		}
	}
	fmt.Fprintf(p.e.stderr, "\r\033[K%s", line)
	p.shown = true
}

// tick writes the plain "starting" line: the first after plainQuiet, then
// every plainEvery while servers are still starting.
func (p *progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := p.pendingLocked()
	if p.over || len(ids) == 0 {
		return
	}
	word := "starting"
	if p.told {
		word = "still starting"
	}
	fmt.Fprintf(p.e.stderr, "switchboard: %s: %s (%s)\n", word, strings.Join(ids, ", "), since(p.start))
	p.told = true
	p.timer.Reset(plainEvery)
}

// pendingLocked is the servers still starting, each with what it is doing
// when known: "fs (installing with npx)".
func (p *progress) pendingLocked() []string {
	ids := make([]string, 0, len(p.pending))
	for id, detail := range p.pending {
		if detail != "" {
			id += " (" + detail + ")"
		}
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// done ends the progress: clears the terminal line, stops the plain lines.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.over = true
	if p.timer != nil {
		p.timer.Stop()
	}
	if p.shown {
		fmt.Fprint(p.e.stderr, "\r\033[K")
		p.shown = false
	}
}

// since is the time since start, rounded for a person.
func since(start time.Time) string {
	d := time.Since(start)
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// callProgress shows a call's progress: on a terminal each notification;
// elsewhere, once the call has run plainQuiet, a line every callEvery with
// the latest progress, or that it still runs. It returns the handler for
// CallOptions.Progress and a func to call when the call is over.
func (e *env) callProgress(tool string) (func(*mcp.ProgressNotificationParams), func()) {
	if e.stderrTTY {
		return func(p *mcp.ProgressNotificationParams) {
			fmt.Fprintf(e.stderr, "progress: %s\n", progressText(p))
		}, func() {}
	}
	c := &callLines{e: e, tool: tool, start: time.Now()}
	c.mu.Lock()
	c.timer = time.AfterFunc(plainQuiet, c.tick)
	c.mu.Unlock()
	return c.progress, c.stop
}

// callLines writes a long call's plain progress lines.
type callLines struct {
	e     *env
	tool  string
	start time.Time

	mu     sync.Mutex
	latest *mcp.ProgressNotificationParams // since the last line
	timer  *time.Timer
	over   bool
}

func (c *callLines) progress(p *mcp.ProgressNotificationParams) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.latest = p
}

func (c *callLines) tick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.over {
		return
	}
	if c.latest != nil {
		fmt.Fprintf(c.e.stderr, "switchboard: %s: progress %s (%s)\n", c.tool, progressText(c.latest), since(c.start))
		c.latest = nil
	} else {
		fmt.Fprintf(c.e.stderr, "switchboard: %s: still running (%s)\n", c.tool, since(c.start))
	}
	c.timer.Reset(callEvery)
}

func (c *callLines) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.over = true
	c.timer.Stop()
}

// progressText is a progress notification as a person reads it.
func progressText(p *mcp.ProgressNotificationParams) string {
	s := fmt.Sprintf("%g", p.Progress)
	if p.Total > 0 {
		s += fmt.Sprintf("/%g", p.Total)
	}
	if p.Message != "" {
		s += " " + p.Message
	}
	return s
}
