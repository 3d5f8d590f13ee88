package ui_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/switchboardmcp/switchboard/internal/testkit/testbrowser"
)

// TestBrowserEndpoint: in Chromium, the Endpoints page (from the menu)
// creates an endpoint: a name typed, server b checked (its tools appear),
// a search narrowing them, echo checked, the tools it would offer shown
// before saving; saved, its page lists the tool; a real MCP
// client (go-sdk) lists that tool, alone, at /e/NAME/mcp; and the pages fit
// a phone's width.
func TestBrowserEndpoint(t *testing.T) {
	s := serveEndpoints(t)
	ctx := testbrowser.New(t, 1280, 800)
	do(t, ctx, "open Endpoints from the menu", chromedp.Navigate(s.url+"/servers"), chromedp.WaitVisible(`nav a[href="/endpoints"]`),
		chromedp.Click(`nav a[href="/endpoints"]`), chromedp.WaitVisible(`#endpoint-form`))
	poll(t, ctx, "the configured endpoint is listed", `document.querySelector('tr[data-endpoint="conf"]') !== null`)
	do(t, ctx, "name it, check server b",
		chromedp.Focus(`#e-name`), chromedp.KeyEvent("web"),
		chromedp.Click(`#e-servers input[value="b"]`))
	poll(t, ctx, "b's tools appear, all previewed", `document.querySelector('#e-tools input[value="mcp_b_echo"]') !== null && document.querySelectorAll('#endpoint-preview li').length > 5`)
	do(t, ctx, "search for echo", chromedp.Focus(`#e-search`), chromedp.KeyEvent("echo"))
	poll(t, ctx, "the search hides add", `document.querySelector('#e-search').value === 'echo' && document.querySelector('#e-tools input[value="mcp_b_add"]').closest('li').hidden && !document.querySelector('#e-tools input[value="mcp_b_echo"]').closest('li').hidden`)
	do(t, ctx, "check echo", chromedp.Click(`#e-tools input[value="mcp_b_echo"]`))
	poll(t, ctx, "the preview shows echo alone", `[...document.querySelectorAll('#endpoint-preview li')].map(l => l.textContent).join() === 'mcp_b_echo'`)
	if _, err := s.d.GetEndpoint(context.Background(), "web"); err == nil {
		t.Fatal("web was saved before the button was pressed")
	}
	do(t, ctx, "save", chromedp.Click(`#endpoint-submit`))
	visible(t, ctx, "web's page", `#endpoint-tools`)
	poll(t, ctx, "web's page lists echo", `location.pathname === '/endpoints/web' && document.querySelector('[data-tool="mcp_b_echo"]') !== null`)

	if got := listTools(t, s, "/e/web/mcp", ""); strings.Join(got, " ") != "mcp_b_echo" {
		t.Errorf("a client of /e/web/mcp lists %q, want [mcp_b_echo]", got)
	}
	// Readable at a phone's width: nothing wider than the window.
	for _, p := range []string{"/endpoints", "/endpoints/web", "/endpoints/conf"} {
		do(t, ctx, "open "+p, chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.url+p), chromedp.WaitVisible(`main`))
		w, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
		if err != nil {
			t.Fatal(err)
		}
		if w > 390 {
			t.Errorf("%s at 390 px is %d px wide", p, w)
		}
	}
}
