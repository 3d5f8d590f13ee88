package codemode

import (
	"errors"
	"fmt"
	"time"
)

// Budget bounds one [Run]. A zero field takes its default from
// [DefaultBudget]; a negative field, or one above its bound (Max*), is
// refused by [Budget.Validate] and by Run, naming the field.
type Budget struct {
	// CPUTime bounds the time the program itself runs: wall time minus the
	// time it waits for tool calls. It is measured per VM turn on the
	// program's goroutine, not from the OS, so it also counts time the Go
	// scheduler gives to other goroutines while a turn runs.
	CPUTime time.Duration
	// WallTime bounds the whole run, tool calls included. Tool calls get a
	// context that ends with it.
	WallTime time.Duration
	// MemoryBytes bounds how much the Go heap may grow during the run, as
	// sampled by a watchdog (see the package doc: the measure is
	// process-wide and approximate), and how large any one string, array
	// or buffer the guarded built-ins make may be.
	MemoryBytes int64
	// OutputBytes bounds the console output and the JSON of the returned
	// value together.
	OutputBytes int
	// MaxCalls bounds the number of tool calls.
	MaxCalls int
	// MaxStackDepth bounds the JavaScript call stack. It protects the
	// daemon's goroutine stack: goja's own default is unbounded, and Go
	// ends the whole process when a goroutine's stack passes 1 GB.
	MaxStackDepth int
}

// The defaults: enough for a program that chains a few dozen tool calls
// and reshapes their results, small enough that a model's mistake (a loop
// that never ends, a result it prints whole) is cut short cheaply.
const (
	DefaultCPUTime       = 2 * time.Second
	DefaultWallTime      = 60 * time.Second
	DefaultMemoryBytes   = 64 << 20
	DefaultOutputBytes   = 64 << 10
	DefaultMaxCalls      = 50
	DefaultMaxStackDepth = 1000
)

// The bounds an operator may raise a budget to. Each protects the daemon
// that runs the program: the memory bound stays well under what a small
// host has; the stack bound keeps a goroutine's stack far from Go's 1 GB
// limit, past which the process dies.
const (
	MaxCPUTime       = 5 * time.Minute
	MaxWallTime      = 30 * time.Minute
	MaxMemoryBytes   = 1 << 30
	MaxOutputBytes   = 16 << 20
	MaxCalls         = 10000
	MaxMaxStackDepth = 10000
)

// DefaultBudget returns the budget a zero [Budget] stands for.
func DefaultBudget() Budget {
	return Budget{
		CPUTime:       DefaultCPUTime,
		WallTime:      DefaultWallTime,
		MemoryBytes:   DefaultMemoryBytes,
		OutputBytes:   DefaultOutputBytes,
		MaxCalls:      DefaultMaxCalls,
		MaxStackDepth: DefaultMaxStackDepth,
	}
}

// Validate reports every field that is negative or above its bound.
func (b Budget) Validate() error {
	var errs []error
	check := func(name string, v, max int64, show func(int64) string) {
		switch {
		case v < 0:
			errs = append(errs, fmt.Errorf("code mode: budget %s: %s is negative", name, show(v)))
		case v > max:
			errs = append(errs, fmt.Errorf("code mode: budget %s: %s is above the bound of %s", name, show(v), show(max)))
		}
	}
	dur := func(v int64) string { return time.Duration(v).String() }
	num := func(v int64) string { return fmt.Sprint(v) }
	check("cpu_time", int64(b.CPUTime), int64(MaxCPUTime), dur)
	check("wall_time", int64(b.WallTime), int64(MaxWallTime), dur)
	check("memory_bytes", b.MemoryBytes, MaxMemoryBytes, BytesString)
	check("output_bytes", int64(b.OutputBytes), MaxOutputBytes, BytesString)
	check("max_calls", int64(b.MaxCalls), MaxCalls, num)
	check("max_stack_depth", int64(b.MaxStackDepth), MaxMaxStackDepth, num)
	return errors.Join(errs...)
}

// WithDefaults fills the zero fields with DefaultBudget's.
func (b Budget) WithDefaults() Budget {
	d := DefaultBudget()
	if b.CPUTime == 0 {
		b.CPUTime = d.CPUTime
	}
	if b.WallTime == 0 {
		b.WallTime = d.WallTime
	}
	if b.MemoryBytes == 0 {
		b.MemoryBytes = d.MemoryBytes
	}
	if b.OutputBytes == 0 {
		b.OutputBytes = d.OutputBytes
	}
	if b.MaxCalls == 0 {
		b.MaxCalls = d.MaxCalls
	}
	if b.MaxStackDepth == 0 {
		b.MaxStackDepth = d.MaxStackDepth
	}
	return b
}

// ErrBudget is matched (errors.Is) by every [*BudgetError].
var ErrBudget = errors.New("code mode: budget spent")

// BudgetError says which budget a program spent. Its text names the budget
// and its size: "code mode: CPU time budget of 2s spent".
type BudgetError struct {
	Budget string // "CPU time", "wall time", "memory", "output", "tool calls", "stack depth"
	Limit  string // the size of the budget, as its text shows it
	Detail string // what hit it, when known ("String.prototype.repeat of 2 GiB")
}

func (e *BudgetError) Error() string {
	s := "code mode: " + e.Budget + " budget of " + e.Limit + " spent"
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// Is reports whether target is [ErrBudget].
func (e *BudgetError) Is(target error) bool { return target == ErrBudget }

// BytesString shows a number of bytes as a budget's errors do ("64 MiB").
func BytesString(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
