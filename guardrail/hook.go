package guardrail

// The hook's JSON contract (docs/security.md, "Guardrails"), version 1.
//
// Switchboard POSTs, with Content-Type application/json and, when a token
// is configured, Authorization: Bearer TOKEN:
//
//	{"version": 1, "direction": "results", "server": "github",
//	 "tool": "get_issue", "endpoint": "",
//	 "parts": [{"path": "content[0].text", "text": "…"}]}
//
// direction is "arguments" or "results"; each part is one text of the call
// (the paths of package guardrail's doc). The hook answers 200 with
//
//	{"parts": [{"index": 0, "action": "mask", "kind": "person",
//	            "text": "Call [PERSON] at …"}]}
//
// listing only the parts it acts on, by index: action is "mask" (text,
// when given, replaces the whole part; otherwise the part becomes
// "[masked:KIND]"), "reject" (the call fails, naming the hook rule, the
// part and kind) or "flag" (recorded only); "allow" or a part left out
// passes. Anything else (another status, a body that is not this JSON, an
// index out of range, an unknown action, no answer within the timeout) is
// a failure: with fail = "open" the call goes on unfiltered by the hook
// and the failure is recorded (action "failed"); with fail = "closed" the
// call fails.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/switchboardmcp/switchboard/netguard"
)

// DefaultHookTimeout bounds a hook's answer when HookOptions sets none: a
// hook adds its time to every call it filters.
const DefaultHookTimeout = 2 * time.Second

// maxHookAnswer bounds a hook's answer: it may replace every part.
const maxHookAnswer = 16 << 20

// HookOptions configures a [Hook]. Nil means defaults.
type HookOptions struct {
	// Timeout bounds each request; 0 means DefaultHookTimeout.
	Timeout time.Duration
	// FailClosed fails the call when the hook fails; otherwise the call
	// goes on and the failure is recorded.
	FailClosed bool
	// Token, resolved, is sent as a bearer token.
	Token string
	// AllowLocalEndpoint admits a hook on loopback or a private address
	// (the URL's own host only), as a server's allow_local_endpoint does.
	AllowLocalEndpoint bool
	// Network is the operator's outbound policy; nil means none.
	Network *netguard.Network
	// Client, when set, replaces the guarded client (tests of the
	// contract only: it bypasses the network policy).
	Client *http.Client
}

// A Hook is a filter that asks an HTTP endpoint (module doc, hook.go).
type Hook struct {
	url    string
	o      HookOptions
	client *http.Client
}

// NewHook returns a hook filter posting to url, which the network policy
// checks now, and dialled through netguard's guarded dialer like every
// outbound client.
func NewHook(url string, opts *HookOptions) (*Hook, error) {
	var o HookOptions
	if opts != nil {
		o = *opts
	}
	o.Timeout = cmp.Or(o.Timeout, DefaultHookTimeout)
	h := &Hook{url: url, o: o, client: o.Client}
	if h.client != nil {
		return h, nil
	}
	if err := o.Network.CheckURL(url, o.AllowLocalEndpoint); err != nil {
		return nil, fmt.Errorf("hook url: %w", err)
	}
	d := &netguard.Dialer{}
	if o.AllowLocalEndpoint {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		local, err := netguard.LocalEndpoint(ctx, nil, url)
		if err != nil {
			return nil, fmt.Errorf("hook url: %w", err)
		}
		d.AllowLocal = local
	}
	rp := &netguard.RedirectPolicy{AllowLocal: o.AllowLocalEndpoint}
	h.client = &http.Client{Transport: o.Network.Transport(context.Background(), d), CheckRedirect: rp.CheckRedirect}
	return h, nil
}

func (*Hook) Name() string { return "hook" }

type hookRequest struct {
	Version   int        `json:"version"`
	Direction string     `json:"direction"`
	Server    string     `json:"server"`
	Tool      string     `json:"tool"`
	Endpoint  string     `json:"endpoint"`
	Parts     []hookPart `json:"parts"`
}

type hookPart struct {
	Path string `json:"path"`
	Text string `json:"text"`
}

type hookAnswer struct {
	Parts []struct {
		Index  *int    `json:"index"`
		Action string  `json:"action"`
		Kind   string  `json:"kind"`
		Text   *string `json:"text"`
	} `json:"parts"`
}

// Scan asks the hook. A failure is a finding of action Failed (fail open)
// or a *RejectedError (fail closed).
func (h *Hook) Scan(ctx context.Context, call Call, dir Direction, parts []Part) ([]Finding, error) {
	if len(parts) == 0 {
		return nil, nil
	}
	fs, err := h.ask(ctx, call, dir, parts)
	if err == nil {
		return fs, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err() // the caller gave up: not the hook's failure
	}
	if h.o.FailClosed {
		return nil, &RejectedError{Err: err}
	}
	return []Finding{{Part: -1, Kind: "hook-failed", Action: Failed}}, nil
}

func (h *Hook) ask(ctx context.Context, call Call, dir Direction, parts []Part) ([]Finding, error) {
	req := hookRequest{Version: 1, Direction: dir.String(), Server: call.Server, Tool: call.Tool, Endpoint: call.Endpoint, Parts: make([]hookPart, len(parts))}
	for i, p := range parts {
		req.Parts[i] = hookPart(p)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, h.o.Timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	if h.o.Token != "" {
		hr.Header.Set("Authorization", "Bearer "+h.o.Token)
	}
	resp, err := h.client.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("no answer within %v", h.o.Timeout)
		}
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) {
			err = ue.Unwrap() // without the URL, which may carry a query the operator holds secret
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %s", resp.Status)
	}
	var a hookAnswer
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxHookAnswer)).Decode(&a); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("no answer within %v", h.o.Timeout)
		}
		return nil, errors.New("its answer is not the contract's JSON")
	}
	var fs []Finding
	for k, p := range a.Parts {
		if p.Index == nil || *p.Index < 0 || *p.Index >= len(parts) {
			return nil, fmt.Errorf("its answer's parts[%d] has no valid index", k)
		}
		i := *p.Index
		kind := cmp.Or(p.Kind, "hook")
		f := Finding{Part: i, Start: 0, End: len(parts[i].Text), Kind: kind}
		switch Action(p.Action) {
		case "allow", "":
			continue
		case Mask:
			f.Action = Mask
			if p.Text != nil {
				f.Replace, f.Replacement = true, *p.Text
			}
		case Reject, Flag:
			f.Action = Action(p.Action)
		default:
			return nil, fmt.Errorf("its answer's parts[%d] has an unknown action %q", k, p.Action)
		}
		fs = append(fs, f)
	}
	return fs, nil
}
