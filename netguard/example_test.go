package netguard_test

import (
	"fmt"

	"github.com/switchboardmcp/switchboard/netguard"
)

func ExampleCheckURL() {
	for _, u := range []string{
		"https://mcp.example.com/mcp",
		"http://mcp.example.com/mcp",
		"http://10.0.0.5:8080/mcp",
		"https://deploy:hunter22@mcp.example.com/",
		"http://0x7f.1:3000/mcp",
	} {
		fmt.Println(netguard.CheckURL(u, false))
	}
	// allow_local_endpoint admits a local server, plaintext included …
	fmt.Println(netguard.CheckURL("http://127.0.0.1:3000/mcp", true))
	// … but never a cloud metadata endpoint.
	fmt.Println(netguard.CheckURL("http://169.254.169.254/latest/meta-data/", true))
	// Output:
	// <nil>
	// url http://mcp.example.com/mcp: plain http to a remote host is not allowed; use https (or set allow_local_endpoint = true if mcp.example.com is on the local network)
	// url http://10.0.0.5:8080/mcp: 10.0.0.5 is a private address (RFC 1918); set allow_local_endpoint = true to allow this server to reach it
	// url https://mcp.example.com/: credentials in the URL are not allowed; use headers with a {{secrets.NAME}} placeholder
	// url http://0x7f.1:3000/mcp: 0x7f.1 (127.0.0.1) is a loopback address (RFC 1122); set allow_local_endpoint = true to allow this server to reach it
	// <nil>
	// url http://169.254.169.254/latest/meta-data/: 169.254.169.254 is a cloud metadata endpoint; it is refused even with allow_local_endpoint
}
