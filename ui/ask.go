package ui

// A question a tool asks during a try (elicitation, issue 32 §3): the
// try's call waits while the tool's page shows the question as a form made
// from its requestedSchema (fieldsOf, as the try-it form), and the
// person's Accept (with the form's content), Decline or Cancel goes back
// to the tool. The page learns of the question by polling
// /tools/{name}/ask each second (204 while nothing changed); the answer is
// a POST with the CSRF header, to /tools/{name}/ask/{id}?action=…
//
// One question at a time per browser (a second one asked meanwhile is
// declined); it waits askWait at most, then is cancelled. Only a form
// question is shown: one asking to open a URL is declined.

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askWait bounds how long a try waits for its question's answer: the
// call, and the request that made it, end rather than wait on a page
// nobody looks at.
const askWait = 5 * time.Minute

// pendingAsk is a question waiting for its answer.
type pendingAsk struct {
	ID      int64
	Tool    string
	Server  string
	Message string
	Fields  []field
	General []string
	answer  chan *mcp.ElicitResult // buffered 1: the answer is sent at most once
}

// asks holds each browser's pending question. Its zero value is ready.
type asks struct {
	mu   sync.Mutex
	m    map[string]*pendingAsk // by browser
	next int64
}

// ask shows p to browser as a form and waits for the answer, ctx's end
// or askWait.
func (a *asks) ask(ctx context.Context, browser, tool, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if p == nil || (p.Mode != "" && p.Mode != "form") {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	fields := fieldsOf(p.RequestedSchema)
	fill(fields, defaultsOf(p.RequestedSchema))
	for i := range fields {
		fields[i].ID = "ask-" + strconv.Itoa(i) // not the try form's ids: both are on the page
	}
	q := &pendingAsk{Tool: tool, Server: server, Message: p.Message, Fields: fields, answer: make(chan *mcp.ElicitResult, 1)}
	a.mu.Lock()
	if a.m == nil {
		a.m = map[string]*pendingAsk{}
	}
	if a.m[browser] != nil {
		a.mu.Unlock()
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	a.next++
	q.ID = a.next
	a.m[browser] = q
	a.mu.Unlock()
	defer a.take(browser, q.ID)
	t := time.NewTimer(askWait)
	defer t.Stop()
	select {
	case res := <-q.answer:
		return res, nil
	case <-t.C:
		return &mcp.ElicitResult{Action: "cancel"}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// pending is browser's question, nil when none.
func (a *asks) pending(browser string) *pendingAsk {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.m[browser]
}

// take removes browser's question id and returns it: whoever takes it
// answers it, once.
func (a *asks) take(browser string, id int64) *pendingAsk {
	a.mu.Lock()
	defer a.mu.Unlock()
	q := a.m[browser]
	if q == nil || q.ID != id {
		return nil
	}
	delete(a.m, browser)
	return q
}

// askData is the poller of the tool's page and the question it shows.
type askData struct {
	Tool    string
	Pending *pendingAsk
}

// askPoll answers the page's poll: the form of browser's question of this
// tool when it is not the one shown (?shown=ID), an empty poller when the
// question shown was answered, else 204.
func (u *UI) askPoll(w http.ResponseWriter, r *http.Request) {
	tool := r.PathValue("name")
	shown := r.URL.Query().Get("shown")
	q := u.asks.pending(browserOf(r))
	if q != nil && q.Tool != tool {
		q = nil
	}
	switch {
	case q != nil && strconv.FormatInt(q.ID, 10) == shown, q == nil && shown == "":
		w.WriteHeader(http.StatusNoContent)
		return
	}
	u.render(w, http.StatusOK, "tool", "ask", askData{Tool: tool, Pending: q})
}

// askAnswer answers the question ?id of this browser: action accept (with
// the form's content; a field in error is shown, nothing sent), decline or
// cancel.
func (u *UI) askAnswer(w http.ResponseWriter, r *http.Request) {
	browser, tool := browserOf(r), r.PathValue("name")
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	action := r.URL.Query().Get("action")
	if action != "accept" && action != "decline" && action != "cancel" {
		http.Error(w, "action "+strconv.Quote(action)+": want accept, decline or cancel", http.StatusBadRequest)
		return
	}
	q := u.asks.pending(browser)
	if q == nil || q.ID != id || q.Tool != tool {
		u.render(w, http.StatusConflict, "tool", "ask", askData{Tool: tool})
		return
	}
	res := &mcp.ElicitResult{Action: action}
	if action == "accept" {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		// A copy: the pending question's fields are shared with the poll.
		shown := *q
		shown.Fields = append([]field(nil), q.Fields...)
		for i := range shown.Fields {
			shown.Fields[i].Errors = nil
			shown.Fields[i].Options = append([]option(nil), q.Fields[i].Options...)
		}
		content, ok := argumentsOf(shown.Fields, r.PostForm)
		if !ok {
			u.render(w, http.StatusUnprocessableEntity, "tool", "ask", askData{Tool: tool, Pending: &shown})
			return
		}
		json.Unmarshal(content, &res.Content)
	}
	if q = u.asks.take(browser, id); q != nil {
		q.answer <- res
	}
	u.render(w, http.StatusOK, "tool", "ask", askData{Tool: tool})
}

// defaultsOf is the default of each property of a schema, as an object.
func defaultsOf(schema any) json.RawMessage {
	raw, _ := json.Marshal(schema)
	var s struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	json.Unmarshal(raw, &s)
	out := map[string]json.RawMessage{}
	for n, p := range s.Properties {
		if len(p.Default) > 0 {
			out[n] = p.Default
		}
	}
	b, _ := json.Marshal(out)
	return b
}
