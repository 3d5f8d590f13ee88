//go:build tools

package switchboard

import (
	_ "github.com/coder/websocket"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/pelletier/go-toml/v2"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/spf13/cobra"
)
