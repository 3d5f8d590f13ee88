package ui

// The tool definitions held for approval (issue 28 §1): /tools/changes
// lists each with why it is held, since when, and what changed as a diff;
// its Approve button trusts the definition shown — the digest the page
// rendered, so that a definition that changed again after the page was
// drawn is refused (daemon.ErrHeldChanged), never approved unseen. The
// page and the button go through daemon.ToolChanges and
// daemon.ApproveTool, as the REST API and the CLI do.
//
// The diff holds the server's text, which is hostile by assumption: it is
// rendered by html/template like everything else, line by line, each line
// marked by its sign (−, +) and by <del> or <ins>, not by colour alone.

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboardmcp/switchboard/daemon"
)

func (u *UI) changeRoutes() {
	// More specific than GET /tools/{name}: a tool's page is
	// /tools/mcp_SERVER_TOOL, never /tools/changes.
	u.mux.HandleFunc("GET /tools/changes", u.changesPage)
	u.mux.HandleFunc("POST /tools/changes/approve", u.approveTool)
}

// changeView is a held definition as the page shows it.
type changeView struct {
	Key                  string // for element ids: server and tool, hex
	Server, Tool, Reason string
	Since                time.Time
	Ago                  string
	Digest, Pinned       string
	New                  bool // no definition was trusted before
	Lines                []diffLine
	Definition           string // the held definition, indented
}

// diffLine is one line of a diff: Op is "-" (removed), "+" (added), " "
// (unchanged) or "…" (unchanged lines left out, Text saying how many).
type diffLine struct {
	Op, Text string
}

// changesList is the list the page shows and the Approve button answers
// with.
type changesList struct {
	Server  string // the page's filter: "" for every server
	Changes []changeView
	Err     string
}

type changesPageData struct {
	chrome
	List  changesList
	Flash flashData
}

// changes returns the held definitions of server ("": every server's)
// that the caller's grant covers.
func (u *UI) changes(ctx context.Context, server string) (changesList, error) {
	l := changesList{Server: server, Changes: []changeView{}}
	all, err := u.d.ToolChanges(ctx, server)
	if err != nil {
		return l, err
	}
	gr := u.d.Grant(ctx)
	for _, c := range all {
		if !gr.Server(c.Server) {
			continue
		}
		v := changeView{Key: hex.EncodeToString([]byte(c.Server + "/" + c.Tool)), Server: c.Server, Tool: c.Tool,
			Reason: c.Reason, Since: c.Since.UTC(), Digest: c.Digest, Pinned: c.Pinned, New: c.Pinned == "",
			Lines: diffLines(c.Diff), Definition: definitionText(c.Definition)}
		if v.New {
			// The whole definition, added: nothing was trusted to
			// compare it with.
			v.Lines = nil
			for _, l := range strings.Split(v.Definition, "\n") {
				v.Lines = append(v.Lines, diffLine{Op: "+", Text: l})
			}
		}
		if !c.Since.IsZero() {
			v.Ago = time.Since(c.Since).Round(time.Second).String()
		}
		l.Changes = append(l.Changes, v)
	}
	return l, nil
}

// heldCount is how many definitions of server ("": every server's) the
// caller may see are held; 0 when the store cannot say.
func (u *UI) heldCount(ctx context.Context, server string) int {
	l, err := u.changes(ctx, server)
	if err != nil {
		u.log.Warn("ui: listing held tool definitions", "server", server, "err", err)
		return 0
	}
	return len(l.Changes)
}

func (u *UI) changesPage(w http.ResponseWriter, r *http.Request) {
	l, err := u.changes(r.Context(), r.URL.Query().Get("server"))
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	u.render(w, http.StatusOK, "changes", "layout", changesPageData{chrome: chrome{"Tool changes", "changes"}, List: l})
}

// approveTool approves the definition the page showed: the form carries
// its server, tool and digest, and the page's filter (to answer the list
// it came from). It answers the list as it is now, with what happened in
// #flash.
func (u *UI) approveTool(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	server, tool, digest := r.PostFormValue("server"), r.PostFormValue("tool"), r.PostFormValue("digest")
	if server == "" || tool == "" || digest == "" {
		u.flash(w, http.StatusBadRequest, "server, tool and digest are required to approve a tool definition", true)
		return
	}
	var err error
	if !u.d.Grant(ctx).Server(server) {
		// Outside the grant: as for a tool nothing is held of, so that
		// the answer does not tell one from the other.
		err = fmt.Errorf("tool %q of server %q: %w", tool, server, daemon.ErrNotHeld)
	} else {
		_, err = u.d.ApproveTool(ctx, server, tool, digest, approver(ctx))
	}
	status, msg, isErr := http.StatusOK, fmt.Sprintf("Approved %s of server %s: its definition is trusted and the tool is offered.", tool, server), false
	switch {
	case errors.Is(err, daemon.ErrHeldChanged):
		status, isErr = daemon.StatusOf(err), true
		msg = fmt.Sprintf("%s of server %s changed again since this page showed it, so nothing was approved: the list shows it as it is now; read the change again before approving it.", tool, server)
	case errors.Is(err, daemon.ErrNotHeld):
		status, isErr = daemon.StatusOf(err), true
		msg = fmt.Sprintf("Nothing is held for approval for %s of server %s (approved already?), so nothing was approved.", tool, server)
	case err != nil:
		u.flash(w, daemon.StatusOf(err), fmt.Sprintf("%s of server %s: %v", tool, server, err), true)
		return
	}
	l, lerr := u.changes(ctx, r.PostFormValue("filter"))
	if lerr != nil {
		l.Err = "The list could not be read again: " + lerr.Error()
	}
	u.render(w, status, "changes", "approved", changesPageData{List: l, Flash: flashData{Msg: msg, Err: isErr, OOB: true}})
}

// approver is who approves, as the pin records it: the web UI, and the
// user its token names when the request came with one.
func approver(ctx context.Context) string {
	if ti := auth.TokenInfoFromContext(ctx); ti != nil && ti.UserID != "" {
		return ti.UserID + " (web UI)"
	}
	return "web UI"
}

// diffContext is how many unchanged lines are shown around a change;
// longer runs of unchanged lines are left out, saying how many.
const diffContext = 3

// diffLines reads a toolpin diff ("- ", "+ ", "  " prefixed lines) for the
// page, with long runs of unchanged lines left out and the JSON escapes
// of <, > and & read back, so that a person reads the text the server
// sent (html/template escapes it again, for the browser).
func diffLines(diff string) []diffLine {
	var all []diffLine
	for _, l := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		if l == "" {
			continue
		}
		op, text := " ", l
		if len(l) >= 2 {
			switch l[:2] {
			case "- ":
				op, text = "-", l[2:]
			case "+ ":
				op, text = "+", l[2:]
			case "  ":
				text = l[2:]
			}
		}
		all = append(all, diffLine{Op: op, Text: text})
	}
	// Keep an unchanged line within diffContext lines of a change.
	keep := make([]bool, len(all))
	for i, l := range all {
		if l.Op == " " {
			continue
		}
		for j := max(0, i-diffContext); j <= min(len(all)-1, i+diffContext); j++ {
			keep[j] = true
		}
	}
	var out []diffLine
	for i := 0; i < len(all); {
		if keep[i] {
			out = append(out, all[i])
			i++
			continue
		}
		j := i
		for j < len(all) && !keep[j] {
			j++
		}
		if j-i == 1 {
			out = append(out, all[i])
		} else {
			out = append(out, diffLine{Op: "…", Text: fmt.Sprintf("%d unchanged lines", j-i)})
		}
		i = j
	}
	return out
}

// definitionText is a held definition, indented, for the page.
func definitionText(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}
