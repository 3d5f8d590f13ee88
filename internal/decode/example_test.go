package decode_test

import (
	"fmt"
	"time"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// A table is declared once; a parser's generic values (here as go-toml
// would decode them, with the lines it recorded) are read, checked and
// reported against it.
func Example() {
	type Cache struct {
		Dir string
		TTL time.Duration
	}
	fields := decode.Table[Cache]{
		decode.String("dir", decode.TOML|decode.YAML, func(c *Cache) *string { return &c.Dir }),
		decode.Duration("ttl", decode.TOML|decode.YAML, func(c *Cache) *time.Duration { return &c.TTL }, 24*time.Hour),
	}

	d := decode.New("switchboard.toml", decode.TOML)
	d.Lines["cache.dir"], d.Lines["cache.tll"] = 2, 3
	var c Cache
	fields.Decode(d, "cache", map[string]any{"dir": "/tmp/c", "tll": "5m"}, &c)

	fmt.Printf("dir %s\n", c.Dir)
	for _, p := range d.Problems {
		fmt.Printf("%s:%d: %s: %s\n", d.File, p.Line, p.Field, p.Msg)
	}
	// Output:
	// dir /tmp/c
	// switchboard.toml:3: cache.tll: unknown key "tll"; did you mean ttl?
}
