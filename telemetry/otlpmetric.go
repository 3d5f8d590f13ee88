package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
)

// DefaultOTLPInterval is how often metrics are pushed to the collector
// when Options.OTLPInterval is zero: OpenTelemetry's own default
// (OTEL_METRIC_EXPORT_INTERVAL).
const DefaultOTLPInterval = time.Minute

// metricExporter pushes metrics to an OTLP/HTTP collector's /v1/metrics
// as protobuf, under a periodic reader. It is written here rather than
// taken from otlpmetrichttp for the reason otlpClient is (that exporter
// imports google.golang.org/grpc), and it converts the SDK's data to
// OTLP's messages itself because otel's conversion is internal to that
// exporter. It handles the aggregations this package's instruments make
// (sums, gauges, explicit-bucket histograms); any other is an error
// naming the metric, never a silent drop.
type metricExporter struct {
	url    string
	client *http.Client
}

var _ sdkmetric.Exporter = (*metricExporter)(nil)

func (e *metricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}

func (e *metricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

func (e *metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	m, err := otlpMetrics(rm)
	if err != nil {
		return err
	}
	// ExportMetricsServiceRequest { repeated ResourceMetrics resource_metrics = 1; }
	body, err := exportRequest([]*metricspb.ResourceMetrics{m})
	if err != nil {
		return err
	}
	return post(ctx, e.client, e.url, body)
}

func (e *metricExporter) ForceFlush(context.Context) error { return nil }
func (e *metricExporter) Shutdown(context.Context) error   { return nil }

// otlpMetrics converts the SDK's collection to OTLP's message.
func otlpMetrics(rm *metricdata.ResourceMetrics) (*metricspb.ResourceMetrics, error) {
	out := &metricspb.ResourceMetrics{SchemaUrl: rm.Resource.SchemaURL()}
	if rm.Resource != nil {
		out.Resource = &resourcepb.Resource{Attributes: otlpAttrs(rm.Resource.Iter())}
	}
	for _, sm := range rm.ScopeMetrics {
		s := &metricspb.ScopeMetrics{
			Scope:     &commonpb.InstrumentationScope{Name: sm.Scope.Name, Version: sm.Scope.Version},
			SchemaUrl: sm.Scope.SchemaURL,
		}
		for _, m := range sm.Metrics {
			o := &metricspb.Metric{Name: m.Name, Description: m.Description, Unit: m.Unit}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				o.Data = otlpSum(d)
			case metricdata.Sum[float64]:
				o.Data = otlpSum(d)
			case metricdata.Gauge[int64]:
				o.Data = &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: otlpPoints(d.DataPoints)}}
			case metricdata.Gauge[float64]:
				o.Data = &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: otlpPoints(d.DataPoints)}}
			case metricdata.Histogram[int64]:
				o.Data = otlpHistogram(d)
			case metricdata.Histogram[float64]:
				o.Data = otlpHistogram(d)
			default:
				return nil, fmt.Errorf("otlp_endpoint: metric %s: aggregation %T is not exported", m.Name, d)
			}
			s.Metrics = append(s.Metrics, o)
		}
		out.ScopeMetrics = append(out.ScopeMetrics, s)
	}
	return out, nil
}

func otlpTemporality(t metricdata.Temporality) metricspb.AggregationTemporality {
	if t == metricdata.DeltaTemporality {
		return metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA
	}
	return metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE
}

func otlpSum[N int64 | float64](s metricdata.Sum[N]) *metricspb.Metric_Sum {
	return &metricspb.Metric_Sum{Sum: &metricspb.Sum{
		AggregationTemporality: otlpTemporality(s.Temporality),
		IsMonotonic:            s.IsMonotonic,
		DataPoints:             otlpPoints(s.DataPoints),
	}}
}

func otlpPoints[N int64 | float64](pts []metricdata.DataPoint[N]) []*metricspb.NumberDataPoint {
	out := make([]*metricspb.NumberDataPoint, 0, len(pts))
	for _, p := range pts {
		n := &metricspb.NumberDataPoint{
			Attributes:        otlpAttrs(p.Attributes.Iter()),
			StartTimeUnixNano: unixNano(p.StartTime),
			TimeUnixNano:      unixNano(p.Time),
		}
		switch v := any(p.Value).(type) {
		case int64:
			n.Value = &metricspb.NumberDataPoint_AsInt{AsInt: v}
		case float64:
			n.Value = &metricspb.NumberDataPoint_AsDouble{AsDouble: v}
		}
		out = append(out, n)
	}
	return out
}

func otlpHistogram[N int64 | float64](h metricdata.Histogram[N]) *metricspb.Metric_Histogram {
	pts := make([]*metricspb.HistogramDataPoint, 0, len(h.DataPoints))
	for _, p := range h.DataPoints {
		sum := float64(p.Sum)
		hp := &metricspb.HistogramDataPoint{
			Attributes:        otlpAttrs(p.Attributes.Iter()),
			StartTimeUnixNano: unixNano(p.StartTime),
			TimeUnixNano:      unixNano(p.Time),
			Count:             p.Count,
			Sum:               &sum,
			BucketCounts:      p.BucketCounts,
			ExplicitBounds:    p.Bounds,
		}
		if v, ok := p.Min.Value(); ok {
			f := float64(v)
			hp.Min = &f
		}
		if v, ok := p.Max.Value(); ok {
			f := float64(v)
			hp.Max = &f
		}
		pts = append(pts, hp)
	}
	return &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{
		AggregationTemporality: otlpTemporality(h.Temporality),
		DataPoints:             pts,
	}}
}

// otlpAttrs converts attributes; the package sets strings, ints and bools
// only, and anything else is sent as its string form.
func otlpAttrs(it attribute.Iterator) []*commonpb.KeyValue {
	if it.Len() == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, 0, it.Len())
	for it.Next() {
		kv := it.Attribute()
		v := &commonpb.AnyValue{}
		switch kv.Value.Type() {
		case attribute.STRING:
			v.Value = &commonpb.AnyValue_StringValue{StringValue: kv.Value.AsString()}
		case attribute.INT64:
			v.Value = &commonpb.AnyValue_IntValue{IntValue: kv.Value.AsInt64()}
		case attribute.BOOL:
			v.Value = &commonpb.AnyValue_BoolValue{BoolValue: kv.Value.AsBool()}
		case attribute.FLOAT64:
			v.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: kv.Value.AsFloat64()}
		default:
			v.Value = &commonpb.AnyValue_StringValue{StringValue: kv.Value.Emit()}
		}
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key), Value: v})
	}
	return out
}

func unixNano(t time.Time) uint64 { return uint64(max(0, t.UnixNano())) }
