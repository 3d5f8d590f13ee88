package config

import (
	"fmt"
	"time"

	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/netguard"
)

// Telemetry is the [telemetry] table: where `switchboard serve` sends its
// traces and metrics besides /metrics (see the telemetry package and
// docs/observability.md).
//
//	[telemetry]
//	otlp_endpoint = "https://collector.example.com:4318"  # OTLP/HTTP; traces are off without it
//	otlp_interval = "60s"         # how often metrics are pushed there
//	allow_local_endpoint = false  # true admits a collector on this machine or the LAN
//	record_payloads = false       # true records tool arguments and results in spans, redacted
//	max_tool_labels = 256         # tool names per server that label metrics; the others count as "_other"
//
// Metrics are served at /metrics on the daemon's listener either way. A
// later file's keys override an earlier file's one by one.
type Telemetry struct {
	// OTLPEndpoint is an OTLP/HTTP collector's base URL; "" means no
	// export (and no traces). The URL floor applies, as to a server's url.
	OTLPEndpoint string
	// OTLPInterval is how often metrics are pushed to OTLPEndpoint; 0
	// means telemetry.DefaultOTLPInterval (a minute).
	OTLPInterval time.Duration
	// AllowLocalEndpoint admits a collector at a local or private address,
	// as a server's allow_local_endpoint does.
	AllowLocalEndpoint bool
	// RecordPayloads records a tool call's arguments and result in its
	// spans, redacted.
	RecordPayloads bool
	// MaxToolLabels bounds the distinct tool names of one server that
	// label metrics (a server may rename its tools on every list, and
	// each name would be series of its own for good); 0 means
	// DefaultMaxToolLabels.
	MaxToolLabels int

	// Source is where the last [telemetry] table was declared; zero when
	// none was.
	Source Position
}

// telemetryTable declares [telemetry]. The URL is checked once merged: a
// later file's allow_local_endpoint may admit an earlier file's endpoint.
var telemetryTable = mergedTable[Telemetry]{
	key: "telemetry",
	fields: decode.Table[Telemetry]{
		decode.String("otlp_endpoint", decode.TOML, func(t *Telemetry) *string { return &t.OTLPEndpoint }, func(s string) string {
			if hasPlaceholder(s) {
				return "placeholders are not allowed here"
			}
			return ""
		}),
		decode.Value("otlp_interval", decode.TOML, func(t *Telemetry) *time.Duration { return &t.OTLPInterval }, (*decode.Decoder).Duration,
			func(d time.Duration) string {
				if d != 0 && d < MinOTLPInterval { // 0: unset
					return fmt.Sprintf("must be at least %v, not %v", MinOTLPInterval, d)
				}
				return ""
			}, decode.AtMost(MaxOTLPInterval)),
		decode.Bool("allow_local_endpoint", decode.TOML, func(t *Telemetry) *bool { return &t.AllowLocalEndpoint }),
		decode.Bool("record_payloads", decode.TOML, func(t *Telemetry) *bool { return &t.RecordPayloads }),
		decode.Range("max_tool_labels", decode.TOML, func(t *Telemetry) *int { return &t.MaxToolLabels }, MinToolLabels, MaxToolLabels),
	},
	config:        func(c *Config) *Telemetry { return &c.Telemetry },
	source:        func(t *Telemetry) *Position { return &t.Source },
	checkOnDecode: true,
}

// MinOTLPInterval bounds otlp_interval from below: each push is a
// collection of every series and a request to the collector.
const MinOTLPInterval = time.Second

// DefaultMaxToolLabels is max_tool_labels's default (the telemetry
// package's): more tools than most servers have, few enough that a
// server that renames its tools cannot grow the series far. MinToolLabels
// and MaxToolLabels bound the key: below 16 ordinary servers' tools would
// be folded; above 10,000 it is no bound (the OpenTelemetry SDK's own
// limit, 2,000 series per instrument, is met first).
const (
	DefaultMaxToolLabels = 256
	MinToolLabels        = 16
	MaxToolLabels        = 10_000
)

// CheckEndpoint returns what is wrong with the collector's URL under the
// floor, or "" (also when there is none). The message never quotes the
// URL's userinfo.
func (t Telemetry) CheckEndpoint() string {
	if t.OTLPEndpoint == "" {
		return ""
	}
	if err := netguard.CheckURL(t.OTLPEndpoint, t.AllowLocalEndpoint); err != nil {
		return err.Error()
	}
	return ""
}
