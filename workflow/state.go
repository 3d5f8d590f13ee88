package workflow

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardmcp/switchboard/secret"
)

// An input-required result's requestState names the run and the gate it
// asks for, the caller it was given to (host.MetaKeyCaller), and when it
// stops being accepted, signed with HMAC-SHA256 under a key kept in the
// engine's database: any engine on that database (a later replica)
// verifies it, and nothing is held in memory between a call and its retry.
// A state that does not verify, or comes back from another caller, is
// refused. The key (store.Key) is the engine's "request_state"; its
// "run_ids" keys the run ids of calls with an idempotency key (keyedRunID).

// stateTTL bounds how long a client may take to answer a gate through its
// retry; the run waits longer (the gate's own timeout), answerable by the
// CLI.
const stateTTL = 24 * time.Hour

type gateState struct {
	Run     string `json:"r"`
	Gate    string `json:"g"`
	Expires int64  `json:"e"`
	// Caller is the call's caller (host.MetaKeyCaller): the retry must
	// come from the same one.
	Caller string `json:"c,omitempty"`
}

// stateKey returns the engine's signing key, made at the first use.
func (s *eventStore) stateKey(ctx context.Context) ([]byte, error) {
	return s.st.Key(ctx, "request_state")
}

// stateSigner signs gates' requestStates: with the given key (and its
// fallbacks), else the database's.
func (e *Engine) stateSigner(ctx context.Context) (*secret.Signer, error) {
	if e.opts.StateKey != nil {
		return secret.NewSigner(e.opts.StateKey, e.opts.StateKeyFallbacks...), nil
	}
	key, err := e.events.stateKey(ctx)
	if err != nil {
		return nil, err
	}
	return secret.NewSigner(key), nil
}

func (e *Engine) signState(ctx context.Context, st gateState) (string, error) {
	signer, err := e.stateSigner(ctx)
	if err != nil {
		return "", err
	}
	body, _ := json.Marshal(st)
	p := base64.RawURLEncoding.EncodeToString(body)
	return p + "." + base64.RawURLEncoding.EncodeToString(signer.Sign(p)), nil
}

var errBadState = errors.New("requestState refused")

func (e *Engine) verifyState(ctx context.Context, s string) (gateState, error) {
	signer, err := e.stateSigner(ctx)
	if err != nil {
		return gateState{}, err
	}
	p, sig, ok := strings.Cut(s, ".")
	// Strict: the signature's last character carries 2 unused bits that a
	// lenient decoder ignores, so that 4 spellings of one state would verify.
	got, err := base64.RawURLEncoding.Strict().DecodeString(sig)
	if !ok || err != nil || !signer.Verify(p, got) {
		return gateState{}, fmt.Errorf("%w: its signature does not verify", errBadState)
	}
	body, _ := base64.RawURLEncoding.DecodeString(p)
	var st gateState
	if err := json.Unmarshal(body, &st); err != nil {
		return gateState{}, fmt.Errorf("%w: %v", errBadState, err)
	}
	if time.Now().Unix() > st.Expires {
		return gateState{}, fmt.Errorf("%w: expired; %s", errBadState, answerHint(st.Run, st.Gate))
	}
	return st, nil
}
