package testpg

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestStart: the server takes connections on its socket only (no TCP),
// runs SQL, and is gone, with its folder, when the test ends.
func TestStart(t *testing.T) {
	var dir string
	var pid int
	t.Run("server", func(t *testing.T) {
		u := Start(t)
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		dir = pu.Query().Get("host")
		ctx := context.Background()
		c, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		var listen string
		if err := c.QueryRow(ctx, "SHOW listen_addresses").Scan(&listen); err != nil || listen != "" {
			t.Errorf("listen_addresses = %q, %v; want none", listen, err)
		}
		if _, err := c.Exec(ctx, "CREATE TABLE t (x int); INSERT INTO t VALUES (42)"); err != nil {
			t.Fatal(err)
		}
		var x int
		if err := c.QueryRow(ctx, "SELECT x FROM t").Scan(&x); err != nil || x != 42 {
			t.Errorf("SELECT x = %d, %v", x, err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
		if err != nil {
			t.Fatal(err)
		}
		if pid, err = strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0]); err != nil {
			t.Fatal(err)
		}
	})
	if dir == "" || pid == 0 {
		t.FailNow()
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("postgres (pid %d) still there after the test: kill 0 = %v", pid, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the server's folder %s is still there: %v", dir, err)
	}
}
