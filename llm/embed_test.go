package llm_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/llm"
)

// TestEmbedder: both wire formats, against servers answering as Ollama's
// /api/embed and OpenAI's /v1/embeddings do (OpenAI's data in any order,
// by index); a failure names the status and the server's words, never the
// key.
func TestEmbedder(t *testing.T) {
	const key = "sk-embed-secret-77"
	mux := http.NewServeMux()
	var gotAuth string
	read := func(r *http.Request) (model string, input []string) {
		var in struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		gotAuth = r.Header.Get("Authorization")
		return in.Model, in.Input
	}
	mux.HandleFunc("POST /api/embed", func(w http.ResponseWriter, r *http.Request) {
		model, input := read(r)
		out := map[string]any{"model": model, "embeddings": [][]float32{}}
		for i := range input {
			out["embeddings"] = append(out["embeddings"].([][]float32), []float32{float32(i), 1})
		}
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("POST /v1/embeddings", func(w http.ResponseWriter, r *http.Request) {
		model, input := read(r)
		if model == "missing" {
			http.Error(w, `{"error":{"message":"model missing not found"}}`, http.StatusNotFound)
			return
		}
		var data []map[string]any
		for i := len(input) - 1; i >= 0; i-- { // reversed: order is by index
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": []float32{float32(i), 2}})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": model})
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()

	for _, c := range []struct {
		kind, base string
		second     float32
	}{{llm.EmbedOllama, ts.URL, 1}, {llm.EmbedOpenAI, ts.URL + "/v1", 2}} {
		e, err := llm.NewEmbedder(llm.EmbedConfig{Kind: c.kind, BaseURL: c.base, Model: "m", APIKey: key})
		if err != nil {
			t.Fatal(err)
		}
		vecs, err := e.Embed(context.Background(), []string{"a", "b", "c"})
		if err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		for i, v := range vecs {
			if len(v) != 2 || v[0] != float32(i) || v[1] != c.second {
				t.Errorf("%s: vector %d = %v", c.kind, i, v)
			}
		}
		if gotAuth != "Bearer "+key {
			t.Errorf("%s: Authorization = %q", c.kind, gotAuth)
		}
	}
	e, _ := llm.NewEmbedder(llm.EmbedConfig{Kind: llm.EmbedOpenAI, BaseURL: ts.URL + "/v1", Model: "missing", APIKey: key})
	_, err := e.Embed(context.Background(), []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "HTTP 404") || !strings.Contains(err.Error(), "model missing not found") || strings.Contains(err.Error(), key) {
		t.Errorf("Embed with a missing model: %v; want HTTP 404 and the server's message, without the key", err)
	}
	for _, bad := range []llm.EmbedConfig{{Kind: "bert", BaseURL: ts.URL, Model: "m"}, {Kind: llm.EmbedOllama, BaseURL: "ftp://x", Model: "m"}, {Kind: llm.EmbedOllama, BaseURL: ts.URL}} {
		if _, err := llm.NewEmbedder(bad); err == nil {
			t.Errorf("NewEmbedder(%+v) succeeded", bad)
		}
	}
}
