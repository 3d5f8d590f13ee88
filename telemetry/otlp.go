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
	body, err := exportRequest(spans)
	if err != nil {
		return err
	}
	return post(ctx, c.client, c.url, body)
}

// exportRequest is an OTLP collector's Export*ServiceRequest: each of its
// messages has one field, 1, repeating the resource's data (resource_spans,
// resource_metrics).
func exportRequest[M proto.Message](items []M) ([]byte, error) {
	var body []byte
	for _, it := range items {
		b, err := proto.Marshal(it)
		if err != nil {
			return nil, err
		}
		body = protowire.AppendTag(body, 1, protowire.BytesType)
		body = protowire.AppendBytes(body, b)
	}
	return body, nil
}

// post sends an OTLP/HTTP request's protobuf body to url.
func post(ctx context.Context, client *http.Client, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := client.Do(req)
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
