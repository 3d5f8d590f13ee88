package api_test

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/switchboardmcp/switchboard/api"
)

// exchange is one request and its answer as a test saw them.
type exchange struct {
	req     *http.Request
	reqBody []byte
	resp    *http.Response
	body    []byte // nil for an event stream: only its status and type are checked
}

// recorder is an http.RoundTripper keeping every exchange, to validate
// them against the OpenAPI document when the test ends.
type recorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	seen []exchange
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	resp, err := r.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	ex := exchange{req: req, reqBody: reqBody, resp: resp}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		ex.body = b
	}
	r.mu.Lock()
	r.seen = append(r.seen, ex)
	r.mu.Unlock()
	return resp, nil
}

var openapiValidator = sync.OnceValues(func() (validator.Validator, error) {
	b, err := api.OpenAPI()
	if err != nil {
		return nil, err
	}
	doc, err := libopenapi.NewDocument(b)
	if err != nil {
		return nil, err
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return v, nil
})

// recordAPI makes every request of a go through a recorder, and at the end
// of the test validates each exchange against the OpenAPI document: the
// answer (its status, content type, headers and body) must be one the
// document describes, and a request the API accepted (2xx) must be one
// it describes too.
func recordAPI(t testing.TB) *http.Client {
	rec := &recorder{base: http.DefaultTransport}
	t.Cleanup(func() {
		v, err := openapiValidator()
		if err != nil {
			t.Fatalf("the OpenAPI document: %v", err)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for _, ex := range rec.seen {
			checkExchange(t, v, ex)
		}
	})
	return &http.Client{Transport: rec}
}

func checkExchange(t testing.TB, v validator.Validator, ex exchange) {
	t.Helper()
	req := ex.req.Clone(ex.req.Context())
	req.Body = io.NopCloser(bytes.NewReader(ex.reqBody))
	resp := *ex.resp
	resp.Body = io.NopCloser(bytes.NewReader(ex.body))
	name := req.Method + " " + req.URL.RequestURI()
	if ok, errs := v.ValidateHttpResponse(req, &resp); !ok {
		for _, e := range errs {
			t.Errorf("%s: %d answer not as the OpenAPI document says: %s (%s)\n%s", name, resp.StatusCode, e.Message, e.Reason, ex.body)
		}
	}
	if resp.StatusCode/100 == 2 {
		req.Body = io.NopCloser(bytes.NewReader(ex.reqBody))
		if ok, errs := v.ValidateHttpRequest(req); !ok {
			for _, e := range errs {
				t.Errorf("%s: accepted (%d), but the request is not as the OpenAPI document says: %s (%s)\n%s", name, resp.StatusCode, e.Message, e.Reason, ex.reqBody)
			}
		}
	}
}

// TestOpenAPIDocument: the document is served, is valid OpenAPI 3.1, and
// describes every route api.New registers (read from its source, so a
// route added without its description fails here).
func TestOpenAPIDocument(t *testing.T) {
	v, err := openapiValidator()
	if err != nil {
		t.Fatal(err)
	}
	if ok, errs := v.ValidateDocument(); !ok {
		for _, e := range errs {
			t.Errorf("the OpenAPI document: %s: %s", e.Message, e.Reason)
		}
	}
	b, _ := api.OpenAPI()
	doc, _ := libopenapi.NewDocument(b)
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	if model.Model.Version != "3.1.0" {
		t.Errorf("openapi: %q, want 3.1.0", model.Model.Version)
	}
	src, err := os.ReadFile("api.go")
	if err != nil {
		t.Fatal(err)
	}
	routes := regexp.MustCompile(`a\.handle\("([A-Z]+) "\+p\+"(/[^"]+)"`).FindAllSubmatch(src, -1)
	if len(routes) < 30 {
		t.Fatalf("found %d routes in api.go; the pattern no longer matches its registrations", len(routes))
	}
	for _, m := range routes {
		method, path := string(m[1]), string(m[2])
		item := model.Model.Paths.PathItems.GetOrZero(path)
		if item == nil {
			t.Errorf("%s %s: not in the OpenAPI document", method, path)
			continue
		}
		if item.GetOperations().GetOrZero(strings.ToLower(method)) == nil {
			t.Errorf("%s %s: the path is in the OpenAPI document, not the method", method, path)
		}
	}
	var documented []string
	for path, item := range model.Model.Paths.PathItems.FromOldest() {
		for method := range item.GetOperations().FromOldest() {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	for _, d := range documented {
		if !slices.ContainsFunc(routes, func(m [][]byte) bool { return string(m[1])+" "+string(m[2]) == d }) {
			t.Errorf("%s: in the OpenAPI document, not served", d)
		}
	}

	a := startAPI(t)
	code, h, body := a.do("GET", "/api/v1/openapi.json", "")
	if code != 200 || h.Get("Content-Type") != "application/json" || !bytes.Equal(body, b) {
		t.Errorf("GET /api/v1/openapi.json: %d %s, want the document", code, h.Get("Content-Type"))
	}
}
