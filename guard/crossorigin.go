package guard

// The one cross-origin check, which the guard makes of every route but a
// public one, before the credential; no face has one of its own. A
// foreign Origin is refused on every method (the MCP spec's check, and DNS
// rebinding). A request that changes state on a route that is not an MCP
// endpoint (MCP clients send no such header) must also pass
// net/http.CrossOriginProtection (not marked Sec-Fetch-Site: cross-site or
// same-site; from an older browser, an Origin that is the Host) and carry
// "Switchboard-CSRF: 1", which a page elsewhere cannot send without a CORS
// preflight, never granted; or, where the route's handler is a FormTaker,
// be a plain form post the browser marks Sec-Fetch-Site: same-origin (the
// login form, which must work before any script has loaded).

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboardmcp/switchboard/clientaddr"
)

// CSRFHeader must be on every request that changes state on a route that
// is not an MCP endpoint, with value "1".
const CSRFHeader = "Switchboard-CSRF"

// A FormTaker is a route's handler that takes, at the paths it says, a
// plain form post without [CSRFHeader], when the browser marks it
// Sec-Fetch-Site: same-origin.
type FormTaker interface {
	TakesForm(r *http.Request) bool
}

// sameOrigin is the standard library's check: its zero value trusts no
// other origin; AllowedOrigins are let through by crossOrigin.
var sameOrigin http.CrossOriginProtection

// crossOrigin refuses a request of another site to route rt (see the
// file's comment); ok when there is nothing to refuse.
func (gd *Guard) crossOrigin(r *http.Request, rt Route) (Refusal, bool) {
	origin := r.Header.Get("Origin")
	if origin != "" && !gd.originAllowed(origin, r) {
		gd.log.Warn("refused a request from a foreign Origin", "origin", origin, "remote", clientaddr.String(r))
		return Refusal{http.StatusForbidden, "Origin", "forbidden: Origin not allowed"}, false
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return Refusal{}, true
	}
	if rt.Access == AccessMCP || rt.h == nil {
		return Refusal{}, true // an MCP client sends no CSRF header; what matches no route changes nothing
	}
	if err := sameOrigin.Check(r); err != nil && !gd.listedOrigin(origin) {
		return Refusal{http.StatusForbidden, "Sec-Fetch-Site", "forbidden: " + err.Error()}, false
	}
	ft, _ := rt.h.(FormTaker)
	if r.Header.Get(CSRFHeader) != "1" && (ft == nil || !ft.TakesForm(r) || r.Header.Get("Sec-Fetch-Site") != "same-origin") {
		return Refusal{http.StatusForbidden, CSRFHeader, "forbidden: a request that changes state must carry the header " + CSRFHeader + ": 1 (the pages' script sends it)"}, false
	}
	return Refusal{}, true
}

// originAllowed reports whether a request's Origin is its own (the same
// host:port as its Host) or an allowed one. "null" (a sandboxed page, a
// form posted under Referrer-Policy: no-referrer) is neither.
func (gd *Guard) originAllowed(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host) || gd.listedOrigin(origin)
}

// listedOrigin reports whether origin is one of AllowedOrigins.
func (gd *Guard) listedOrigin(origin string) bool {
	for _, a := range gd.opts.AllowedOrigins {
		if origin != "" && strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	return false
}
