package telemetry

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// otlpClient sends spans to an OTLP/HTTP collector as protobuf: the
// otlptrace.Client under otel's own exporter (which turns spans into
// OTLP's messages). Not otlptracehttp: its options import
// google.golang.org/grpc, which brings golang.org/x/net/trace and its
// html/template, and the linker then keeps every exported method of every
// type (TestDeadCodeElimination, docs/size.md). The request message is
// written by hand for the same reason: its package,
// go.opentelemetry.io/proto/otlp/collector/trace/v1, imports grpc too.
type otlpClient struct {
	url    string
	client *http.Client
}

func (c *otlpClient) Start(context.Context) error { return nil }
func (c *otlpClient) Stop(context.Context) error  { return nil }

// maxCollectorAnswer bounds what is read of a collector's answer.
const maxCollectorAnswer = 64 << 10

func (c *otlpClient) UploadTraces(ctx context.Context, spans []*tracepb.ResourceSpans) error {
	// ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
	var body []byte
	for _, rs := range spans {
		b, err := proto.Marshal(rs)
		if err != nil {
			return err
		}
		body = protowire.AppendTag(body, 1, protowire.BytesType)
		body = protowire.AppendBytes(body, b)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("otlp_endpoint: %w", err)
	}
	defer resp.Body.Close()
	// Read (bounded) so that the connection can be reused. A partial
	// success is not looked into: its message is in the collector package.
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxCollectorAnswer))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("otlp_endpoint: the collector answered %s", resp.Status)
	}
	return nil
}
