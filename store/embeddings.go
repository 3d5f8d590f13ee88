package store

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
)

// Embeddings: the vectors an embeddings provider computed for tool
// definitions (search mode, package toolsearch), by model and the
// definition's digest, so that a tool is embedded once across restarts
// and replicas. A vector is kept as base64 of its float32s, little-endian:
// TEXT on both backends. *Store is a toolsearch.Cache.

// maxVector bounds one vector's dimensions: the largest embedding models
// have a few thousand; more is not a vector this table should keep.
const maxVector = 16384

// Vectors returns the vectors saved for model of those of digests it has,
// by digest.
func (s *Store) Vectors(ctx context.Context, model string, digests []string) (map[string][]float32, error) {
	want := make(map[string]bool, len(digests))
	for _, d := range digests {
		want[d] = true
	}
	rows, err := s.db.QueryContext(ctx, `SELECT digest, vector FROM tool_embeddings WHERE model = $1`, model)
	if err != nil {
		return nil, s.errf(err, "reading the embeddings of model %q", model)
	}
	defer rows.Close()
	out := map[string][]float32{}
	for rows.Next() {
		var digest, enc string
		if err := rows.Scan(&digest, &enc); err != nil {
			return nil, s.errf(err, "reading the embeddings of model %q", model)
		}
		if !want[digest] {
			continue
		}
		v, err := decodeVector(enc)
		if err != nil {
			return nil, fmt.Errorf("store: the embedding of %s (model %q): %w", digest, model, err)
		}
		out[digest] = v
	}
	if err := rows.Err(); err != nil {
		return nil, s.errf(err, "reading the embeddings of model %q", model)
	}
	return out, nil
}

// SaveVectors saves vectors for model, by digest, replacing any saved.
func (s *Store) SaveVectors(ctx context.Context, model string, vectors map[string][]float32) error {
	for d, v := range vectors {
		if len(v) == 0 || len(v) > maxVector {
			return fmt.Errorf("store: the embedding of %s (model %q) has %d dimensions, want 1 to %d", d, model, len(v), maxVector)
		}
	}
	now := millis(time.Now())
	return s.write(ctx, func(tx *sql.Tx) (*wireChange, error) {
		for _, d := range slices.Sorted(maps.Keys(vectors)) {
			if _, err := tx.ExecContext(ctx, `INSERT INTO tool_embeddings (model, digest, vector, saved_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (model, digest) DO UPDATE SET vector = excluded.vector, saved_at = excluded.saved_at`,
				model, d, encodeVector(vectors[d]), now); err != nil {
				return nil, s.errf(err, "saving the embeddings of model %q", model)
			}
		}
		return nil, nil
	})
}

func encodeVector(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

func decodeVector(s string) ([]float32, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 || len(b) == 0 || len(b) > 4*maxVector {
		return nil, fmt.Errorf("not a vector")
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
