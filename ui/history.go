package ui

// The try-it history (issue 32 §3): the calls a browser made from the
// try-it forms, newest first, each with its arguments, a summary of its
// result, when and how long, and the equivalent `switchboard call` command
// line; one can be run again (POST /tools/{name}/history/{id}) or loaded
// into the form (GET /tools/{name}?from={id}).
//
// A history belongs to one browser: the cookie switchboard_try names it (a
// random id, HttpOnly, SameSite=Strict, set by a tool's page or the first call). Not the
// login's session cookie: that one is derived from the token, the same in
// every browser signed in with it, and there is none on a loopback daemon
// without a token. It is kept in memory, never written anywhere, and gone
// when the daemon stops or the browser logs out. Everything it shows goes
// through render's redactor, and the summary is redacted when it is kept.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Bounds of the history: a browser's calls, browsers, and the size of what
// an entry keeps. They bound the daemon's memory whatever a page posts.
const (
	historyPerSession = 20       // entries per browser, the oldest dropped
	historySessions   = 64       // browsers, the least recently used dropped
	historySummaryMax = 2 << 10  // bytes of a result's text kept for the list
	historyArgsMax    = 64 << 10 // bytes of arguments kept to run again; larger ones are shown cut, not run again
	historyCookie     = "switchboard_try"
)

// histEntry is one call of the history.
type histEntry struct {
	ID       int64
	Tool     string
	Args     json.RawMessage // nil when larger than historyArgsMax
	ArgsText string          // the arguments as shown: secret fields masked, cut to historySummaryMax
	Summary  string          // the result's text or the error, cut to historySummaryMax
	IsError  bool
	At       time.Time
	Took     time.Duration
	Command  string // the equivalent command line
}

// When is the entry's time as the page shows it.
func (e histEntry) When() string { return e.At.UTC().Format("15:04:05") }

// Duration is how long the call took, rounded for the page.
func (e histEntry) Duration() string {
	if e.Took < time.Millisecond {
		return e.Took.Round(time.Microsecond).String()
	}
	return e.Took.Round(time.Millisecond).String()
}

// history holds the try-it histories of browsers. Its zero value is ready.
type history struct {
	mu       sync.Mutex
	sessions map[string]*histSession
	next     int64 // the last entry id given: ids never repeat in a process
}

type histSession struct {
	used    time.Time
	entries []histEntry // newest first
}

// sessionID matches the ids newSessionID makes.
var sessionID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{32}$`) })

// browserOf is the history id of r's browser, "" when it has none yet.
func browserOf(r *http.Request) string {
	c, err := r.Cookie(historyCookie)
	if err != nil || !sessionID().MatchString(c.Value) {
		return ""
	}
	return c.Value
}

// browserFor is the history id of r's browser, making one (and setting
// its cookie on w) when it has none.
func browserFor(w http.ResponseWriter, r *http.Request) string {
	if id := browserOf(r); id != "" {
		return id
	}
	var b [16]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	http.SetCookie(w, historyCookieOf(r, id))
	return id
}

func historyCookieOf(r *http.Request, value string) *http.Cookie {
	return &http.Cookie{
		Name:     historyCookie,
		Value:    value,
		Path:     "/",
		HttpOnly: true,
		Secure:   r.TLS != nil || strings.HasPrefix(r.Header.Get("Origin"), "https://"),
		SameSite: http.SameSiteStrictMode,
	}
}

// add records e as browser's newest call and returns it with its id.
func (h *history) add(browser string, e histEntry) histEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sessions == nil {
		h.sessions = map[string]*histSession{}
	}
	s := h.sessions[browser]
	if s == nil {
		if len(h.sessions) >= historySessions {
			var oldest string
			for id, o := range h.sessions {
				if oldest == "" || o.used.Before(h.sessions[oldest].used) {
					oldest = id
				}
			}
			delete(h.sessions, oldest)
		}
		s = &histSession{}
		h.sessions[browser] = s
	}
	h.next++
	e.ID = h.next
	s.used = time.Now()
	s.entries = slices.Insert(s.entries, 0, e)
	if len(s.entries) > historyPerSession {
		s.entries = s.entries[:historyPerSession]
	}
	return e
}

// of is browser's calls of tool, newest first ("": of every tool).
func (h *history) of(browser, tool string) []histEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessions[browser]
	if s == nil {
		return nil
	}
	var out []histEntry
	for _, e := range s.entries {
		if tool == "" || e.Tool == tool {
			out = append(out, e)
		}
	}
	return out
}

// get is browser's entry id.
func (h *history) get(browser string, id int64) (histEntry, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.sessions[browser]; s != nil {
		for _, e := range s.entries {
			if e.ID == id {
				return e, true
			}
		}
	}
	return histEntry{}, false
}

// forget drops browser's history.
func (h *history) forget(browser string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.sessions, browser)
}

// cut is s cut to at most n bytes, on a rune boundary, marked when cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "… (cut)"
}

// summaryOf is the text a result shows, on one string.
func summaryOf(r *result) string {
	var b strings.Builder
	for _, bl := range r.Blocks {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		switch bl.Kind {
		case "text":
			b.WriteString(bl.Text)
		case "json", "other":
			b.WriteString(compactJSON(bl.JSON))
		default:
			b.WriteString("[" + bl.Kind + " " + bl.MIMEType + bl.URI + "]")
		}
		if b.Len() > historySummaryMax {
			break
		}
	}
	if b.Len() == 0 && r.Structured != "" {
		b.WriteString(compactJSON(r.Structured))
	}
	return cut(b.String(), historySummaryMax)
}

func compactJSON(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}
