package config

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDecodeEndpoint: one endpoint as JSON decodes as an [[endpoints]]
// table does, round-trips through EndpointJSON, and its problems name
// the fields relative to it, a token written out among them.
func TestDecodeEndpoint(t *testing.T) {
	in := `{"name":"code","path":"/code/mcp","servers":["a"],"tools":["a_*","!a_x"],"rename":{"r":"a_read"},` +
		`"override":{"r":{"description":"Read"}},"auth_token":"{{secrets.code}}","scopes":["code"]}`
	ep, err := DecodeEndpoint([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(EndpointJSON(ep)); got != in {
		t.Errorf("EndpointJSON(DecodeEndpoint(%s)) = %s", in, got)
	}
	_, err = DecodeEndpoint([]byte(`{"name":"code","servers":[1],"auth_token":"abcdefabcdefabcdef0123456789","nope":true}`))
	var fields []string
	for _, p := range Problems(err) {
		fields = append(fields, p.Field)
		if p.Pos.File != "" {
			t.Errorf("problem %v names a file", p)
		}
	}
	if diff := cmp.Diff([]string{"auth_token", "nope", "servers[0]"}, slices.Sorted(slices.Values(fields))); diff != "" {
		t.Errorf("DecodeEndpoint problems' fields (-want +got):\n%s\n%v", diff, err)
	}
}

// TestCheckEndpoint: an endpoint beside the configured ones and others is
// checked against the configuration, its problems alone reported,
// relative to it.
func TestCheckEndpoint(t *testing.T) {
	c := &Config{
		Servers:   []Server{{ID: "a", Command: "x"}},
		Endpoints: []Endpoint{{Name: "conf", Path: "/conf/mcp", Servers: []string{"nope"}}},
	}
	others := []Endpoint{{Name: "other", Path: "/other/mcp"}}
	for _, tc := range []struct {
		ep   Endpoint
		want []string
	}{
		{Endpoint{Name: "ok", Servers: []string{"a"}}, nil},
		{Endpoint{Name: "x", Servers: []string{"b"}}, []string{`servers[0]: no server "b" in the configuration (configured: a)`}},
		{Endpoint{Name: "x", Path: "/conf/mcp"}, []string{`path: endpoint "x" would be served at /conf/mcp, as endpoint "conf" is`}},
		{Endpoint{Name: "x", Path: "/other/mcp"}, []string{`path: endpoint "x" would be served at /other/mcp, as endpoint "other" is`}},
		{Endpoint{Name: "x", Path: "/api/v1/mcp"}, []string{`path: "/api/v1/mcp" collides with /api/, which the daemon serves`}},
		{Endpoint{Name: "x", Tools: []string{"["}}, []string{`tools[0]: invalid glob "[": syntax error in pattern`}},
	} {
		var got []string
		for _, p := range Problems(c.CheckEndpoint(tc.ep, others)) {
			got = append(got, p.Error())
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("CheckEndpoint(%+v) (-want +got):\n%s", tc.ep, diff)
		}
	}
}
