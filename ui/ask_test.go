package ui_test

import (
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
	"github.com/switchboardmcp/switchboard/ui"
)

// TestTryElicitation: a tool that asks during a try (elicitation) gets
// the page's form, made from what it asks for with its defaults filled in;
// the person's answer goes back to the call, whose result says it; a
// declined question is declined; another browser sees no question.
func TestTryElicitation(t *testing.T) {
	s := serve(t, map[string][]string{"a": nil})
	_, hdr, _ := s.do("GET", "/tools/mcp_a_elicit", nil)
	var cookie string
	for _, c := range (&http.Response{Header: hdr}).Cookies() {
		if c.Name == "switchboard_try" {
			cookie = c.Name + "=" + c.Value
		}
	}
	if cookie == "" {
		t.Fatal("the tool's page set no browser cookie")
	}
	for _, c := range []struct {
		action string
		form   url.Values
		want   []string
	}{
		{"accept", url.Values{"name": {"Grace"}, "age": {"85"}, "subscribe": {"false"}}, []string{`"action":"accept"`, `"name":"Grace"`, `"age":85`, `"subscribe":false`}},
		{"decline", nil, []string{`"action":"decline"`}},
	} {
		type answer struct {
			status int
			body   string
		}
		done := make(chan answer, 1)
		go func() {
			// Not s.do: it may fail the test, which only the test's
			// goroutine may.
			req, _ := http.NewRequest("POST", s.url+"/tools/mcp_a_elicit/call", strings.NewReader(""))
			req.Header.Set(ui.CSRFHeader, "1")
			req.Header.Set("Cookie", cookie)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- answer{0, err.Error()}
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			done <- answer{resp.StatusCode, string(b)}
		}()
		body := wait.For(t, "the question's form", func() (string, bool) {
			status, _, body := s.do("GET", "/tools/mcp_a_elicit/ask", nil, "Cookie", cookie)
			return body, status == http.StatusOK && strings.Contains(body, `id="ask-form"`)
		})
		if !strings.Contains(body, "Please fill in the form.") || !strings.Contains(body, `value="Ada"`) {
			t.Errorf("the question's form lacks its message or a default:\n%s", body)
		}
		if status, _, other := s.do("GET", "/tools/mcp_a_elicit/ask", nil, "Cookie", "switchboard_try=0123456789abcdef0123456789abcdef"); status != http.StatusNoContent {
			t.Errorf("another browser's poll: %d\n%s", status, other)
		}
		id := regexp.MustCompile(`/tools/mcp_a_elicit/ask/(\d+)\?action=accept`).FindStringSubmatch(body)
		ids := map[string]string{}
		for _, m := range regexp.MustCompile(`<label for="(ask-\d+)">([^ <]+)`).FindAllStringSubmatch(body, -1) {
			ids[m[2]] = m[1]
		}
		if id == nil || len(ids) != 3 {
			t.Fatalf("the question's form: id %v, fields %v\n%s", id, ids, body)
		}
		form := url.Values{}
		for k, v := range c.form {
			form[ids[k]] = v
		}
		status, _, _ := s.do("POST", "/tools/mcp_a_elicit/ask/"+id[1]+"?action="+c.action, form, ui.CSRFHeader, "1", "Cookie", cookie)
		if status != http.StatusOK {
			t.Fatalf("%s: %d", c.action, status)
		}
		a := <-done
		res := html.UnescapeString(a.body)
		for _, w := range c.want {
			if a.status != http.StatusOK || !strings.Contains(res, w) {
				t.Errorf("%s: the call's result (%d) lacks %s:\n%s", c.action, a.status, w, a.body)
			}
		}
		// Answered: the question is gone.
		if status, _, _ := s.do("POST", "/tools/mcp_a_elicit/ask/"+id[1]+"?action=accept", form, ui.CSRFHeader, "1", "Cookie", cookie); status != http.StatusConflict {
			t.Errorf("a second answer: %d, want 409", status)
		}
	}
}
