package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/store"

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

func TestOpenRefusesPostgresForNow(t *testing.T) {
	_, err := store.Open(context.Background(), "postgres://u:pw@db.example.com/sb", nil)
	if err == nil || !strings.Contains(err.Error(), "not supported yet") || strings.Contains(err.Error(), "pw") {
		t.Errorf("Open(postgres://…) = %v", err)
	}
}

func TestMigrations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
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
	if _, err := raw.Exec(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)`, newer); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	_, err := store.Open(context.Background(), path, nil)
	if !errors.Is(err, store.ErrNewerSchema) || !strings.Contains(err.Error(), strconv.Itoa(newer)) || !strings.Contains(err.Error(), path) {
		t.Errorf("Open of a newer database: %v, want ErrNewerSchema naming version %d and the file", err, newer)
	}
}

func TestServers(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
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

func TestToolCache(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "t.db"))
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

// TestTwoProcesses: a serve and a CLI command use one database at once.
// Another process (this test binary, re-run) and this one each add servers
// and save tool lists concurrently; every write lands, none fails on a
// lock.
func TestTwoProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
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

// TestWriterProcess is the other process of TestTwoProcesses.
func TestWriterProcess(t *testing.T) {
	path := os.Getenv("STORE_TEST_WRITER")
	if path == "" {
		t.Skip("run by TestTwoProcesses")
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

// rawDB opens the database file directly, around the store.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
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
