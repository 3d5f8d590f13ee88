// Package replicatest holds the end-to-end proof of the replicated set-up
// (docs/deployment.md, "Replicated"): real `switchboard serve` processes on
// one PostgreSQL (internal/testkit/testpg) behind a real HAProxy
// (internal/testkit/testhaproxy) configured by examples/haproxy/haproxy.cfg as
// shipped, with only its addresses changed. It has tests and a benchmark,
// no code of its own: the tests are TestReplicas and
// TestWorkflowSurvivesReplica, the benchmark BenchmarkReplicas.
// TestClientLimitBehindBalancer puts one replica (on SQLite) behind the
// same HAProxy, and shows max_client_sessions applying per client once
// [gateway] trusted_proxies names the balancer (X-Forwarded-For as
// shipped; the PROXY protocol with send-proxy-v2 added to its server
// line).
package replicatest
