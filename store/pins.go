package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/switchboardmcp/switchboard/toolpin"
)

// Pinned tool definitions (toolpin): per (server, tool), the trusted
// definition and the one held back for approval. Every write that changes
// what a host may offer — an approval, an import, a deletion — announces
// ChangePins, so that each replica's host looks at its tools again.

// Pins returns the pins of server's tools, or of every server's when server
// is "", ordered by server and tool.
func (s *Store) Pins(ctx context.Context, server string) ([]toolpin.Pin, error) {
	q := `SELECT server, tool, digest, definition, pinned_at, pinned_by, held_digest, held_definition, held_since, held_reason FROM tool_pins`
	args := []any{}
	if server != "" {
		q += ` WHERE server = $1`
		args = append(args, server)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY server, tool`, args...)
	if err != nil {
		return nil, s.errf(err, "reading tool pins")
	}
	defer rows.Close()
	var out []toolpin.Pin
	for rows.Next() {
		p, err := scanPin(rows)
		if err != nil {
			return nil, s.errf(err, "reading tool pins")
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, s.errf(err, "reading tool pins")
	}
	return out, nil
}

// Pin returns the pin of server's tool, or ErrNotFound.
func (s *Store) Pin(ctx context.Context, server, tool string) (toolpin.Pin, error) {
	return s.pin(ctx, s.db, server, tool)
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) pin(ctx context.Context, q queryer, server, tool string) (toolpin.Pin, error) {
	p, err := scanPin(q.QueryRowContext(ctx, `SELECT server, tool, digest, definition, pinned_at, pinned_by, held_digest, held_definition, held_since, held_reason
		FROM tool_pins WHERE server = $1 AND tool = $2`, server, tool))
	if errors.Is(err, sql.ErrNoRows) {
		return toolpin.Pin{}, fmt.Errorf("pin of tool %q of server %q: %w", tool, server, ErrNotFound)
	}
	if err != nil {
		return toolpin.Pin{}, s.errf(err, "reading the pin of tool %q of server %q", tool, server)
	}
	return p, nil
}

func scanPin(row interface{ Scan(...any) error }) (toolpin.Pin, error) {
	var p toolpin.Pin
	var def, heldDigest, heldDef, heldReason string
	var pinnedAt, heldSince int64
	if err := row.Scan(&p.Server, &p.Tool, &p.Digest, &def, &pinnedAt, &p.PinnedBy, &heldDigest, &heldDef, &heldSince, &heldReason); err != nil {
		return toolpin.Pin{}, err
	}
	if def != "" {
		p.Definition = []byte(def)
	}
	if pinnedAt != 0 {
		p.PinnedAt = fromMillis(pinnedAt)
	}
	if heldDigest != "" {
		p.Held = &toolpin.Held{Digest: heldDigest, Definition: []byte(heldDef), Since: fromMillis(heldSince), Reason: heldReason}
	}
	return p, nil
}

// TrustFirstUse pins d as server's tool's trusted definition if none is
// trusted yet, and returns the pin as it now is: the first definition
// seen wins, across every process on the database, so a caller whose d
// differs from the returned pin's digest lost the race to another and
// holds its own.
func (s *Store) TrustFirstUse(ctx context.Context, server, tool string, d toolpin.Definition) (toolpin.Pin, error) {
	var out toolpin.Pin
	err := s.write(ctx, func(tx *sql.Tx) (*wireChange, error) {
		now := millis(time.Now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO tool_pins (server, tool, digest, definition, pinned_at, pinned_by) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (server, tool) DO UPDATE SET digest = excluded.digest, definition = excluded.definition, pinned_at = excluded.pinned_at, pinned_by = excluded.pinned_by
			WHERE tool_pins.digest = ''`,
			server, tool, d.Digest(), string(d.JSON()), now, toolpin.PinnedByFirstUse); err != nil {
			return nil, err
		}
		p, err := s.pin(ctx, tx, server, tool)
		out = p
		return nil, err
	})
	if err != nil {
		return toolpin.Pin{}, s.errf(err, "pinning tool %q of server %q", tool, server)
	}
	return out, nil
}

// Hold records d as server's tool's definition held for approval, for
// reason; the time it was first held is kept while it is the same
// definition.
func (s *Store) Hold(ctx context.Context, server, tool string, d toolpin.Definition, reason string) (toolpin.Pin, error) {
	var out toolpin.Pin
	err := s.write(ctx, func(tx *sql.Tx) (*wireChange, error) {
		digest := d.Digest()
		if _, err := tx.ExecContext(ctx, `INSERT INTO tool_pins (server, tool, held_digest, held_definition, held_since, held_reason) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (server, tool) DO UPDATE SET held_digest = excluded.held_digest, held_definition = excluded.held_definition,
				held_since = CASE WHEN tool_pins.held_digest = excluded.held_digest THEN tool_pins.held_since ELSE excluded.held_since END,
				held_reason = excluded.held_reason`,
			server, tool, digest, string(d.JSON()), millis(time.Now()), reason); err != nil {
			return nil, err
		}
		p, err := s.pin(ctx, tx, server, tool)
		out = p
		return nil, err
	})
	if err != nil {
		return toolpin.Pin{}, s.errf(err, "holding tool %q of server %q", tool, server)
	}
	return out, nil
}

// ClearHeld forgets the definition held for server's tool (the server
// declares its trusted one again).
func (s *Store) ClearHeld(ctx context.Context, server, tool string) error {
	err := s.write(ctx, func(tx *sql.Tx) (*wireChange, error) {
		if _, err := tx.ExecContext(ctx, `UPDATE tool_pins SET held_digest = '', held_definition = '', held_since = 0, held_reason = '' WHERE server = $1 AND tool = $2`, server, tool); err != nil {
			return nil, err
		}
		// A row that trusts nothing and holds nothing says nothing.
		_, err := tx.ExecContext(ctx, `DELETE FROM tool_pins WHERE server = $1 AND tool = $2 AND digest = ''`, server, tool)
		return nil, err
	})
	if err != nil {
		return s.errf(err, "clearing the held definition of tool %q of server %q", tool, server)
	}
	return nil
}

// Approve trusts the definition held for server's tool, by whom (a person's
// name, for the record), provided it is still the one with digest — the
// one the person was shown. ErrNotFound: nothing is held for the tool;
// ErrConflict: another definition is held now, which the person has not
// seen.
func (s *Store) Approve(ctx context.Context, server, tool, digest, by string) (toolpin.Pin, error) {
	var out toolpin.Pin
	err := s.write(ctx, func(tx *sql.Tx) (*wireChange, error) {
		p, err := s.pin(ctx, tx, server, tool)
		if err != nil {
			return nil, err
		}
		if p.Held == nil {
			return nil, fmt.Errorf("tool %q of server %q holds no definition for approval: %w", tool, server, ErrNotFound)
		}
		if p.Held.Digest != digest {
			return nil, fmt.Errorf("tool %q of server %q: the held definition is %s now, not %s: look at it again: %w", tool, server, p.Held.Digest, digest, ErrConflict)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE tool_pins SET digest = held_digest, definition = held_definition, pinned_at = $3, pinned_by = $4,
			held_digest = '', held_definition = '', held_since = 0, held_reason = '' WHERE server = $1 AND tool = $2`,
			server, tool, millis(time.Now()), by); err != nil {
			return nil, err
		}
		out, err = s.pin(ctx, tx, server, tool)
		return &wireChange{Kind: ChangePins, Server: server}, err
	})
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) {
		return toolpin.Pin{}, err
	}
	if err != nil {
		return toolpin.Pin{}, s.errf(err, "approving tool %q of server %q", tool, server)
	}
	return out, nil
}

// ImportPins trusts each pin's definition (PinnedBy "import"), replacing
// what each tool trusted, all or none: a pin whose digest is not its
// definition's refuses the whole import, naming it. A held definition
// that an imported pin trusts is no longer held.
func (s *Store) ImportPins(ctx context.Context, pins []toolpin.Pin) error {
	for _, p := range pins {
		if err := p.Check(); err != nil {
			return err
		}
	}
	err := s.write(ctx, func(tx *sql.Tx) (*wireChange, error) {
		now := millis(time.Now())
		for _, p := range pins {
			d, _ := toolpin.Parse(p.Definition) // Check parsed it
			if _, err := tx.ExecContext(ctx, `INSERT INTO tool_pins (server, tool, digest, definition, pinned_at, pinned_by) VALUES ($1, $2, $3, $4, $5, $6)
				ON CONFLICT (server, tool) DO UPDATE SET digest = excluded.digest, definition = excluded.definition, pinned_at = excluded.pinned_at, pinned_by = excluded.pinned_by`,
				p.Server, p.Tool, d.Digest(), string(d.JSON()), now, toolpin.PinnedByImport); err != nil {
				return nil, err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE tool_pins SET held_digest = '', held_definition = '', held_since = 0, held_reason = ''
				WHERE server = $1 AND tool = $2 AND held_digest = digest`, p.Server, p.Tool); err != nil {
				return nil, err
			}
		}
		return &wireChange{Kind: ChangePins}, nil
	})
	if err != nil {
		return s.errf(err, "importing tool pins")
	}
	return nil
}

// DeletePins forgets the pins of server's tool, or of all its tools when
// tool is "", and returns how many it forgot: the next definition seen is
// trusted again under first-use, or held under approve.
func (s *Store) DeletePins(ctx context.Context, server, tool string) (int, error) {
	var n int64
	err := s.write(ctx, func(tx *sql.Tx) (*wireChange, error) {
		q, args := `DELETE FROM tool_pins WHERE server = $1`, []any{server}
		if tool != "" {
			q, args = q+` AND tool = $2`, append(args, tool)
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		n, _ = res.RowsAffected()
		return &wireChange{Kind: ChangePins, Server: server}, nil
	})
	if err != nil {
		return 0, s.errf(err, "forgetting the pins of server %q", server)
	}
	return int(n), nil
}
