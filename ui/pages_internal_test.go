package ui

import "testing"

// TestPagesParse parses every page's templates, which New leaves to each
// page's first rendering: a template that does not parse fails here, not
// in front of a user.
func TestPagesParse(t *testing.T) {
	for _, p := range pageNames {
		if _, err := parsePage(nil, p); err != nil {
			t.Errorf("page %s: %v", p, err)
		}
	}
}
