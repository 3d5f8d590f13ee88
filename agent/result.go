package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Summarize renders a tool result as the text the model gets: text content
// as it is, other kinds summarised ("[image: image/png, 1234 bytes]", a
// resource's text with its URI), structuredContent as JSON when there is no
// text; cut to MaxResultBytes. Binary data never reaches the model: it
// cannot read base64 usefully, and it would fill the context.
func Summarize(res *mcp.CallToolResult) string {
	var b strings.Builder
	hasText := false
	nl := func() {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
	}
	for _, c := range res.Content {
		nl()
		switch c := c.(type) {
		case *mcp.TextContent:
			hasText = true
			b.WriteString(c.Text)
		case *mcp.ImageContent:
			fmt.Fprintf(&b, "[image: %s, %d bytes]", c.MIMEType, len(c.Data))
		case *mcp.AudioContent:
			fmt.Fprintf(&b, "[audio: %s, %d bytes]", c.MIMEType, len(c.Data))
		case *mcp.ResourceLink:
			fmt.Fprintf(&b, "[resource link: %s %s]", c.URI, c.Name)
		case *mcp.EmbeddedResource:
			if r := c.Resource; r != nil {
				if r.Text != "" {
					hasText = true
					fmt.Fprintf(&b, "[resource: %s]\n%s", r.URI, r.Text)
				} else {
					fmt.Fprintf(&b, "[resource: %s %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob))
				}
			}
		default:
			fmt.Fprintf(&b, "[content of type %T]", c)
		}
		if b.Len() > MaxResultBytes {
			break
		}
	}
	if res.StructuredContent != nil && !hasText {
		if raw, err := json.Marshal(res.StructuredContent); err == nil {
			nl()
			b.Write(raw)
		}
	}
	return truncate(b.String(), MaxResultBytes)
}

// truncate cuts s to at most n bytes (on a rune boundary) and says how much
// was cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[truncated: %d more bytes]", len(s)-cut)
}
