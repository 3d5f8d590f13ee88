package cli

import "testing"

func TestConnectAddr(t *testing.T) {
	for _, tc := range []struct{ listen, want, err string }{
		{"", "127.0.0.1:7300", ""},
		{"127.0.0.1:8000", "127.0.0.1:8000", ""},
		{"0.0.0.0:7300", "127.0.0.1:7300", ""},
		{":7300", "127.0.0.1:7300", ""},
		{"[::]:7300", "[::1]:7300", ""},
		{"10.0.0.5:7300", "10.0.0.5:7300", ""},
		{"127.0.0.1:0", "", `[gateway] listen "127.0.0.1:0" picks a free port at each start, which a client cannot follow: set a port`},
	} {
		got, err := connectAddr(tc.listen)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("connectAddr(%q) = %q, %v; want %q, %q", tc.listen, got, err, tc.want, tc.err)
		}
	}
}

func TestTokenEnv(t *testing.T) {
	for _, tc := range []struct{ token, want string }{
		{"{{env.SB_TOKEN}}", "SB_TOKEN"},
		{"{{secrets.code_token}}", "CODE_TOKEN"},
		{"{{secrets.code-token.2}}", "CODE_TOKEN_2"},
		{"Bearer {{secrets.a}}{{secrets.b}}", "SWITCHBOARD_TOKEN"},
	} {
		if got := tokenEnv(tc.token); got != tc.want {
			t.Errorf("tokenEnv(%q) = %q, want %q", tc.token, got, tc.want)
		}
	}
}
