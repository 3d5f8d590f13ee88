package store_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
	"github.com/switchboardmcp/switchboard/internal/testkit/testpg"
	"github.com/switchboardmcp/switchboard/store"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)

func open(t *testing.T, path string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestOpenDefaultPath(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	s := open(t, "")
	want := filepath.Join(state, "switchboard", "switchboard.db")
	if s.Where() != want {
		t.Errorf("Where() = %q, want %q", s.Where(), want)
	}
	for path, mode := range map[string]os.FileMode{want: 0o600, filepath.Dir(want): 0o700 | os.ModeDir} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != mode {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode(), mode)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Servers(context.Background()); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Servers after Close: %v, want ErrClosed", err)
	}
}

// TestBackends runs the store's tests on each backend: a SQLite file, and
// a database of its own on one throwaway PostgreSQL server.
func TestBackends(t *testing.T) {
	tests := []struct {
		name string
		test func(t *testing.T, newDB func(t *testing.T) string)
	}{
		{"migrations", testMigrations},
		{"concurrent_migrations", testConcurrentMigrations},
		{"servers", testServers},
		{"endpoints", testEndpoints},
		{"tool_cache", testToolCache},
		{"embeddings", testEmbeddings},
		{"pins", testPins},
		{"two_processes", testTwoProcesses},
		{"watch", testWatch},
		{"usage", testUsage},
		{"usage_retention", testUsageRetention},
		{"usage_by_endpoint", testUsageByEndpoint},
		{"usage_series", testUsageSeries},
		{"keys_and_replicas", testKeysAndReplicas},
		{"workflow_tables", testWorkflowTables},
		{"secrets", testSecrets},
		{"locks", testLocks},
		{"tasks", testTasks},
		{"task_list", testTaskList},
		{"task_history", testTaskHistory},
	}
	t.Run("sqlite", func(t *testing.T) {
		for _, c := range tests {
			t.Run(c.name, func(t *testing.T) {
				c.test(t, func(t *testing.T) string { return filepath.Join(t.TempDir(), "state.db") })
			})
		}
	})
	t.Run("postgres", func(t *testing.T) {
		server := testpg.Start(t)
		n := 0
		for _, c := range tests {
			t.Run(c.name, func(t *testing.T) {
				c.test(t, func(t *testing.T) string {
					n++
					return testpg.CreateDatabase(t, server, fmt.Sprintf("%s_%d", c.name, n))
				})
			})
		}
	})
}

func postgres(database string) bool { return strings.HasPrefix(database, "postgres://") }

func testMigrations(t *testing.T, newDB func(*testing.T) string) {
	path := newDB(t)
	s := open(t, path)
	if got := schemaVersion(t, path); got != store.SchemaVersion() {
		t.Errorf("schema version %d after Open, want %d", got, store.SchemaVersion())
	}
	s.Close()
	// Reopening applies nothing again (the tables exist: a second CREATE
	// would fail).
	open(t, path).Close()

	// A database from a newer Switchboard is refused, naming both versions.
	newer := store.SchemaVersion() + 7
	raw := rawDB(t, path)
	if _, err := raw.Exec(`INSERT INTO schema_migrations (version, applied_at) VALUES ($1, 0)`, newer); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	_, err := store.Open(context.Background(), path, nil)
	if !errors.Is(err, store.ErrNewerSchema) || !strings.Contains(err.Error(), strconv.Itoa(newer)) || !strings.Contains(err.Error(), store.Describe(path)) {
		t.Errorf("Open of a newer database: %v, want ErrNewerSchema naming version %d and the database", err, newer)
	}
}

// testConcurrentMigrations: replicas that start at once on a new database
// all open it (their migrations take turns), and the schema is made once.
func testConcurrentMigrations(t *testing.T, newDB func(*testing.T) string) {
	path := newDB(t)
	const n = 6
	errs := make(chan error, n)
	var start sync.WaitGroup
	start.Add(1)
	for range n {
		go func() {
			start.Wait()
			s, err := store.Open(context.Background(), path, nil)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	start.Done()
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("Open at once: %v", err)
		}
	}
	if got := schemaVersion(t, path); got != store.SchemaVersion() {
		t.Errorf("schema version %d, want %d", got, store.SchemaVersion())
	}
}

func testServers(t *testing.T, newDB func(*testing.T) string) {
	ctx := context.Background()
	s := open(t, newDB(t))
	cfg := json.RawMessage(`{"command":"npx","env":{"T":"{{secrets.t}}"}}`)
	a, err := s.AddServer(ctx, store.ServerRecord{ID: "a", Config: cfg, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if a.Version != 1 || !a.Enabled || string(a.Config) != string(cfg) || a.Created.IsZero() || !a.Created.Equal(a.Updated) {
		t.Errorf("AddServer = %+v", a)
	}
	if _, err := s.AddServer(ctx, store.ServerRecord{ID: "a", Config: cfg}); !errors.Is(err, store.ErrExists) {
		t.Errorf("adding a twice: %v, want ErrExists", err)
	}
	if _, err := s.AddServer(ctx, store.ServerRecord{ID: "b", Config: json.RawMessage(`{"url":"https://x"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddServer(ctx, store.ServerRecord{ID: "c", Config: json.RawMessage(`{`)}); err == nil {
		t.Errorf("invalid JSON config accepted")
	}

	up, err := s.UpdateServer(ctx, store.ServerRecord{ID: "a", Config: json.RawMessage(`{"command":"uvx"}`), Enabled: false}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if up.Version != 2 || up.Enabled || string(up.Config) != `{"command":"uvx"}` || !up.Created.Equal(a.Created) {
		t.Errorf("UpdateServer = %+v", up)
	}
	if _, err := s.UpdateServer(ctx, store.ServerRecord{ID: "a", Config: cfg}, 1); !errors.Is(err, store.ErrConflict) {
		t.Errorf("update at a stale version: %v, want ErrConflict", err)
	}
	if _, err := s.UpdateServer(ctx, store.ServerRecord{ID: "zz", Config: cfg}, 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("update of a missing server: %v, want ErrNotFound", err)
	}
	if _, err := s.UpdateServer(ctx, store.ServerRecord{ID: "a", Config: cfg, Enabled: true}, 0); err != nil {
		t.Errorf("unconditional update: %v", err)
	}

	list, err := s.Servers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "a" || list[1].ID != "b" || list[0].Version != 3 {
		t.Errorf("Servers = %+v", list)
	}

	if err := s.SaveTools(ctx, "a", "spec1", json.RawMessage(`[]`), 0); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteServer(ctx, "a", 2); !errors.Is(err, store.ErrConflict) {
		t.Errorf("delete at a stale version: %v, want ErrConflict", err)
	}
	if err := s.DeleteServer(ctx, "a", 3); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Server(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Server after delete: %v, want ErrNotFound", err)
	}
	if _, _, _, err := s.LoadTools(ctx, "a", "spec1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a deleted server's tools are still cached: %v", err)
	}
	if err := s.DeleteServer(ctx, "a", 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second delete: %v, want ErrNotFound", err)
	}
}

// testEndpoints: a database at schema version 5 opens with the endpoints
// table; endpoints are added, updated and deleted at versions, as servers
// are; on PostgreSQL another store hears each change.
func testEndpoints(t *testing.T, newDB func(*testing.T) string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := newDB(t)
	open(t, db).Close()
	raw := rawDB(t, db)
	for _, q := range []string{`DROP TABLE endpoints`, `DELETE FROM schema_migrations WHERE version > 5`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	s, other := open(t, db), open(t, db)
	if got := schemaVersion(t, db); got != store.SchemaVersion() {
		t.Errorf("from version 5: schema version %d, want %d", got, store.SchemaVersion())
	}
	ch, err := other.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	heard := func(what string) {
		t.Helper()
		if !postgres(db) {
			return
		}
		select {
		case c := <-ch:
			if c.Kind != store.ChangeEndpoint || c.Endpoint != "code" {
				t.Errorf("after %s, the other store heard %+v, want the endpoint code", what, c)
			}
		case <-time.After(10 * time.Second): // a bound on a failure, not a synchronisation
			t.Fatalf("after %s, the other store heard nothing", what)
		}
	}
	cfg := json.RawMessage(`{"servers":["a"],"auth_token":"{{secrets.code}}"}`)
	a, err := s.AddEndpoint(ctx, store.EndpointRecord{Name: "code", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if a.Version != 1 || string(a.Config) != string(cfg) || a.Created.IsZero() || !a.Created.Equal(a.Updated) {
		t.Errorf("AddEndpoint = %+v", a)
	}
	heard("adding")
	if _, err := s.AddEndpoint(ctx, store.EndpointRecord{Name: "code", Config: cfg}); !errors.Is(err, store.ErrExists) {
		t.Errorf("adding code twice: %v, want ErrExists", err)
	}
	if _, err := s.AddEndpoint(ctx, store.EndpointRecord{Name: "bad", Config: json.RawMessage(`{`)}); err == nil {
		t.Errorf("invalid JSON config accepted")
	}
	up, err := s.UpdateEndpoint(ctx, store.EndpointRecord{Name: "code", Config: json.RawMessage(`{}`)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if up.Version != 2 || string(up.Config) != `{}` || !up.Created.Equal(a.Created) {
		t.Errorf("UpdateEndpoint = %+v", up)
	}
	heard("updating")
	if _, err := s.UpdateEndpoint(ctx, store.EndpointRecord{Name: "code", Config: cfg}, 1); !errors.Is(err, store.ErrConflict) {
		t.Errorf("update at a stale version: %v, want ErrConflict", err)
	}
	if _, err := s.UpdateEndpoint(ctx, store.EndpointRecord{Name: "zz", Config: cfg}, 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("update of a missing endpoint: %v, want ErrNotFound", err)
	}
	if list, err := other.Endpoints(ctx); err != nil || len(list) != 1 || list[0].Name != "code" || list[0].Version != 2 {
		t.Errorf("Endpoints = %+v, %v", list, err)
	}
	if err := s.DeleteEndpoint(ctx, "code", 1); !errors.Is(err, store.ErrConflict) {
		t.Errorf("delete at a stale version: %v, want ErrConflict", err)
	}
	if err := s.DeleteEndpoint(ctx, "code", 2); err != nil {
		t.Fatal(err)
	}
	heard("deleting")
	if _, err := s.Endpoint(ctx, "code"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Endpoint after delete: %v, want ErrNotFound", err)
	}
}

func testEmbeddings(t *testing.T, newDB func(*testing.T) string) {
	ctx := context.Background()
	s := open(t, newDB(t))
	if got, err := s.Vectors(ctx, "m", []string{"a"}); err != nil || len(got) != 0 {
		t.Fatalf("Vectors of nothing = %v, %v", got, err)
	}
	a, b := []float32{0.5, -1.25, 3}, []float32{1, 2}
	if err := s.SaveVectors(ctx, "m", map[string][]float32{"a": a, "b": b}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveVectors(ctx, "other", map[string][]float32{"a": {9}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Vectors(ctx, "m", []string{"a", "c"})
	if err != nil || len(got) != 1 || !slices.Equal(got["a"], a) {
		t.Errorf("Vectors(m, a c) = %v, %v; want a's alone", got, err)
	}
	// Saving again replaces.
	if err := s.SaveVectors(ctx, "m", map[string][]float32{"a": b}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Vectors(ctx, "m", []string{"a"}); !slices.Equal(got["a"], b) {
		t.Errorf("after a second save, Vectors = %v, want %v", got["a"], b)
	}
	if err := s.SaveVectors(ctx, "m", map[string][]float32{"e": nil}); err == nil || !strings.Contains(err.Error(), "dimensions") {
		t.Errorf("SaveVectors of an empty vector: %v, want an error naming its dimensions", err)
	}
}

func testToolCache(t *testing.T, newDB func(*testing.T) string) {
	ctx := context.Background()
	s := open(t, newDB(t))
	if _, _, _, err := s.LoadTools(ctx, "x", "s1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("LoadTools of nothing: %v, want ErrNotFound", err)
	}
	before := time.Now().Add(-time.Second)
	tools := json.RawMessage(`[{"name":"echo","inputSchema":{"type":"object"}}]`)
	if err := s.SaveTools(ctx, "x", "s1", tools, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	got, saved, ttl, err := s.LoadTools(ctx, "x", "s1")
	if err != nil || string(got) != string(tools) || ttl != 90*time.Second || saved.Before(before) {
		t.Errorf("LoadTools = %s, %v, %v, %v", got, saved, ttl, err)
	}
	// Saving again replaces; saving under a new spec drops the old spec.
	if err := s.SaveTools(ctx, "x", "s1", json.RawMessage(`[]`), 0); err != nil {
		t.Fatal(err)
	}
	if got, _, ttl, _ := s.LoadTools(ctx, "x", "s1"); string(got) != `[]` || ttl != 0 {
		t.Errorf("after a second save: %s, %v", got, ttl)
	}
	if err := s.SaveTools(ctx, "x", "s2", tools, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.LoadTools(ctx, "x", "s1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the list of the old spec survived a new spec: %v", err)
	}
	if err := s.SaveTools(ctx, "x", "s3", json.RawMessage(`not json`), 0); err == nil {
		t.Errorf("SaveTools accepted non-JSON")
	}
}

// testTwoProcesses: a serve and a CLI command (or two replicas) use one
// database at once. Another process (this test binary, re-run) and this one
// each add servers and save tool lists concurrently; every write lands,
// none fails on a lock.
func testTwoProcesses(t *testing.T, newDB func(*testing.T) string) {
	path := newDB(t)
	open(t, path).Close() // migrated before the race: concurrent_migrations tests that
	const n = 40
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriterProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "STORE_TEST_WRITER="+path, "STORE_TEST_N="+strconv.Itoa(n))
	out := make(chan error, 1)
	var outBuf safeBuffer
	cmd.Stdout, cmd.Stderr = &outBuf, &outBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { out <- cmd.Wait() }()
	if err := writeMany(path, "here", n); err != nil {
		t.Errorf("this process: %v", err)
	}
	if err := <-out; err != nil {
		t.Fatalf("the other process: %v\n%s", err, outBuf.String())
	}
	s := open(t, path)
	list, err := s.Servers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2*n {
		t.Errorf("%d servers stored, want %d", len(list), 2*n)
	}
}

// TestWriterProcess is the other process of testTwoProcesses.
func TestWriterProcess(t *testing.T) {
	path := os.Getenv("STORE_TEST_WRITER")
	if path == "" {
		t.Skip("run by TestBackends/*/two_processes")
	}
	n, _ := strconv.Atoi(os.Getenv("STORE_TEST_N"))
	if err := writeMany(path, "there", n); err != nil {
		t.Fatal(err)
	}
}

func writeMany(path, who string, n int) error {
	ctx := context.Background()
	s, err := store.Open(ctx, path, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	for i := range n {
		id := fmt.Sprintf("%s-%d", who, i)
		if _, err := s.AddServer(ctx, store.ServerRecord{ID: id, Config: json.RawMessage(`{}`), Enabled: true}); err != nil {
			return err
		}
		if err := s.SaveTools(ctx, id, "spec", json.RawMessage(`[]`), 0); err != nil {
			return err
		}
		if _, err := s.Servers(ctx); err != nil {
			return err
		}
	}
	return nil
}

type safeBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b = append(b.b, p...)
	return len(p), nil
}

func (b *safeBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.b)
}

// rawDB opens the database directly, around the store.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	driver := "sqlite"
	if postgres(path) {
		driver = "pgx"
	}
	db, err := sql.Open(driver, path)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func schemaVersion(t *testing.T, path string) int {
	t.Helper()
	db := rawDB(t, path)
	defer db.Close()
	var v int
	if err := db.QueryRow(`SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// testWatch: the changes one store makes reach another's Watch on
// PostgreSQL, in order, without the watcher's own; an unchanged tool list
// is not announced; a lost connection is re-made and reported as
// ChangeAll; Close ends the watch. On SQLite nothing is reported.
func testWatch(t *testing.T, newDB func(*testing.T) string) {
	db := newDB(t)
	a, b := open(t, db), open(t, db)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := b.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg := json.RawMessage(`{"url":"https://x"}`)
	if !postgres(db) {
		if _, err := a.AddServer(ctx, store.ServerRecord{ID: "x", Config: cfg}); err != nil {
			t.Fatal(err)
		}
		cancel()
		for c := range ch {
			t.Errorf("a SQLite watch reported %+v", c)
		}
		return
	}
	next := func() store.Change {
		t.Helper()
		select {
		case c, ok := <-ch:
			if !ok {
				t.Fatal("the watch ended")
			}
			return c
		case <-time.After(10 * time.Second):
			t.Fatal("no change within 10 s")
		}
		return store.Change{}
	}
	if _, err := b.AddServer(ctx, store.ServerRecord{ID: "own", Config: cfg}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := a.AddServer(ctx, store.ServerRecord{ID: "x", Config: cfg, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if c := next(); c != (store.Change{Kind: store.ChangeServer, Server: "x"}) {
		t.Fatalf("first change = %+v, want x added (and not the watcher's own)", c)
	}
	t.Logf("a change reached the other store in %v", time.Since(start))
	steps := []func() error{
		func() error { _, err := a.UpdateServer(ctx, store.ServerRecord{ID: "x", Config: cfg}, 0); return err },
		func() error { return a.SaveTools(ctx, "x", "s1", json.RawMessage(`[{"name":"t"}]`), 0) },
		func() error { return a.SaveTools(ctx, "x", "s1", json.RawMessage(`[ {"name": "t"} ]`), time.Minute) }, // the same list
		func() error {
			_, err := a.AddServer(ctx, store.ServerRecord{ID: "x", Config: cfg})
			return nilIf(err, store.ErrExists)
		},
		func() error {
			_, err := a.UpdateServer(ctx, store.ServerRecord{ID: "x", Config: cfg}, 99)
			return nilIf(err, store.ErrConflict)
		},
		func() error { return a.SaveTools(ctx, "x", "s1", json.RawMessage(`[{"name":"u"}]`), 0) },
		func() error { return a.DeleteServer(ctx, "x", 0) },
	}
	for i, f := range steps {
		if err := f(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	want := []store.Change{{Kind: store.ChangeServer, Server: "x"}, {Kind: store.ChangeTools, Server: "x"}, {Kind: store.ChangeTools, Server: "x"}, {Kind: store.ChangeServer, Server: "x"}}
	for i, w := range want {
		if c := next(); c != w {
			t.Errorf("change %d = %+v, want %+v", i, c, w)
		}
	}

	// The watch's connection is cut: it comes back, says changes may
	// have been missed, and hears the next ones.
	raw := rawDB(t, db)
	defer raw.Close()
	var cut int
	if err := raw.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`).Scan(&cut); err != nil || cut != 1 {
		t.Fatalf("terminating the watch's connection: %d, %v", cut, err)
	}
	if c := next(); c.Kind != store.ChangeAll {
		t.Fatalf("after the connection was cut: %+v, want ChangeAll", c)
	}
	if _, err := a.AddServer(ctx, store.ServerRecord{ID: "y", Config: cfg}); err != nil {
		t.Fatal(err)
	}
	if c := next(); c != (store.Change{Kind: store.ChangeServer, Server: "y"}) {
		t.Errorf("after the reconnection: %+v, want y added", c)
	}

	b.Close()
	select {
	case c, ok := <-ch:
		if ok {
			t.Errorf("after Close: %+v, want the channel closed", c)
		}
	case <-time.After(10 * time.Second):
		t.Error("the watch did not end at Close")
	}
}

// nilIf returns nil for an error that is target, and anything else as an
// error.
func nilIf(err, target error) error {
	if errors.Is(err, target) {
		return nil
	}
	if err == nil {
		return fmt.Errorf("no error, want %v", target)
	}
	return err
}

// TestPostgresErrorsHideSecrets: a PostgreSQL password, in the URL's user
// part or its query, never reaches Open's error.
func TestPostgresErrorsHideSecrets(t *testing.T) {
	const pw = "pw-s3cr3t-0042"
	dir := t.TempDir() // no server listens here
	for _, db := range []string{
		"postgres://postgres:" + pw + "@/x?host=" + dir + "&connect_timeout=5",
		"postgres:///x?user=postgres&password=" + pw + "&host=" + dir + "&connect_timeout=5",
		"postgres://postgres:" + pw + "@/x?host=" + dir + "&sslmode=bogus",
		"postgres://postgres:" + pw + "@[::1/x",
	} {
		_, err := store.Open(context.Background(), db, nil)
		if err == nil {
			t.Fatalf("Open(%q) connected to nothing", db)
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("Open's error holds the password: %v", err)
		}
	}
}

// testKeysAndReplicas: a key is made once and is the same for two stores
// on the database, another name gets another key; a replica is found by
// id with its address until deleted, and one not seen since a time is
// forgotten with another's deletion.
func testKeysAndReplicas(t *testing.T, newDB func(*testing.T) string) {
	ctx := context.Background()
	db := newDB(t)
	a, b := open(t, db), open(t, db)
	ka, err := a.Key(ctx, "gateway_request_state")
	if err != nil || len(ka) != 32 {
		t.Fatalf("Key = %x, %v; want 32 bytes", ka, err)
	}
	kb, err := b.Key(ctx, "gateway_request_state")
	if err != nil || string(kb) != string(ka) {
		t.Errorf("the second store's key = %x, %v; want the first's, %x", kb, err, ka)
	}
	if other, err := b.Key(ctx, "other"); err != nil || string(other) == string(ka) {
		t.Errorf("Key(other) = %x, %v; want a key of its own", other, err)
	}

	if _, err := b.Replica(ctx, "r1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Replica of nothing: %v, want ErrNotFound", err)
	}
	before := time.Now().Add(-time.Second)
	if err := a.SaveReplica(ctx, "r1", "10.0.0.1:7300"); err != nil {
		t.Fatal(err)
	}
	if err := a.SaveReplica(ctx, "r2", "10.0.0.2:7300"); err != nil {
		t.Fatal(err)
	}
	r, err := b.Replica(ctx, "r1")
	if err != nil || r.Address != "10.0.0.1:7300" || r.Seen.Before(before) {
		t.Errorf("Replica(r1) = %+v, %v", r, err)
	}
	if err := a.SaveReplica(ctx, "r1", "10.0.0.9:7300"); err != nil {
		t.Fatal(err)
	}
	if r, err := b.Replica(ctx, "r1"); err != nil || r.Address != "10.0.0.9:7300" {
		t.Errorf("Replica(r1) after a second save = %+v, %v", r, err)
	}
	if err := a.DeleteReplica(ctx, "r1", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Replica(ctx, "r1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Replica(r1) after DeleteReplica: %v, want ErrNotFound", err)
	}
	if _, err := b.Replica(ctx, "r2"); err != nil {
		t.Errorf("Replica(r2) after r1's deletion: %v", err)
	}
	if err := a.DeleteReplica(ctx, "r3", time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Replica(ctx, "r2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Replica(r2) after deleting those not seen since: %v, want ErrNotFound", err)
	}
}

// oldWorkflowDDL is how the workflow engine made its tables itself, before
// the store's migrations made them (step 5).
var oldWorkflowDDL = []string{
	`CREATE TABLE IF NOT EXISTS switchboard_run_events (
		run_id   TEXT    NOT NULL,
		seq      BIGINT  NOT NULL,
		key      TEXT    NOT NULL,
		terminal INTEGER NOT NULL DEFAULT 0,
		body     TEXT    NOT NULL,
		PRIMARY KEY (run_id, seq),
		UNIQUE (run_id, key)
	)`,
	`CREATE TABLE IF NOT EXISTS switchboard_gate_answers (
		gate   TEXT   PRIMARY KEY,
		action TEXT   NOT NULL,
		at_ms  BIGINT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS switchboard_step_attempts (
		run_id     TEXT    NOT NULL,
		step       TEXT    NOT NULL,
		attempt    INTEGER NOT NULL,
		executor   TEXT    NOT NULL,
		started    TEXT    NOT NULL,
		resolution TEXT,
		PRIMARY KEY (run_id, step, attempt)
	)`,
	`CREATE TABLE IF NOT EXISTS switchboard_keys (name TEXT PRIMARY KEY, key TEXT NOT NULL)`,
	`INSERT INTO switchboard_run_events (run_id, seq, key, terminal, body) VALUES ('run-1', 1, 'run:started', 0, '{}')`,
	`INSERT INTO switchboard_gate_answers (gate, action, at_ms) VALUES ('run-1/gate/ok', 'accept', 1)`,
	`INSERT INTO switchboard_step_attempts (run_id, step, attempt, executor, started) VALUES ('run-1', 'a', 1, 'serve-1', 'now')`,
	`INSERT INTO switchboard_keys (name, key) VALUES ('request_state', 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=')`,
}

// testWorkflowTables: a database whose workflow tables the engine made
// itself (oldWorkflowDDL), before the store ever opened it or at schema
// version 4, opens at the current version with their rows, and the
// engine's key is the store's.
func testWorkflowTables(t *testing.T, newDB func(*testing.T) string) {
	ctx := context.Background()
	for _, version := range []int{0, 4} {
		db := newDB(t)
		raw := rawDB(t, db)
		if version == 4 {
			open(t, db).Close()
			for _, q := range []string{`DROP TABLE switchboard_run_events`, `DROP TABLE switchboard_gate_answers`,
				`DROP TABLE switchboard_step_attempts`, `DROP TABLE endpoints`, `DELETE FROM schema_migrations WHERE version > 4`} {
				if _, err := raw.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, q := range oldWorkflowDDL {
			if _, err := raw.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		raw.Close()
		s := open(t, db)
		if got := schemaVersion(t, db); got != store.SchemaVersion() {
			t.Errorf("from version %d: schema version %d, want %d", version, got, store.SchemaVersion())
		}
		for _, table := range []string{"switchboard_run_events", "switchboard_gate_answers", "switchboard_step_attempts"} {
			var n int
			if err := s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil || n != 1 {
				t.Errorf("from version %d: %s has %d rows, %v; want its 1", version, table, n, err)
			}
		}
		if k, err := s.Key(ctx, "request_state"); err != nil || len(k) != 32 || k[0] != 0 {
			t.Errorf("from version %d: Key(request_state) = %x, %v; want the engine's, 32 zero bytes", version, k, err)
		}
	}
}

// testSecrets: a sealed value set by one store is read by another, replaced,
// and deleted once.
func testSecrets(t *testing.T, newDB func(*testing.T) string) {
	ctx := context.Background()
	db := newDB(t)
	a, b := open(t, db), open(t, db)
	if v, ok, err := b.Secret(ctx, "oauth.x"); ok || err != nil {
		t.Fatalf("Secret of nothing = %q, %v, %v; want none", v, ok, err)
	}
	for _, v := range []string{"sb1.one", "sb1.two"} {
		if err := a.SetSecret(ctx, "oauth.x", v); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := b.Secret(ctx, "oauth.x"); got != v || !ok || err != nil {
			t.Errorf("Secret after SetSecret(%q) = %q, %v, %v", v, got, ok, err)
		}
	}
	if had, err := b.DeleteSecret(ctx, "oauth.x"); !had || err != nil {
		t.Errorf("DeleteSecret = %v, %v; want true", had, err)
	}
	if had, err := b.DeleteSecret(ctx, "oauth.x"); had || err != nil {
		t.Errorf("second DeleteSecret = %v, %v; want false", had, err)
	}
	if _, ok, _ := a.Secret(ctx, "oauth.x"); ok {
		t.Errorf("Secret after DeleteSecret: still there")
	}
}

// testLocks: a lock held by one store is waited for by another (given up
// when its context ends, taken once released); locks of other names are
// free; and a lock whose process is killed is released.
func testLocks(t *testing.T, newDB func(*testing.T) string) {
	ctx := context.Background()
	db := newDB(t)
	a, b := open(t, db), open(t, db)
	unlock, err := a.Lock(ctx, "oauth.x")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := b.Lock(short, "oauth.x"); err == nil || !strings.Contains(err.Error(), `"oauth.x"`) {
		t.Fatalf("Lock while another store holds it: %v; want an error naming the lock", err)
	}
	other, err := b.Lock(ctx, "oauth.y")
	if err != nil {
		t.Fatalf("Lock of another name: %v", err)
	}
	other()
	got := make(chan error, 1)
	go func() {
		u, err := b.Lock(ctx, "oauth.x")
		if err == nil {
			u()
		}
		got <- err
	}()
	unlock()
	if err := <-got; err != nil {
		t.Fatalf("Lock once released: %v", err)
	}
	// The store still works after a Lock that gave up (PostgreSQL: its
	// connection was dropped, not returned to the pool waiting).
	if err := b.SetSecret(ctx, "after", "v"); err != nil {
		t.Errorf("SetSecret after a Lock gave up: %v", err)
	}

	// A holder killed: its lock is released.
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHolderProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "STORE_TEST_LOCK="+db)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	hold, err := cmd.StdinPipe() // never written: the holder holds until killed
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	var stderr safeBuffer
	cmd.Stderr = &stderr
	if err := interop.StartWithTest(cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("the holder said %q, want locked; its stderr:\n%s", line, stderr.String())
	}
	short2, cancel2 := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel2()
	if _, err := a.Lock(short2, "oauth.x"); err == nil {
		t.Fatalf("Lock while another process holds it: taken")
	}
	cmd.Process.Kill()
	cmd.Wait()
	wait, cancel3 := context.WithTimeout(ctx, 30*time.Second)
	defer cancel3()
	u, err := a.Lock(wait, "oauth.x")
	if err != nil {
		t.Fatalf("Lock after its holder was killed: %v", err)
	}
	u()
}

// TestLockHolderProcess is the process testLocks kills holding a lock.
func TestLockHolderProcess(t *testing.T) {
	db := os.Getenv("STORE_TEST_LOCK")
	if db == "" {
		t.Skip("run by TestBackends/*/locks")
	}
	s, err := store.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lock(context.Background(), "oauth.x"); err != nil {
		t.Fatal(err)
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin) // until killed
	t.Fatal("stdin closed: the test that runs this process ended without killing it")
}
