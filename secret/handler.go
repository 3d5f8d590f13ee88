package secret

import (
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
)

// Handler wraps h so that messages and string attributes are redacted.
//
// Redacted are: the message; every attribute key and group name; string
// values; values of LogValuer (resolved first) and groups, recursively; and
// any other value whose error text, String, MarshalText, %+v or JSON
// rendering contains a secret. Such a value is replaced by its redacted text
// (Error() for an error, %+v otherwise), so what reaches h is a string. A
// value none of whose renderings contains a secret is passed on unchanged.
//
// Attributes bound with WithAttrs are redacted when they are bound: a value
// registered later is not removed from them.
func (r *Redactor) Handler(h slog.Handler) slog.Handler {
	return &handler{redact: r.Redact, active: func() bool { return len(r.set.Load().values) > 0 }, h: h}
}

// HandlerFunc is [Redactor.Handler] with redact in place of a Redactor's
// Redact: for redactions of more than registered values (a host also keeps
// session ids out of its logs).
func HandlerFunc(redact func(string) string, h slog.Handler) slog.Handler {
	return &handler{redact: redact, active: func() bool { return true }, h: h}
}

type handler struct {
	redact func(string) string
	active func() bool // false: nothing to redact, a shortcut for non-string values
	h      slog.Handler
}

func (h *handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.h.Enabled(ctx, level)
}

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.attr(a)
	}
	return &handler{redact: h.redact, active: h.active, h: h.h.WithAttrs(red)}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{redact: h.redact, active: h.active, h: h.h.WithGroup(h.redact(name))}
}

func (h *handler) attr(a slog.Attr) slog.Attr {
	return slog.Attr{Key: h.redact(a.Key), Value: h.value(a.Value)}
}

func (h *handler) value(v slog.Value) slog.Value {
	v = v.Resolve() // LogValuer; Resolve turns a panic into an error value
	switch v.Kind() {
	case slog.KindString:
		s := v.String()
		if red := h.redact(s); red != s {
			return slog.StringValue(red)
		}
		return v
	case slog.KindGroup:
		attrs := v.Group()
		red := make([]slog.Attr, len(attrs))
		for i, a := range attrs {
			red[i] = h.attr(a)
		}
		return slog.GroupValue(red...)
	case slog.KindAny:
		return h.any(v)
	}
	return v // numbers, bools, times and durations carry no secrets
}

// any redacts an arbitrary value by every rendering a handler is likely to
// use: TextHandler uses MarshalText or %+v, JSONHandler uses Error,
// MarshalJSON or json.Marshal, and other handlers use String or %v.
func (h *handler) any(v slog.Value) slog.Value {
	if !h.active() {
		return v
	}
	x := v.Any()
	var texts []string
	primary := ""
	switch x := x.(type) {
	case error:
		primary = x.Error()
		texts = append(texts, primary)
	default:
		// Any byte slice type (json.RawMessage too): TextHandler prints its bytes.
		if rv := reflect.ValueOf(x); rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8 {
			primary = string(rv.Bytes())
			texts = append(texts, primary)
		}
	}
	if s, ok := x.(fmt.Stringer); ok {
		texts = append(texts, safeString(s.String))
	}
	if m, ok := x.(encoding.TextMarshaler); ok {
		if b, err := m.MarshalText(); err == nil {
			texts = append(texts, string(b))
		}
	}
	plus := fmt.Sprintf("%+v", x)
	if primary == "" {
		primary = plus
	}
	texts = append(texts, plus, fmt.Sprintf("%#v", x))
	if b, err := json.Marshal(x); err == nil {
		texts = append(texts, string(b))
	}
	for _, t := range texts {
		if h.redact(t) != t {
			return slog.StringValue(h.redact(primary))
		}
	}
	return v
}

// safeString calls a String method that may panic (on a nil receiver, say),
// the way fmt would survive it.
func safeString(f func() string) (s string) {
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	return f()
}
