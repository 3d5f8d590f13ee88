package registry_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/registry"
	"github.com/switchboardmcp/switchboard/registry/registrytest"
)

func ExampleConvert() {
	e := registry.Entry{
		Registry: config.DefaultRegistryURL,
		Server: registry.Server{
			Name:        "io.github.domdomegg/airtable-mcp-server",
			Description: "Read and write access to Airtable database schemas, tables, and records.",
			Version:     "1.7.3",
			Packages: []registry.Package{{
				RegistryType: "npm", Identifier: "airtable-mcp-server", Version: "1.7.3",
				Transport: registry.Transport{Type: "stdio"},
				EnvironmentVariables: []registry.KeyValueInput{{
					Name: "AIRTABLE_API_KEY", Input: registry.Input{IsRequired: true, IsSecret: true},
				}},
			}},
		},
	}
	vars, _ := registry.Variables(e.Server, "")
	for _, v := range vars {
		fmt.Printf("%s %s: required %v, secret %v\n", v.Where, v.Key, v.IsRequired, v.IsSecret)
	}
	// The secret is stored in the secret store; the entry names it.
	s, err := registry.Convert(e, &registry.ConvertOptions{
		ID:     "airtable",
		Values: map[string]string{"AIRTABLE_API_KEY": "{{secrets.airtable_api_key}}"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(config.ServerTOML(s)))
	// Output:
	// env AIRTABLE_API_KEY: required true, secret true
	// [[mcp_servers]]
	// id = "airtable"
	// description = "Read and write access to Airtable database schemas, tables, and records."
	// command = "npx"
	// args = ["-y", "airtable-mcp-server@1.7.3"]
	// env = { AIRTABLE_API_KEY = "{{secrets.airtable_api_key}}" }
	// registry = { name = "io.github.domdomegg/airtable-mcp-server", version = "1.7.3", url = "https://registry.modelcontextprotocol.io" }
}

func ExampleClient_Search() {
	// A fake registry serving one recorded entry; a real one is
	// registry.New(config.DefaultRegistryURL, nil).
	reg := registrytest.New([]registrytest.Record{{Server: json.RawMessage(`{
		"name": "io.github.domdomegg/time-mcp-pypi",
		"description": "Get the current UTC time in RFC 3339 format.",
		"version": "1.0.6",
		"packages": [{"registryType": "pypi", "identifier": "time-mcp-pypi", "version": "1.0.6", "transport": {"type": "stdio"}}]
	}`)}})
	defer reg.Close()
	c, err := registry.New(reg.URL, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	entries, err := c.Search(context.Background(), "time")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range entries {
		s, err := registry.Convert(e, nil)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(e.Server.Name, e.Status(), s.Command, s.Args)
	}
	// Output:
	// io.github.domdomegg/time-mcp-pypi active uvx [time-mcp-pypi==1.0.6]
}
