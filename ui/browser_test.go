package ui_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/testbrowser"
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
// its result, approve a held tool definition (by keyboard), remove the
// server; start a workflow, answer its gate and
// see the run complete; see a crashing server's state change on
// the open page, with no reload; and read every page at a desktop's and a
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
	s := serveWith(t, func(o *daemon.Options) {
		o.Workflows = []*workflow.Workflow{wf}
		o.Config.Gateway.AuthToken = "{{env.SB_UI_TOKEN}}"
	},
		config.Server{ID: "a", Transport: config.TransportStdio, Command: bin},
		config.Server{ID: "c", Transport: config.TransportStdio, Command: crashing, Args: []string{"-crash-on-call"}},
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
	// A required field left empty: the error is next to it, nothing called.
	do(t, ctx, "call echo without its text", chromedp.Evaluate[chromedp.Void](`document.querySelector('#arg-0').value = ''`), chromedp.Click(`#try-submit`))
	poll(t, ctx, "required, next to the field", `document.querySelector('#arg-0-err')?.textContent.includes('required') && document.querySelector('#result') === null`)

	// The content tool's image is shown inline (img-src data:).
	do(t, ctx, "call content", chromedp.Navigate(s.url+"/tools/mcp_a_content"), chromedp.WaitVisible(`#try-submit`), chromedp.Click(`#try-submit`))
	poll(t, ctx, "the image is decoded", `(() => { const i = document.querySelector('#result img'); return i !== null && i.complete && i.naturalWidth > 0 })()`)
	shoot(t, ctx, "ui-tool.png")

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

	// The Usage page, from the menu: b's echo call is counted there.
	do(t, ctx, "open Usage from the menu", chromedp.Navigate(s.url+"/servers"), chromedp.WaitVisible(`nav a[href="/usage"]`),
		chromedp.Click(`nav a[href="/usage"]`), chromedp.WaitVisible(`#usage-calls`))
	poll(t, ctx, "b's echo call is counted", `document.querySelector('tr[data-usage="b/echo"] td:nth-of-type(2)')?.textContent === '1'`)

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

	// Remove b.
	do(t, ctx, "remove b", chromedp.Navigate(s.url+"/servers"), chromedp.WaitVisible(row("b")),
		chromedp.Click(row("b")+` button.danger`))
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

	// c crashes while the page is open: its state changes there live.
	poll(t, ctx, "c is ready", `document.querySelector('`+row("c")+` .state-ready') !== null`)
	do(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	if err := os.Remove(crashing); err != nil {
		t.Fatal(err)
	}
	h := s.d.Host()
	if _, err := h.CallTool(context.Background(), "mcp_c_echo", []byte(`{"text":"x"}`), nil); err == nil {
		t.Fatal("the call that crashes c succeeded")
	}
	poll(t, ctx, "c's state changes on the open page", `window.notReloaded === true && document.querySelector('`+row("c")+` .state-failed') !== null`)

	// Readable at a desktop's and a phone's width: nothing wider than the
	// window.
	for _, vp := range []struct{ w, h int64 }{{1280, 800}, {390, 844}} {
		for _, p := range []string{"/servers", "/servers/a", "/tools", "/tools/changes", "/tools/mcp_a_add", "/runs", "/workflows/gated", "/agents", "/usage"} {
			do(t, ctx, "open "+p, chromedp.EmulateViewport(vp.w, vp.h), chromedp.Navigate(s.url+p), chromedp.WaitVisible(`main`))
			w, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
			if err != nil {
				t.Fatal(err)
			}
			if int64(w) > vp.w {
				t.Errorf("%s at %dx%d is %d px wide", p, vp.w, vp.h, w)
			}
		}
	}
	// Keyboard: the first Tab reaches the skip link, and focus is visible.
	do(t, ctx, "tab", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(s.url+"/servers"), chromedp.WaitVisible(`main`), chromedp.KeyEvent("\t"))
	poll(t, ctx, "the skip link has a visible focus", `document.activeElement.classList.contains('skip') && getComputedStyle(document.activeElement).outlineStyle !== 'none'`)

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

// shoot writes a screenshot of the window to ../docs/NAME with
// -screenshots.
func shoot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if !*screenshots {
		return
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.activeElement.blur(); window.scrollTo(0, 0)`)); err != nil {
		t.Fatal(err)
	}
	b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "docs", name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote docs/%s (%s bytes)", name, strconv.Itoa(len(b)))
}
