package ui_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/tasktest"
	"github.com/switchboardmcp/switchboard/internal/testkit/testbrowser"
	"github.com/switchboardmcp/switchboard/registry"
	"github.com/switchboardmcp/switchboard/registry/registrytest"
	"github.com/switchboardmcp/switchboard/ui"
	"github.com/switchboardmcp/switchboard/workflow"
)

var screenshots = flag.Bool("screenshots", false, "write the main pages' screenshots to ../docs/ui-*.png")

// waitTimeout bounds each wait for the page to show something.
const waitTimeout = 30 * time.Second

// poll waits until the JavaScript expression is true in the page.
func poll(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	// And htmx is done: no request, swap or settle under way, so the next
	// step finds the page's elements in place.
	expr = "(" + expr + `) && document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling') === null`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(waitTimeout), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		html, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('main')?.outerHTML ?? document.documentElement.outerHTML`))
		t.Fatalf("%s: %v (waiting for %s)\nthe page's main:\n%s", what, err, expr, html)
	}
}

func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		html, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
		t.Fatalf("%s: %v\n%s", what, err, html)
	}
}

func row(id string) string { return fmt.Sprintf(`tr[data-server=%q]`, id) }

// TestBrowser drives the UI in Chromium as a person would: sign in with
// the token through the login form (signed out, a page leads there, and
// the login page's stylesheet and script load), first with scripts off (a
// plain form post) and then with them; add a server
// (by keyboard), see it connect and its tools appear, try a tool and see
// its result and its command line, replay the call from the history (a
// second entry, the same arguments) and load it into the form, approve a held tool definition (by keyboard), remove the
// server; start a workflow, answer its gate and
// see the run complete; see a crashing server's stderr, its crash and
// its restart on its open page, and another's state change on the
// servers page, with no reload; and read every page at a desktop's and a
// phone's width without a horizontal scroll.
func TestBrowser(t *testing.T) {
	// c runs from a copy of the fixture that the test removes before
	// crashing it: its restart then fails at once ("not installed"), so
	// its state goes ready → failed and stays there for the page to show.
	bin := buildFixture(t)
	crashing := filepath.Join(t.TempDir(), "crashing-server")
	copyFile(t, bin, crashing)
	wf, err := workflow.Parse("gated.yaml", []byte(gated))
	if err != nil {
		t.Fatal(err)
	}
	const token = "ui-browser-token-6d2f81c3a9"
	t.Setenv("SB_UI_TOKEN", token)
	// The fake registry, serving the recorded fixture.
	recs, err := registrytest.Load(filepath.Join("..", "registry", "testdata", "registry.json"))
	if err != nil {
		t.Fatal(err)
	}
	fake := registrytest.New(recs)
	t.Cleanup(fake.Close)
	regClient, err := registry.New(fake.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := serveUI(t, func(o *daemon.Options) {
		o.Workflows = []*workflow.Workflow{wf}
		o.Config.Gateway.AuthToken = "{{env.SB_UI_TOKEN}}"
	}, &ui.Options{Registries: []registry.Named{{Name: "fixture", Client: regClient}}},
		// a's elicit is a task for a client declaring the extension.
		config.Server{ID: "a", Transport: config.TransportStdio, Command: bin, ToolTasks: map[string]string{"elicit": config.TaskAlways}},
		config.Server{ID: "c", Transport: config.TransportStdio, Command: crashing, Args: []string{"-crash-on-call"}},
		// d prints its environment to stderr, crashes on a call and is
		// restarted: its page shows why.
		config.Server{ID: "d", Transport: config.TransportStdio, Command: bin, Args: []string{"-print-env", "-crash-on-call"}},
		// r's tools are held until approved: Tool changes lists them.
		config.Server{ID: "r", Transport: config.TransportStdio, Command: bin, Args: []string{"-rug-pull"}, Pin: config.PinApprove},
	)
	ctx := testbrowser.New(t, 1280, 800)
	do(t, ctx, "a desktop's window", chromedp.EmulateViewport(1280, 800))

	// Signed out, with scripts off: the servers page leads to the login
	// page, styled, whose form signs in as a plain form post.
	do(t, ctx, "scripts off", scripts(false))
	do(t, ctx, "open the servers page signed out", chromedp.Navigate(s.url+"/servers"))
	visible(t, ctx, "the login page", `#login-form`)
	poll(t, ctx, "the login page, styled", `location.pathname === '/login' && `+styled)
	do(t, ctx, "sign in without scripts", chromedp.SendKeys(`#f-token`, token), chromedp.Click(`#login-submit`))
	visible(t, ctx, "signed in, the servers page", `#add-server`)
	poll(t, ctx, "signed in, on the servers page", `location.pathname === '/servers'`)
	// Signed out again, with scripts on: the login page's script loads,
	// and the form signs in through it.
	do(t, ctx, "sign out, scripts on", clearCookies(), scripts(true))
	do(t, ctx, "open / signed out", chromedp.Navigate(s.url+"/"))
	visible(t, ctx, "the login page", `#login-form`)
	poll(t, ctx, "the login page, styled, its script loaded", `location.pathname === '/login' && typeof htmx === 'object' && `+styled)
	do(t, ctx, "sign in by keyboard",
		chromedp.Focus(`#f-token`), chromedp.KeyEvent(token),
		chromedp.Focus(`#login-submit`), chromedp.KeyEvent("\r"))
	visible(t, ctx, "signed in, the servers page", `#add-server`)

	poll(t, ctx, "a is ready", `document.querySelector('`+row("a")+` .state-ready') !== null`)

	// Add server b, by keyboard: focus the fields, type, press Enter on
	// the button.
	do(t, ctx, "fill in the add form",
		chromedp.Focus(`#f-id`), chromedp.KeyEvent("b"),
		chromedp.Focus(`#f-command`), chromedp.KeyEvent(bin),
		chromedp.Focus(`#add-submit`), chromedp.KeyEvent("\r"))
	poll(t, ctx, "b appears and connects", `document.querySelector('`+row("b")+` .state-ready') !== null`)
	poll(t, ctx, "b's tools are counted", `Number(document.querySelector('`+row("b")+` [id^="tools-"]').textContent) > 5`)
	if _, err := s.d.GetServer(context.Background(), "b"); err != nil {
		t.Fatalf("b is not a server of the daemon: %v", err)
	}
	shoot(t, ctx, "ui-servers.png")

	// Find its echo tool, try it, see the result.
	do(t, ctx, "search the tools",
		chromedp.Navigate(s.url+"/tools"), chromedp.WaitVisible(`#q`),
		chromedp.SendKeys(`#q`, "echo"))
	poll(t, ctx, "the search finds b's echo", `document.querySelector('a[href="/tools/mcp_b_echo"]') !== null`)
	do(t, ctx, "open b's echo and call it",
		chromedp.Click(`a[href="/tools/mcp_b_echo"]`), chromedp.WaitVisible(`#try-form`),
		chromedp.SendKeys(`#arg-0`, "hello from the browser"),
		chromedp.Click(`#try-submit`))
	poll(t, ctx, "the result is shown", `document.querySelector('#result')?.textContent.includes('hello from the browser')`)
	// The same call on the command line, and in this browser's history;
	// run it again from there: a second entry, with the same arguments.
	poll(t, ctx, "the command line and the history's entry", `document.querySelector('#command')?.textContent === "switchboard call mcp_b_echo --args '{\"text\":\"hello from the browser\"}'" &&
		document.querySelectorAll('#history .history-entry').length === 1`)
	do(t, ctx, "run it again from the history", chromedp.Click(`#history .history-entry button.rerun`))
	poll(t, ctx, "a second entry with the same arguments", `(() => { const e = [...document.querySelectorAll('#history .history-entry')];
		return e.length === 2 && e[0].dataset.call !== e[1].dataset.call &&
			e.every(x => x.querySelector('code.args').textContent === '{"text":"hello from the browser"}') &&
			document.querySelector('#loaded-from') !== null && document.querySelector('#result').textContent.includes('hello from the browser') })()`)
	// The shot: the try-it form, its result, the command line and the
	// history.
	shootAt(t, ctx, "ui-tool.png", "#try-form")
	// Load the first call into the form: a page whose field holds its text.
	// (Followed by Navigate, which waits for the page to load.)
	load, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#history .history-entry:last-child a.load').getAttribute('href')`))
	if err != nil || !strings.HasPrefix(load, "/tools/mcp_b_echo?from=") {
		t.Fatalf("the first call's Load into the form: %q, %v", load, err)
	}
	do(t, ctx, "load the first call into the form", chromedp.Navigate(s.url+load), chromedp.WaitVisible(`#try-form`))
	poll(t, ctx, "the form holds the call's text", `document.querySelector('#loaded-from') !== null && document.querySelector('#result') === null && document.querySelector('#arg-0')?.value === 'hello from the browser'`)
	// A required field left empty: the error is next to it, nothing called.
	do(t, ctx, "call echo without its text", chromedp.Evaluate[chromedp.Void](`document.querySelector('#arg-0').value = ''`), chromedp.Click(`#try-submit`))
	poll(t, ctx, "required, next to the field", `document.querySelector('#arg-0-err')?.textContent.includes('required') && document.querySelector('#result') === null`)

	// A tool that asks during the call: its question is a form on the
	// page; the answer goes back to it, and its result says so.
	do(t, ctx, "call elicit", chromedp.Navigate(s.url+"/tools/mcp_a_elicit"), chromedp.WaitVisible(`#try-submit`), chromedp.Click(`#try-submit`))
	// Not poll: the call is an htmx request until the question is answered.
	do(t, ctx, "the question's form", chromedp.WaitVisible(`#ask-form #ask-1`))
	do(t, ctx, "answer it", chromedp.SetValue(`#ask-form #ask-1`, "Grace"), chromedp.Click(`#ask-accept`))
	poll(t, ctx, "the answer reached the tool", `document.querySelector('#result')?.textContent.includes('"name": "Grace"') && document.querySelector('#ask-form') === null`)

	// The content tool's image is shown inline (img-src data:).
	do(t, ctx, "call content", chromedp.Navigate(s.url+"/tools/mcp_a_content"), chromedp.WaitVisible(`#try-submit`), chromedp.Click(`#try-submit`))
	poll(t, ctx, "the image is decoded", `(() => { const i = document.querySelector('#result img'); return i !== null && i.complete && i.naturalWidth > 0 })()`)

	// Start the workflow gated from its form, answer its gate on the
	// run's page, and see the run complete there.
	do(t, ctx, "start gated",
		chromedp.Navigate(s.url+"/workflows/gated"), chromedp.WaitVisible(`#start-form`),
		chromedp.SendKeys(`#start-form #arg-0`, "from the browser"),
		chromedp.Click(`#start-submit`))
	// htmx follows HX-Redirect with a navigation: wait for the new page.
	do(t, ctx, "the run's page", chromedp.WaitVisible(`#run`))
	poll(t, ctx, "the run's page shows the gate's form", `location.pathname.startsWith('/runs/') && document.querySelector('#gate-form #arg-0') !== null`)
	shoot(t, ctx, "ui-run.png")
	do(t, ctx, "approve", chromedp.SetValue(`#gate-form #arg-0`, "true"), chromedp.Click(`#gate-accept`))
	poll(t, ctx, "the run completes on the open page", `document.querySelector('#run-state')?.textContent === 'completed' && document.querySelector('#timeline').textContent.includes('from the browser')`)
	// Its timeline chart: the wait at gate ok as a hatched bar, then say's
	// attempt, after it on the time axis.
	poll(t, ctx, "the run's chart has the gate's bar and the step's", `(() => {
		const g = document.querySelector('#run-chart rect.bar[data-step="ok"][data-kind="gate"]');
		const s = document.querySelector('#run-chart rect.bar[data-step="say"][data-kind="step"]');
		return g !== null && s !== null && g.getAttribute('fill') === 'url(#run-chart-hatch)' &&
			Number(s.dataset.startMs) >= Number(g.dataset.startMs) + Number(g.dataset.ms) &&
			Number(s.getAttribute('x')) > Number(g.getAttribute('x')) &&
			document.querySelector('#run-chart-desc').textContent.includes('1 waits at a gate')
	})()`)
	shootAt(t, ctx, "ui-run-timeline.png", "#run-chart")
	runPath, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))
	if err != nil {
		t.Fatal(err)
	}

	// A task that waited for input (a's elicit, called over /mcp as a
	// task, answered with tasks/update): its page draws it working, the
	// wait hatched after it, and its end marked ✓ completed.
	bearer := []string{"Authorization", "Bearer " + token}
	taskID, _ := tasktest.Create(t, s.url+"/mcp", "mcp_a_elicit", map[string]any{}, bearer...)
	asked := tasktest.Await(t, s.url+"/mcp", taskID, "the elicit task to ask", time.Minute, func(res map[string]any) bool {
		return res["status"] == "input_required" || tasktest.Terminal(res)
	}, bearer...)
	reqs, _ := asked["inputRequests"].(map[string]any)
	if len(reqs) != 1 {
		t.Fatalf("the elicit task: %v, want one question", asked)
	}
	for key := range reqs {
		tasktest.Post(t, s.url+"/mcp", "tasks/update", map[string]any{"taskId": taskID, "inputResponses": map[string]any{
			key: map[string]any{"action": "decline"}}}, tasktest.Caps, bearer...).Must(t)
	}
	if res := tasktest.Await(t, s.url+"/mcp", taskID, "the elicit task to end", time.Minute, tasktest.Terminal, bearer...); res["status"] != "completed" {
		t.Fatalf("the elicit task: %v, want it completed", res)
	}
	do(t, ctx, "open the task's page", chromedp.Navigate(s.url+"/tasks/"+taskID), chromedp.WaitVisible(`#task-chart`))
	poll(t, ctx, "the task's chart: working, the wait hatched, then ✓ completed", `(() => {
		const w = document.querySelector('#task-chart rect.bar[data-step="working"][data-kind="step"]');
		const g = document.querySelector('#task-chart rect.bar[data-step="input_required"][data-kind="gate"]');
		const end = document.querySelector('#task-chart text.mark');
		return w !== null && g !== null && g.getAttribute('fill') === 'url(#task-chart-hatch)' &&
			Number(g.dataset.startMs) >= Number(w.dataset.startMs) + Number(w.dataset.ms) &&
			Number(g.getAttribute('x')) >= Number(w.getAttribute('x')) &&
			end !== null && end.textContent.startsWith('✓ completed') &&
			document.querySelector('#task-chart-desc').textContent.includes('1 waits for input, then completed')
	})()`)
	shootAt(t, ctx, "ui-task-timeline.png", "#task-chart")

	// The Usage page, from the menu: b's echo calls (the try and its run
	// again) are counted there.
	do(t, ctx, "open Usage from the menu", chromedp.Navigate(s.url+"/servers"), chromedp.WaitVisible(`nav a[href="/usage"]`),
		chromedp.Click(`nav a[href="/usage"]`), chromedp.WaitVisible(`#usage-calls`))
	poll(t, ctx, "b's echo calls are counted", `document.querySelector('tr[data-usage="b/echo"] td:nth-of-type(2)')?.textContent === '2'`)

	// Known calls, then their charts: a's add three times, its fail once
	// (an error). The calls chart of each tool, by its link in the table,
	// has markers adding up to them, at times of the last minutes; its
	// table of numbers says the same.
	h := s.d.Host()
	for range 3 {
		if _, err := h.CallTool(context.Background(), "mcp_a_add", []byte(`{"a":1,"b":2}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.CallTool(context.Background(), "mcp_a_fail", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool          string
		calls, errors int
	}{{"add", 3, 0}, {"fail", 1, 1}} {
		do(t, ctx, "open Usage", chromedp.Navigate(s.url+"/usage"), chromedp.WaitVisible(`#usage-calls`))
		do(t, ctx, "chart a's "+c.tool, chromedp.Click(`tr[data-usage="a/`+c.tool+`"] td a`), chromedp.WaitVisible(`#chart-calls`))
		sum := func(series string) string {
			return `[...document.querySelectorAll('#chart-calls g[data-series="` + series + `"] .marker')].reduce((n, m) => n + Number(m.dataset.v), 0)`
		}
		poll(t, ctx, "a's "+c.tool+"'s calls and errors charted", fmt.Sprintf(`location.search.includes('tool=%s') && %s === %d && %s === %d &&
			[...document.querySelectorAll('#chart-calls g.series .marker')].every(m => Math.abs(Date.now() / 1000 - Number(m.dataset.t)) < 600) &&
			[...document.querySelectorAll('#chart-calls table.chart-data tbody tr')].reduce((n, r) => n + Number(r.cells[1].textContent), 0) === %d &&
			document.querySelector('#chart-calls-desc').textContent.includes('calls: %d in all')`, c.tool, sum("calls"), c.calls, sum("errors"), c.errors, c.calls, c.calls))
	}
	do(t, ctx, "a's add's chart", chromedp.Navigate(s.url+"/usage?server=a&tool=add"), chromedp.WaitVisible(`#chart-calls`))
	shoot(t, ctx, "ui-usage.png")

	// Tool changes, from the menu: r's weather is held; approve it by
	// keyboard, and it leaves the list and is offered.
	do(t, ctx, "open Tool changes from the menu", chromedp.Navigate(s.url+"/tools"), chromedp.WaitVisible(`nav a[href="/tools/changes"]`),
		chromedp.Click(`nav a[href="/tools/changes"]`), chromedp.WaitVisible(`#changes`))
	weather := `[data-change="r/weather"]`
	poll(t, ctx, "r's weather is held, its definition shown added", `[...document.querySelectorAll('`+weather+` pre.diff ins')].some(l => l.textContent.includes("today's weather"))`)
	shoot(t, ctx, "ui-tool-changes.png")
	do(t, ctx, "approve r's weather by keyboard", chromedp.Focus(weather+` button[type="submit"]`), chromedp.KeyEvent("\r"))
	poll(t, ctx, "approved: it leaves the list", `document.querySelector('`+weather+`') === null && document.querySelector('#flash').textContent.includes('Approved weather of server r')`)
	if _, ok := s.d.Host().Tool("mcp_r_weather"); !ok {
		t.Error("r's weather approved in the browser is not offered")
	}

	// Each server's calls and errors of the last hour, as a sparkline:
	// a's include the four calls above, one of them an error.
	do(t, ctx, "the servers page", chromedp.Navigate(s.url+"/servers"), chromedp.WaitVisible(row("b")))
	poll(t, ctx, "a's sparkline counts its calls", `(() => { const s = document.querySelector('`+row("a")+` svg.spark');
		return s !== null && Number(s.dataset.calls) >= 4 && Number(s.dataset.errors) >= 1 && s.getAttribute('aria-label').startsWith('server a: ') })()`)

	// Remove b.
	do(t, ctx, "remove b", chromedp.Click(row("b")+` button.danger`))
	// It asks first, in the page: nothing is removed yet.
	poll(t, ctx, "remove asks", `document.querySelector('`+row("b")+` [id^="confirm-delete-"]')?.textContent === 'Remove b?'`)
	if _, err := s.d.GetServer(context.Background(), "b"); err != nil {
		t.Fatalf("b was removed before the confirmation: %v", err)
	}
	do(t, ctx, "confirm", chromedp.Click(row("b")+` [id^="confirm-delete-"]`))
	poll(t, ctx, "b's row goes", `document.querySelector('`+row("b")+`') === null && document.querySelector('#flash').textContent.includes('Deleted b')`)
	if _, err := s.d.GetServer(context.Background(), "b"); err == nil {
		t.Error("b is still a server of the daemon")
	}

	// d's page shows its stderr, its secret redacted; d crashes while the
	// page is open, and the page shows, with no reload, the loss with the
	// child's last words, the restart (and its count), and the new
	// child's stderr.
	do(t, ctx, "d's page", chromedp.Navigate(s.url+"/servers/d"), chromedp.WaitVisible(`#server-history`))
	poll(t, ctx, "d's stderr, redacted, and no incident", `document.querySelector('#server-stderr')?.textContent.includes('CANARY=[REDACTED]') &&
		document.querySelector('#server-incidents') === null`)
	do(t, ctx, "mark d's page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	if _, err := h.CallTool(context.Background(), "mcp_d_echo", []byte(`{"text":"x"}`), nil); err == nil {
		t.Fatal("the call that crashes d succeeded")
	}
	poll(t, ctx, "d's crash and restart on the open page", `(() => {
		const lost = document.querySelector('#server-incidents tr[data-incident="lost"]');
		const err = document.querySelector('#server-stderr')?.textContent ?? '';
		return window.notReloaded === true && lost !== null && lost.textContent.includes('exiting with status 3') &&
			document.querySelector('#server-incidents tr[data-incident="restarted"]') !== null &&
			document.querySelector('#server-restarts').textContent === '1' && document.querySelector('#state-64.state-ready') !== null &&
			err.includes('testserver: -crash-on-call: exiting with status 3') && err.split('CANARY=[REDACTED]').length === 3
	})()`)
	shoot(t, ctx, "ui-server.png")

	// c crashes while the page is open: its state changes there live.
	do(t, ctx, "the servers page", chromedp.Navigate(s.url+"/servers"), chromedp.WaitVisible(row("c")))
	poll(t, ctx, "c is ready", `document.querySelector('`+row("c")+` .state-ready') !== null`)
	do(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	if err := os.Remove(crashing); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CallTool(context.Background(), "mcp_c_echo", []byte(`{"text":"x"}`), nil); err == nil {
		t.Fatal("the call that crashes c succeeded")
	}
	poll(t, ctx, "c's state changes on the open page", `window.notReloaded === true && document.querySelector('`+row("c")+` .state-failed') !== null`)

	// Readable at a desktop's and a phone's width: nothing wider than the
	// window.
	for _, vp := range []struct{ w, h int64 }{{1280, 800}, {390, 844}} {
		for _, p := range []string{"/servers", "/servers/a", "/servers/d", "/tools", "/tools/changes", "/tools/mcp_a_add", "/runs", runPath, "/workflows/gated", "/agents", "/usage", "/usage?server=a&tool=add", "/tasks/" + taskID, "/registry?q=airtable"} {
			do(t, ctx, "open "+p, chromedp.EmulateViewport(vp.w, vp.h), chromedp.Navigate(s.url+p), chromedp.WaitVisible(`main`))
			w, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
			if err != nil {
				t.Fatal(err)
			}
			if int64(w) > vp.w {
				wide, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('main *')].filter(e => e.getBoundingClientRect().right > innerWidth).slice(0, 5).map(e => e.tagName + (e.id ? '#' + e.id : '') + (e.className && typeof e.className === 'string' ? '.' + e.className : '')).join(', ')`))
				t.Errorf("%s at %dx%d is %d px wide (wider: %s)", p, vp.w, vp.h, w, wide)
			}
		}
	}
	// Light and dark, as the system prefers: the text, the muted text, the
	// links and the charts' labels stand out from the background (WCAG's
	// 4.5:1), the charts' lines and markers too (3:1).
	for _, scheme := range []string{"light", "dark"} {
		do(t, ctx, scheme+" scheme", colorScheme(scheme), chromedp.Navigate(s.url+"/usage?server=a&tool=add"), chromedp.WaitVisible(`#chart-calls`))
		poll(t, ctx, "the page is "+scheme+", its contrast sufficient", `(() => {
			const lum = c => { const v = c.match(/[\d.]+/g).slice(0, 3).map(Number).map(x => { x /= 255; return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4) });
				return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2] };
			const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05) };
			const bg = getComputedStyle(document.body).backgroundColor;
			const css = (sel, prop) => getComputedStyle(document.querySelector(sel))[prop];
			const text = [css('body', 'color'), css('.muted', 'color'), css('main a', 'color'), css('#chart-calls .axis text', 'fill')];
			const lines = [css('#chart-calls g.s0 polyline', 'stroke'), css('#chart-calls g.s1 polyline', 'stroke'), css('#chart-calls g.s0 .marker', 'fill')];
			return `+map[string]string{"light": `lum(bg) > 0.8`, "dark": `lum(bg) < 0.05`}[scheme]+` &&
				text.every(c => ratio(c, bg) >= 4.5) && lines.every(c => ratio(c, bg) >= 3)
		})()`)
	}
	do(t, ctx, "light again", colorScheme("light"))

	// Keyboard: the first Tab reaches the skip link, and focus is visible.
	do(t, ctx, "tab", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(s.url+"/servers"), chromedp.WaitVisible(`main`), chromedp.KeyEvent("\t"))
	poll(t, ctx, "the skip link has a visible focus", `document.activeElement.classList.contains('skip') && getComputedStyle(document.activeElement).outlineStyle !== 'none'`)

	// The registry page, from the menu: search the fake registry, open an
	// entry, type its secret in (refused, and not echoed), then give a
	// placeholder and add it.
	do(t, ctx, "open the registry page", chromedp.Navigate(s.url+"/servers"), chromedp.WaitVisible(`main`), chromedp.Click(`nav a[href="/registry"]`))
	visible(t, ctx, "the registry page", `#registry-search`)
	do(t, ctx, "search airtable", chromedp.Focus(`#r-q`), chromedp.KeyEvent("airtable"), chromedp.Click(`#registry-search-submit`))
	visible(t, ctx, "airtable found", `tr[data-entry="io.github.domdomegg/airtable-mcp-server"] a`)
	shoot(t, ctx, "ui-registry.png")
	do(t, ctx, "open airtable's add form", chromedp.Click(`tr[data-entry="io.github.domdomegg/airtable-mcp-server"] a`))
	visible(t, ctx, "the add form", `#registry-add`)
	poll(t, ctx, "the secret's field holds a placeholder", `document.querySelector('input[name="v:AIRTABLE_API_KEY"]').value.startsWith('{{secrets.')`)
	const typed = "pat-browser-typed-3c9e51d7"
	do(t, ctx, "type the secret in and add",
		chromedp.SetValue(`#r-id`, "airtable"),
		chromedp.SetValue(`input[name="v:AIRTABLE_API_KEY"]`, typed),
		chromedp.Click(`#registry-add-submit`))
	poll(t, ctx, "refused, the secret not echoed", `document.querySelector('#registry-add [aria-invalid="true"]') !== null &&
		document.querySelector('#registry-add').textContent.includes('secret store') &&
		!document.documentElement.outerHTML.includes('`+typed+`') &&
		document.querySelector('input[name="v:AIRTABLE_API_KEY"]').value.startsWith('{{secrets.')`)
	do(t, ctx, "add with the placeholder",
		chromedp.SetValue(`input[name="v:AIRTABLE_API_KEY"]`, "{{secrets.airtable_key}}"),
		chromedp.Click(`#registry-add-submit`))
	do(t, ctx, "the new server's page", chromedp.WaitVisible(`#server-restarts`))
	poll(t, ctx, "on the new server's page", `location.pathname === '/servers/airtable'`)
	if m, err := s.d.GetServer(context.Background(), "airtable"); err != nil || strings.Contains(string(m.Config), typed) || !strings.Contains(string(m.Config), "{{secrets.airtable_key}}") {
		t.Errorf("the server added from the registry: %s, %v; want its placeholder, not the value typed", m.Config, err)
	}

	// Log out: the page leads to the login page again.
	do(t, ctx, "log out", chromedp.Click(`#logout`))
	visible(t, ctx, "the login page", `#login-form`)
	do(t, ctx, "open the servers page signed out", chromedp.Navigate(s.url+"/servers"))
	visible(t, ctx, "the login page", `#login-form`)
}

// visible waits, bounded, until the element sel is visible, across the
// navigations that lead to it.
func visible(t *testing.T, ctx context.Context, what, sel string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.WaitVisible(sel)); err != nil {
		html, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
		t.Fatalf("%s: %s never visible: %v\n%s", what, sel, err, html)
	}
}

// styled is true in a page whose stylesheet has loaded.
const styled = `[...document.styleSheets].some(s => s.cssRules.length > 0)`

// scripts turns the page's scripts on or off.
func scripts(on bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on})
		return err
	})
}

// colorScheme makes the page see the system prefer a light or dark
// scheme.
func colorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return err
	})
}

// clearCookies signs the browser out.
func clearCookies() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, network.ClearBrowserCookies, cdp.Empty{})
		return err
	})
}

func buildFixture(t *testing.T) string {
	t.Helper()
	return interop.Build(t, fixturePkg)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// shoot writes screenshots of the window to ../docs/NAME with
// -screenshots: light, and dark as NAME-dark.png (the system's preference
// emulated).
func shoot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	shootAt(t, ctx, name, "")
}

// shootAt is shoot with the element sel scrolled to the top ("": the
// page's top).
func shootAt(t *testing.T, ctx context.Context, name, sel string) {
	t.Helper()
	if !*screenshots {
		return
	}
	scroll := `window.scrollTo(0, 0)`
	if sel != "" {
		scroll = `document.querySelector(` + strconv.Quote(sel) + `).scrollIntoView()`
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.activeElement.blur(); `+scroll)); err != nil {
		t.Fatal(err)
	}
	for _, scheme := range []string{"light", "dark"} {
		file := name
		if scheme == "dark" {
			file = strings.TrimSuffix(name, ".png") + "-dark.png"
		}
		do(t, ctx, scheme+" scheme", colorScheme(scheme))
		b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "docs", file), b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote docs/%s (%s bytes)", file, strconv.Itoa(len(b)))
	}
	do(t, ctx, "light scheme", colorScheme("light"))
}
