package decode

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A Field is one key of a table whose typed form is T: the key, the formats
// that have it, how its value is read and stored, and how it is checked.
// Build one with a kind's constructor ([String], [Duration], [Value], …).
type Field[T any] struct {
	// Key is the key as written in the file.
	Key string
	// In is the formats that have the key. One key may be declared twice,
	// for different formats, when they write it differently (a server's
	// timeout is "90s" in TOML and 90000 milliseconds in mcpServers JSON).
	In Format
	// Scope is a label the table gives meaning to (a server's fields are
	// for stdio or for network transports); "" for none.
	Scope string

	decode func(d *Decoder, table string, v any, t *T, check bool) bool
	check  func(t *T, report Report)
	copy   func(dst, src *T)
	isSet  func(t *T) bool
	get    func(t *T) any
}

// Report receives a problem a check found, at a field path relative to the
// table: "timeout", "args[1]", "env.API_KEY".
type Report func(field, msg string)

// Only returns f with Scope set.
func (f Field[T]) Only(scope string) Field[T] {
	f.Scope = scope
	return f
}

// IsSet reports whether f holds a value in t other than its zero value (a
// list or map that is empty but set counts as set). A field that stores
// nothing is never set.
func (f Field[T]) IsSet(t *T) bool { return f.isSet != nil && f.isSet(t) }

// Get returns the value f holds in t, typed as stored (string, bool,
// []string, map[string]string, time.Duration, int, or a kind of the
// table's own), for a writer that walks the table. A field that stores
// nothing returns nil.
func (f Field[T]) Get(t *T) any {
	if f.get == nil {
		return nil
	}
	return f.get(t)
}

// A Table is the fields of one kind of table, in the order of the file's
// documentation: that order is also the order of "did you mean" ties and of
// the problems [Table.Check] reports.
type Table[T any] []Field[T]

// Keys returns the keys that format in has, in declaration order.
func (tb Table[T]) Keys(in Format) []string {
	var keys []string
	for _, f := range tb {
		if f.In&in != 0 && !slices.Contains(keys, f.Key) {
			keys = append(keys, f.Key)
		}
	}
	return keys
}

func (tb Table[T]) field(key string, in Format) *Field[T] {
	for i := range tb {
		if tb[i].Key == key && tb[i].In&in != 0 {
			return &tb[i]
		}
	}
	return nil
}

// Decode reads the table m, at field path path, into t: each key by its
// field of d's format, an unknown key reported with the nearest known one.
// A value of the wrong type is reported and leaves t as it was. It returns
// the keys it set, in the file's order. Checks are left to [Table.Check].
func (tb Table[T]) Decode(d *Decoder, path string, m map[string]any, t *T) []string {
	return tb.decode(d, path, m, t, false)
}

// DecodeAndCheck is [Table.Decode] that also checks each value as it is
// read, at its line; a value that fails is reported and not set. It is for
// tables whose every file is checked on its own (those merged key by key,
// and agent files), so that a problem in a file that a later one overrides
// is still reported.
func (tb Table[T]) DecodeAndCheck(d *Decoder, path string, m map[string]any, t *T) []string {
	return tb.decode(d, path, m, t, true)
}

func (tb Table[T]) decode(d *Decoder, path string, m map[string]any, t *T, check bool) []string {
	var set []string
	for _, k := range d.SortedKeys(path, m) {
		f := tb.field(k, d.Format)
		if f == nil {
			d.Errorf(KeyPath(path, k), "%s", d.UnknownKey(k, tb.Keys(d.Format)))
			continue
		}
		if f.decode(d, path, m[k], t, check) {
			set = append(set, k)
		}
	}
	return set
}

// Check runs every field's checks on t, in declaration order, and reports
// each problem relative to the table. A check is given the value whether a
// file set it or not, and takes the zero value for unset: that a field is
// required is for the table's own code to say.
func (tb Table[T]) Check(t *T, report Report) {
	for _, f := range tb {
		if f.check != nil {
			f.check(t, report)
		}
	}
}

// Merge copies the fields named in set (as [Table.Decode] returned them)
// from src to dst: a later file's table overrides an earlier one key by
// key.
func (tb Table[T]) Merge(dst, src *T, set []string) {
	for _, k := range set {
		for _, f := range tb {
			if f.Key == k && f.copy != nil {
				f.copy(dst, src)
				break
			}
		}
	}
}

// field builds a Field storing a V at p (nil: read, checked and dropped),
// read by read and checked by check (nil: none), which reports relative to
// the table.
func field[T, V any](key string, in Format, p func(*T) *V, read func(d *Decoder, field string, v any) (V, bool), check func(v V, report Report)) Field[T] {
	f := Field[T]{Key: key, In: in}
	f.decode = func(d *Decoder, table string, v any, t *T, withCheck bool) bool {
		x, ok := read(d, KeyPath(table, key), v)
		if !ok {
			return false
		}
		if withCheck && check != nil {
			before := len(d.Problems)
			check(x, func(rel, msg string) { d.Errorf(JoinPath(table, rel), "%s", msg) })
			if len(d.Problems) > before {
				return false
			}
		}
		if p != nil {
			*p(t) = x
		}
		return true
	}
	if p != nil {
		f.copy = func(dst, src *T) { *p(dst) = *p(src) }
		// IsZero is nil for slices and maps, so an empty list counts as set.
		f.isSet = func(t *T) bool { return !reflect.ValueOf(p(t)).Elem().IsZero() }
		f.get = func(t *T) any { return *p(t) }
		if check != nil {
			f.check = func(t *T, report Report) { check(*p(t), report) }
		}
	}
	return f
}

// scalar turns checks of one value into a field check: the first message
// is reported at key.
func scalar[V any](key string, checks []func(V) string) func(V, Report) {
	if len(checks) == 0 {
		return nil
	}
	return func(v V, report Report) {
		for _, c := range checks {
			if msg := c(v); msg != "" {
				report(key, msg)
				return
			}
		}
	}
}

// Value declares a field of a kind of the table's own: read types the
// value (reporting on d), checks check it (the first message is reported).
// p nil declares a key that is read and dropped (another client's key that
// means nothing here).
func Value[T, V any](key string, in Format, p func(*T) *V, read func(d *Decoder, field string, v any) (V, bool), checks ...func(V) string) Field[T] {
	return field(key, in, p, read, scalar(key, checks))
}

// Func declares a key decoded by a method of the table's own, for what is
// not one value stored in T (a top-level table holding tables): fn reports
// its problems through what t holds. The key counts as set when fn
// reported none; it is never merged or checked.
func Func[T any](key string, in Format, fn func(t *T, field string, v any)) Field[T] {
	f := Field[T]{Key: key, In: in}
	f.decode = func(d *Decoder, table string, v any, t *T, _ bool) bool {
		before := len(d.Problems)
		fn(t, KeyPath(table, key), v)
		return len(d.Problems) == before
	}
	return f
}

// String declares a string; checks check it (the first message is
// reported).
func String[T any](key string, in Format, p func(*T) *string, checks ...func(string) string) Field[T] {
	return Value(key, in, p, (*Decoder).String, checks...)
}

// Bool declares a boolean.
func Bool[T any](key string, in Format, p func(*T) *bool) Field[T] {
	return Value(key, in, p, (*Decoder).Bool)
}

// StringList declares an array of strings; each element is checked by
// checks, given the list and the element's index (the first message is
// reported at the element).
func StringList[T any](key string, in Format, p func(*T) *[]string, checks ...func(list []string, i int) string) Field[T] {
	return List(key, in, p, (*Decoder).StringList, checks...)
}

// List declares a list of a kind of the table's own, read whole by read;
// each element is checked by checks, given the list and the element's
// index (the first message is reported at the element).
func List[T, E any](key string, in Format, p func(*T) *[]E, read func(d *Decoder, field string, v any) ([]E, bool), checks ...func(list []E, i int) string) Field[T] {
	var check func([]E, Report)
	if len(checks) > 0 {
		check = func(list []E, report Report) {
			for i := range list {
				for _, c := range checks {
					if msg := c(list, i); msg != "" {
						report(IndexPath(key, i), msg)
						break
					}
				}
			}
		}
	}
	return field(key, in, p, read, check)
}

// StringMap declares a table of strings; each entry is checked by checks,
// in key order, and every message they return is reported at the entry.
func StringMap[T any](key string, in Format, p func(*T) *map[string]string, checks ...func(k, v string) []string) Field[T] {
	var check func(map[string]string, Report)
	if len(checks) > 0 {
		check = func(m map[string]string, report Report) {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				for _, c := range checks {
					for _, msg := range c(k, m[k]) {
						report(KeyPath(key, k), msg)
					}
				}
			}
		}
	}
	return field(key, in, p, (*Decoder).StringMap, check)
}

// Duration declares a positive Go duration ("90s") of at most max; 0 in T
// means unset. Every duration has a maximum: a value of years is a
// mistake, and one near the type's limit overflows what is added to it.
func Duration[T any](key string, in Format, p func(*T) *time.Duration, max time.Duration) Field[T] {
	return Value(key, in, p, (*Decoder).Duration, func(t time.Duration) string {
		if t < 0 {
			return fmt.Sprintf("must be positive, not %v", t)
		}
		return ""
	}, AtMost(max))
}

// Interval declares a [Duration] that may be "off" (or zero), stored as
// off.
func Interval[T any](key string, in Format, p func(*T) *time.Duration, off, max time.Duration) Field[T] {
	return Value(key, in, p, func(d *Decoder, field string, v any) (time.Duration, bool) {
		return d.Interval(field, v, off)
	}, AtMost(max))
}

// AtMost is the check of a duration of at most max: "must be at most 24h,
// not 1000000h".
func AtMost(max time.Duration) func(time.Duration) string {
	return func(t time.Duration) string {
		if t > max {
			return fmt.Sprintf("must be at most %s, not %s", FormatDuration(max), FormatDuration(t))
		}
		return ""
	}
}

// FormatDuration writes a duration as people do ("90s", "2m", "1h30m"),
// in a form [Decoder.Duration] reads back. A negative one is an interval
// turned off.
func FormatDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "off"
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0 && d < time.Hour:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	case d%time.Second == 0 && d < 5*time.Minute:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s" // 90s, not 1m30s
	}
	s := d.String()
	// 1h30m0s → 1h30m, 2m30s stays.
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	return s
}

// Count declares a whole number from 0 to 1<<20.
func Count[T any](key string, in Format, p func(*T) *int) Field[T] {
	return Value(key, in, p, (*Decoder).Count, func(n int) string {
		if n < 0 || n > maxCount {
			return fmt.Sprintf("must be between 0 and %d, not %d", maxCount, n)
		}
		return ""
	})
}

// AtLeastOne declares a [Count] of at least 1; 0 in T means unset.
func AtLeastOne[T any](key string, in Format, p func(*T) *int) Field[T] {
	return Value(key, in, p, (*Decoder).AtLeastOne, func(n int) string {
		if n < 0 {
			return fmt.Sprintf("must be at least 1, not %d", n)
		}
		return ""
	})
}

// Bytes declares a whole number of bytes from lo to hi; 0 in T means unset.
func Bytes[T any](key string, in Format, p func(*T) *int, lo, hi int) Field[T] {
	return Value(key, in, p, func(d *Decoder, field string, v any) (int, bool) {
		return d.Bytes(field, v, lo, hi)
	}, func(n int) string {
		if n != 0 && (n < lo || n > hi) {
			return fmt.Sprintf("must be between %d and %d, not %d", lo, hi, n)
		}
		return ""
	})
}

// Range declares a whole number from lo to hi (lo at least 1); 0 in T
// means unset.
func Range[T any](key string, in Format, p func(*T) *int, lo, hi int) Field[T] {
	return Value(key, in, p, func(d *Decoder, field string, v any) (int, bool) {
		return d.Range(field, v, lo, hi)
	}, func(n int) string {
		if n != 0 && (n < lo || n > hi) {
			return fmt.Sprintf("must be between %d and %d, not %d", lo, hi, n)
		}
		return ""
	})
}

// Positive declares a whole number from 1 to 2^31-1.
func Positive[T any](key string, in Format, p func(*T) *int) Field[T] {
	return Value(key, in, p, (*Decoder).Positive)
}

// Undeclared returns the exported fields of T that no field of tb stores,
// but for those named in except: a test of a table says with it that every
// field of its struct can be written in a file.
func Undeclared[T any](tb Table[T], except ...string) []string {
	typ := reflect.TypeFor[T]()
	var out []string
	for i := range typ.NumField() {
		sf := typ.Field(i)
		if !sf.IsExported() || slices.Contains(except, sf.Name) {
			continue
		}
		var t T
		v := reflect.ValueOf(&t).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString("x")
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int, reflect.Int64:
			v.SetInt(1)
		case reflect.Float64:
			v.SetFloat(1)
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		case reflect.Map:
			v.Set(reflect.MakeMap(v.Type()))
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
		default:
			out = append(out, sf.Name+" (of a kind Undeclared cannot set)")
			continue
		}
		if !slices.ContainsFunc(tb, func(f Field[T]) bool { return f.IsSet(&t) }) {
			out = append(out, sf.Name)
		}
	}
	return out
}
