package registry_test

import (
	"fmt"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/registry"
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
