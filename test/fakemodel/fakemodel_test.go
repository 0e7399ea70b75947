package fakemodel

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url, key, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// events reads a server-sent event stream into its data objects.
func events(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				t.Fatalf("event data %q: %v", d, err)
			}
			out = append(out, m)
		}
	}
	return out
}

func TestAnthropicWalksTheScript(t *testing.T) {
	s := New([]Step{
		{Tool: "Write", Input: map[string]any{"file_path": "/out/tests/test_a.py", "content": "x"}},
		{Text: "done"},
	}, WithKey("k"))
	defer s.Close()

	first := `{"model":"m","stream":true,"tools":[{"name":"Write"}],"messages":[{"role":"user","content":"go"}]}`
	resp := post(t, s.URL+"/v1/messages?beta=true", "k", first)
	evs := events(t, resp.Body)
	resp.Body.Close()
	var types []string
	var partial string
	for _, e := range evs {
		types = append(types, e["type"].(string))
		if d, ok := e["delta"].(map[string]any); ok && d["type"] == "input_json_delta" {
			partial = d["partial_json"].(string)
		}
	}
	want := "message_start content_block_start content_block_delta content_block_stop message_delta message_stop"
	if strings.Join(types, " ") != want {
		t.Errorf("events %q, want %q", types, want)
	}
	if !strings.Contains(partial, `"file_path":"/out/tests/test_a.py"`) {
		t.Errorf("tool input %q", partial)
	}

	second := `{"model":"m","tools":[{"name":"Write"}],"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_fake_0","name":"Write","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_fake_0","content":"ok"}]}]}`
	resp = post(t, s.URL+"/v1/messages", "k", second)
	var msg struct {
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type, Text string
		} `json:"content"`
	}
	json.NewDecoder(resp.Body).Decode(&msg)
	resp.Body.Close()
	if msg.StopReason != "end_turn" || len(msg.Content) != 1 || msg.Content[0].Text != "done" {
		t.Errorf("final message %+v, want the script's text", msg)
	}

	resp = post(t, s.URL+"/v1/messages", "wrong", first)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong key got %d, want 401", resp.StatusCode)
	}
	reqs := s.Requests()
	if len(reqs) != 3 || reqs[0].Step != 0 || reqs[1].Step != 1 || reqs[2].Step != -1 || reqs[2].Key != "wrong" {
		t.Errorf("requests recorded as %+v", reqs)
	}
	if errs := s.Errors(); len(errs) != 0 {
		t.Errorf("errors %q", errs)
	}
}

func TestAnthropicRefusesAToolTheCLIDoesNotOffer(t *testing.T) {
	s := New([]Step{{Tool: "Write", Input: map[string]any{}}})
	defer s.Close()
	resp := post(t, s.URL+"/v1/messages", "", `{"model":"m","tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"}]}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("got %d, want 400", resp.StatusCode)
	}
	if errs := s.Errors(); len(errs) != 1 || !strings.Contains(errs[0], `"Write"`) {
		t.Errorf("errors %q, want the missing tool named", errs)
	}
}

func TestOpenAIWalksTheScript(t *testing.T) {
	s := New([]Step{{Tool: "shell", Input: map[string]any{"command": []string{"true"}}}, {Text: "done"}})
	defer s.Close()
	resp := post(t, s.URL+"/v1/responses", "", `{"model":"m","stream":true,"tools":[{"type":"function","name":"shell"}],"input":[{"type":"message"}]}`)
	evs := events(t, resp.Body)
	resp.Body.Close()
	var call map[string]any
	for _, e := range evs {
		if e["type"] == "response.output_item.done" {
			call = e["item"].(map[string]any)
		}
	}
	if call == nil || call["type"] != "function_call" || call["name"] != "shell" || evs[len(evs)-1]["type"] != "response.completed" {
		t.Fatalf("events %v", evs)
	}
	resp = post(t, s.URL+"/v1/responses", "", `{"model":"m","stream":true,"tools":[{"type":"function","name":"shell"}],"input":[{"type":"message"},{"type":"function_call"},{"type":"function_call_output"}]}`)
	evs = events(t, resp.Body)
	resp.Body.Close()
	if s.Requests()[1].Step != 1 || !strings.Contains(mustJSON(evs), `"output_text"`) {
		t.Errorf("second answer %v, want the final text", evs)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
