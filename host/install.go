package host

// Servers started through a package runner (npx, uvx, pipx run, …): the
// first start downloads and installs the server, which can take a minute
// (57 s for server-filesystem on a cold npm cache, on one machine). Until
// the server itself runs, nothing reads the messages the host writes to
// the child's stdin, and that is what tells an install from a dead server:
// the transport sees the bytes still unread in the pipe
// (transport.Command.AwaitingReader).
//
//   - While the runner has not handed over, the server is "installing"
//     (after installShow, so that a warm start does not flash it), with a
//     detail saying which runner installs which package; connect_timeout
//     counts from when the server begins to read, and the install itself
//     gets install_timeout.
//   - Stopped while installing, the runner gets SIGTERM and installStopGrace
//     to finish or undo the install (transport.Command.InstallGrace): npm
//     rolls an interrupted install back on SIGTERM, and killed mid-install
//     it leaves a half-written package in its cache.
//   - A start that fails on such a half-written package in npx's cache
//     (its path in npm's error, before the server read anything) has that
//     cache entry removed, as `npm cache npx rm` would, and is tried again
//     at once, saying so.
//   - An npx killed mid-install (SIGKILL, Switchboard killed, power lost)
//     also leaves its entry's concurrency.lock, a folder npm keeps touching
//     every second while it holds it. The next npx of any package in that
//     entry waits until the lock is a minute old, then takes it over: 70 s
//     measured (npm 11, Node 22), shown as a silent "installing". While an
//     npx server installs, a lock of npx's cache that no npm has touched
//     for npxLockFresh is removed, saying so (the npx waiting on it gets it
//     at its next try, within 5 s); one younger than that is named in the
//     server's detail, for what it waits on.
//
// Alternatives considered: watching the child's process tree (npm forks
// the server through sh only once installed, but pipx installs in children
// and then execs, and an install script is a child too: no one shape); its
// I/O counters (/proc/PID/io: npm waiting for another npx's lock does no
// I/O for up to a minute, and uv reads sockets with recv, which they miss);
// its stderr (npx -y prints nothing while it installs).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/transport"
)

const (
	// installPoll is how often a starting runner's stdin is looked at: no
	// event says that a child began to read.
	installPoll = 250 * time.Millisecond
	// installShow is how long a runner may take before the server is shown
	// installing: a warm npx still asks the registry for the package's
	// latest version, which takes about a second.
	installShow = time.Second
	// installStopGrace is how long a runner stopped while it installs gets
	// to finish or undo the install before SIGKILL. npm finishes the step
	// it is in, then rolls back: 6.5 s measured for server-memory mid-
	// extraction on a fast connection; as the init of a PID namespace
	// early on it ignores SIGTERM and completes the install (17 s). Longer
	// than that is a slow download, and a killed install is repaired at
	// the next start.
	installStopGrace = time.Minute
)

// runner is a package runner that fetches and installs the server it runs.
type runner struct {
	name string // as the detail says it: "npx", "uvx", "pipx run"
	pkg  string // the package, as written; "" when it cannot be told
	npx  bool   // npm's: it installs into npm's npx cache (_npx)
}

// detail is what the server's status says while the runner installs.
func (r runner) detail() string {
	if r.pkg == "" {
		return r.name + " is installing the server"
	}
	return r.name + " is installing " + r.pkg
}

// packageRunner tells whether command with args runs a package runner, and
// which package it fetches.
func packageRunner(command string, args []string) (runner, bool) {
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(command), ".cmd"), ".exe")
	sub := func(words ...string) bool {
		if len(args) < len(words) {
			return false
		}
		for i, w := range words {
			if args[i] != w {
				return false
			}
		}
		args = args[len(words):]
		return true
	}
	var r runner
	switch {
	case base == "npx" || base == "pnpx" || base == "bunx":
		r = runner{name: base, npx: base == "npx"}
	case base == "npm" && (sub("exec") || sub("x")):
		r = runner{name: "npm exec", npx: true}
	case base == "pnpm" && sub("dlx"), base == "yarn" && sub("dlx"):
		r = runner{name: base + " dlx"}
	case base == "bun" && sub("x"):
		r = runner{name: "bun x"}
	case base == "uvx", base == "uv" && (sub("tool", "run") || sub("tx")):
		r = runner{name: "uvx"}
	case base == "pipx" && sub("run"):
		r = runner{name: "pipx run"}
	default:
		return runner{}, false
	}
	r.pkg = runnerPackage(args)
	return r, true
}

// runnerValueFlags are the runners' options that take a value as the next
// argument, which is then not the package.
var runnerValueFlags = map[string]bool{
	"--registry": true, "--cache": true, "--userconfig": true, "--prefix": true, "-c": true, "--call": true,
	"-w": true, "--workspace": true, "--node-options": true, "--shell": true,
	"--python": true, "--with": true, "--with-editable": true, "--with-requirements": true, "--index": true,
	"--index-url": true, "--extra-index-url": true, "--default-index": true, "--find-links": true,
	"--constraints": true, "--overrides": true, "--pip-args": true,
}

// runnerPackageFlags name the package explicitly.
var runnerPackageFlags = map[string]bool{"-p": true, "--package": true, "--from": true, "--spec": true}

// runnerPackage is the package the runner's arguments name: the value of
// --package, --from or --spec, else the first argument that is not an
// option.
func runnerPackage(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		}
		if k, v, ok := strings.Cut(a, "="); ok && runnerPackageFlags[k] {
			return v
		}
		if runnerPackageFlags[a] && i+1 < len(args) {
			return args[i+1]
		}
		if strings.HasPrefix(a, "-") {
			if runnerValueFlags[a] {
				i++
			}
			continue
		}
		return a
	}
	return ""
}

// errConnectTimeout and errInstallTimeout are why a start was cancelled.
var (
	errConnectTimeout = errors.New("connect_timeout")
	errInstallTimeout = errors.New("install_timeout")
)

// startDeadline bounds a start (connect, initialize, list tools): by
// connect_timeout, and for a server started through a package runner, by
// connect_timeout from when the server began to read its input, the install
// before that by install_timeout. It returns the context of the start and a
// func to call when it is over. The context's cause says which bound it hit.
func (s *server) startDeadline(ctx context.Context, rs config.Server) (context.Context, func()) {
	rn, ok := runner{}, false
	if rs.Transport == config.TransportStdio {
		rn, ok = packageRunner(rs.Command, rs.Args)
	}
	if !ok {
		cctx, cancel := context.WithTimeoutCause(ctx, rs.ConnectTimeout, errConnectTimeout)
		return cctx, cancel
	}
	cctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		s.watchInstall(cctx, rs, rn, cancel, done)
	}()
	return cctx, func() {
		close(done)
		<-finished
		cancel(nil)
	}
}

// watchInstall runs the bounds of startDeadline for a runner: it cancels
// the start with errConnectTimeout or errInstallTimeout, and shows the
// server installing while the runner has not handed over.
func (s *server) watchInstall(ctx context.Context, rs config.Server, rn runner, cancel context.CancelCauseFunc, done <-chan struct{}) {
	installTimeout := rs.InstallTimeout
	if installTimeout <= 0 {
		installTimeout = config.DefaultInstallTimeout
	}
	start := time.Now()
	deadline := time.NewTimer(rs.ConnectTimeout)
	defer deadline.Stop()
	// Often enough that connect_timeout, however short, is moved on
	// before it runs out while the runner installs.
	poll := time.NewTicker(min(installPoll, max(rs.ConnectTimeout/4, time.Millisecond)))
	defer poll.Stop()
	installing, warned := false, false
	var locks *npxLocks
	if rn.npx {
		locks = &npxLocks{dir: npxCacheDir(rs)}
	}
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			if installing {
				s.log.Warn("stopping the server while "+rn.name+" installs it: it gets up to "+installStopGrace.String()+
					" to finish or undo the install (killed mid-install, npm leaves a broken package in its cache)",
					"detail", rn.detail())
			}
			return
		case <-deadline.C:
			cancel(errConnectTimeout)
		case <-poll.C:
		}
		awaiting := s.startingAwaitsReader()
		since := time.Since(start)
		switch {
		case awaiting && since >= installTimeout:
			cancel(errInstallTimeout)
		case awaiting:
			// connect_timeout counts from when the server reads.
			deadline.Reset(rs.ConnectTimeout)
			detail := rn.detail()
			if locks != nil {
				if waiting := locks.sweep(s.log); waiting != "" {
					detail += " (it waits for npm's install lock " + waiting + ", untouched since an npx stopped mid-install: removed once untouched for " + npxLockFresh.String() + ")"
				}
			}
			if !installing && since >= installShow {
				installing = true
				s.setInstalling(detail)
				s.log.Info("server is being installed", "detail", detail, "install_timeout", installTimeout)
			} else if installing {
				s.setInstallingDetail(detail)
			}
			if !warned && since >= rs.ConnectTimeout {
				warned = true
				s.log.Warn("server still installing; waiting for it", "detail", rn.detail(),
					"after", since.Round(time.Second), "install_timeout", installTimeout)
			}
		case installing:
			installing = false
			s.log.Info("server installed; starting it", "after", since.Round(time.Millisecond))
			s.setStateIf(func() bool { return s.state == StateInstalling }, StateConnecting, nil)
		}
	}
}

// npxLocks finds the install locks (concurrency.lock folders) of npx's
// cache dir that no npm holds: npm touches the lock it holds every second,
// and another npx takes one over only once it is a minute old.
type npxLocks struct {
	dir     string // npm's npx cache: <npm cache>/_npx
	removed map[string]bool
}

// npxLockIdle is how long a lock may go untouched before it is named, in
// the detail of a server whose npx waits on it, as left by an npx stopped
// mid-install (npm touches the lock it holds every second).
const npxLockIdle = 3 * time.Second

// sweep removes each lock no npm has touched for npxLockFresh, logging it,
// and returns the path of one untouched for npxLockIdle but not yet that
// long ("" when there is none).
func (l *npxLocks) sweep(log *slog.Logger) (waiting string) {
	if l.dir == "" {
		return ""
	}
	found, _ := filepath.Glob(filepath.Join(l.dir, "*", "concurrency.lock"))
	for _, lock := range found {
		fi, err := os.Lstat(lock)
		if err != nil || !fi.IsDir() {
			continue
		}
		idle := time.Since(fi.ModTime())
		switch {
		case idle >= npxLockFresh:
			// As npm does with a lock a minute old: os.Remove, as its
			// rmdir, removes the empty folder a lock is and nothing else.
			if err := os.Remove(lock); err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					log.Warn("npm's install lock was left by an npx stopped mid-install, and could not be removed: npx waits until it is a minute old", "lock", lock, "err", err)
				}
				continue
			}
			if l.removed == nil {
				l.removed = map[string]bool{}
			}
			l.removed[lock] = true
			log.Warn("removed npm's install lock left by an npx stopped mid-install (untouched for "+idle.Round(time.Second).String()+"): npx would have waited until it was a minute old", "lock", lock)
		case idle >= npxLockIdle && !l.removed[lock]:
			waiting = lock
		}
	}
	return waiting
}

// npxCacheDir is the npx cache the npx of rs installs into: <cache>/_npx,
// where cache is --cache, else npm_config_cache in its env, else ~/.npm
// (its HOME's; npm's own default). A cache set in an .npmrc is not seen;
// "" when HOME is not known either.
func npxCacheDir(rs config.Server) string {
	for i, a := range rs.Args {
		if v, ok := strings.CutPrefix(a, "--cache="); ok {
			return filepath.Join(v, "_npx")
		}
		if a == "--cache" && i+1 < len(rs.Args) {
			return filepath.Join(rs.Args[i+1], "_npx")
		}
	}
	// The child's environment is the server's env over the host's
	// minimal one (transport.MinimalEnv), which has HOME but no npm_config_*.
	for k, v := range rs.Env {
		if strings.EqualFold(k, "npm_config_cache") && v != "" { // npm reads npm_config_* case-insensitively
			return filepath.Join(v, "_npx")
		}
	}
	home, ok := rs.Env["HOME"]
	if !ok {
		home = os.Getenv("HOME")
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".npm", "_npx")
}

// startingAwaitsReader reports whether the stdio child being started has
// read nothing of what the host wrote to it.
func (s *server) startingAwaitsReader() bool {
	s.mu.Lock()
	cmd := s.starting
	s.mu.Unlock()
	if cmd == nil {
		return false
	}
	awaiting, known := cmd.AwaitingReader()
	return awaiting && known
}

// setInstallingDetail changes the detail of a server installing.
func (s *server) setInstallingDetail(detail string) {
	s.mu.Lock()
	if s.state != StateInstalling || s.detail == detail {
		s.mu.Unlock()
		return
	}
	s.detail = detail
	snap := s.statusLocked()
	s.mu.Unlock()
	s.announce(snap)
}

// setInstalling shows the server installing, with detail.
func (s *server) setInstalling(detail string) {
	s.mu.Lock()
	if s.state != StateConnecting {
		s.mu.Unlock()
		return
	}
	s.detail = detail
	s.setStateLocked(StateInstalling, nil)
	snap := s.statusLocked()
	s.mu.Unlock()
	s.announce(snap)
}

// startTimeoutErr is the error of a start its deadline ended; err, the
// SDK's, is kept when it says more than that the context ended.
func startTimeoutErr(cause error, rs config.Server, rn runner, what string, err error) error {
	var msg string
	if errors.Is(cause, errInstallTimeout) {
		t := rs.InstallTimeout
		if t <= 0 {
			t = config.DefaultInstallTimeout
		}
		msg = fmt.Sprintf("%s: still installing after %s (install_timeout)", rn.detail(), t)
	} else {
		msg = fmt.Sprintf("%sno answer within %s (connect_timeout)", what, rs.ConnectTimeout)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return startTimeout(msg)
	}
	return fmt.Errorf("%s: %w", msg, err)
}

// startTimeout is a start that ran out of time, saying nothing more.
type startTimeout string

func (e startTimeout) Error() string { return string(e) }
func (e startTimeout) Unwrap() error { return ErrTimeout }

// npxEntry matches a path inside npx's cache in npm's or node's error
// output: the cache entry is the folder _npx/<16 hex digits>.
var npxEntry = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(/[^\s'"` + "`" + `]*/_npx/[0-9a-f]{16})(?:[/'"` + "`" + `\s]|$)`)
})

// npxDamage are the errors npm and node print when an npx cache entry is
// half-written: a package.json or lockfile missing (npm 11), a folder that
// cannot be renamed out of the way (npm 7–10), a module that is not all
// there.
var npxDamage = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(ENOENT|ENOTEMPTY|EEXIST|EJSONPARSE|ERR_MODULE_NOT_FOUND|MODULE_NOT_FOUND)\b|Cannot find (module|package)`)
})

// npxLockFresh is how recently npm must have touched an entry's
// concurrency.lock for another npx to be installing there now (npm
// touches it every second and takes it over after a minute).
const npxLockFresh = 10 * time.Second

// brokenNPXEntry returns the npx cache entry that a failed start of an
// npx server names as damaged, if the failure looks like one: the runner
// is npm's, the child read nothing of its input (npm failed before running
// the server, or node before the server read), and its stderr names an
// entry of the npx cache with an error of a half-written package.
func (s *server) brokenNPXEntry(rn runner, cmd *transport.Command, stderr string) (string, bool) {
	if !rn.npx || cmd == nil {
		return "", false
	}
	if awaiting, known := cmd.AwaitingReader(); !awaiting || !known {
		return "", false
	}
	return damagedNPXEntry(stderr)
}

// damagedNPXEntry returns the npx cache entry that stderr (npm's or
// node's error output) names with an error of a half-written package, if
// it exists and no npx is installing there now.
func damagedNPXEntry(stderr string) (string, bool) {
	if !npxDamage().MatchString(stderr) {
		return "", false
	}
	m := npxEntry().FindStringSubmatch(stderr)
	if m == nil {
		return "", false
	}
	dir := filepath.Clean(m[1])
	if filepath.Base(filepath.Dir(dir)) != "_npx" {
		return "", false
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return "", false
	}
	if li, err := os.Stat(filepath.Join(dir, "concurrency.lock")); err == nil && time.Since(li.ModTime()) < npxLockFresh {
		return "", false // another npx is installing there now
	}
	return dir, true
}

// missingProgramHint says what to install for a program that is not found.
func missingProgramHint(program string) string {
	switch strings.TrimSuffix(strings.TrimSuffix(filepath.Base(program), ".exe"), ".cmd") {
	case "npx", "npm", "node", "corepack":
		return "install Node.js (https://nodejs.org), which provides node, npm and npx"
	case "pnpm", "pnpx":
		return "install pnpm (https://pnpm.io/installation)"
	case "yarn":
		return "install Yarn (https://yarnpkg.com/getting-started/install)"
	case "bun", "bunx":
		return "install Bun (https://bun.sh)"
	case "uv", "uvx":
		return "install uv (https://docs.astral.sh/uv/getting-started/installation/)"
	case "pipx":
		return "install pipx (https://pipx.pypa.io)"
	case "python", "python3":
		return "install Python 3 (https://www.python.org/downloads/)"
	case "docker":
		return "install Docker (https://docs.docker.com/get-docker/)"
	case "deno":
		return "install Deno (https://deno.com)"
	}
	if strings.Contains(program, "/") {
		return "check the path in command"
	}
	return "install it, or write its full path in command"
}

// shebangMissing matches what env(1) says when a script's interpreter is
// not installed: "/usr/bin/env: 'node': No such file or directory".
var shebangMissing = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("env: ['\u2018\"]?([^'\u2019\"\\s:]+)['\u2019\"]?: No such file or directory")
})
