package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// openaiRequest is what the fake reads of a Responses API request.
type openaiRequest struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	Input  []struct {
		Type string `json:"type"`
		// Tools are those of an additional_tools item.
		Tools []openaiTool `json:"tools"`
	} `json:"input"`
	Tools []openaiTool `json:"tools"`
}

// openaiTool is a tool offered to the model, or a namespace of them.
type openaiTool struct {
	Type  string       `json:"type"`
	Name  string       `json:"name"`
	Tools []openaiTool `json:"tools"`
}

// toolNames are the names of the tools offered, at the top level and in
// the namespaces of additional_tools items (where codex puts its tools),
// namespaces flattened.
func (r openaiRequest) toolNames() []string {
	var names []string
	var walk func([]openaiTool)
	walk = func(ts []openaiTool) {
		for _, t := range ts {
			if t.Type == "namespace" {
				walk(t.Tools)
				continue
			}
			names = append(names, t.Name)
		}
	}
	walk(r.Tools)
	for _, it := range r.Input {
		if it.Type == "additional_tools" {
			walk(it.Tools)
		}
	}
	return names
}

// toolResults counts the outputs of tool calls in the conversation.
func (r openaiRequest) toolResults() int {
	n := 0
	for _, it := range r.Input {
		switch it.Type {
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			n++
		}
	}
	return n
}

// openaiResponses answers POST /v1/responses, streamed: codex asks for
// nothing else.
func (s *Server) openaiResponses(w http.ResponseWriter, r *http.Request) {
	var req openaiRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		s.fail("responses: decode request: %v", err)
		writeJSON(w, http.StatusBadRequest, openaiError(err.Error()))
		return
	}
	tools := req.toolNames()
	step, st := -1, Step{Text: "ok"}
	if len(tools) > 0 {
		i, next, err := s.step(req.toolResults(), tools)
		if err != nil {
			s.fail("responses: %v", err)
			writeJSON(w, http.StatusBadRequest, openaiError("fakemodel: "+err.Error()))
			return
		}
		step, st = i, next
	}
	answered(w, step)
	n := len(s.Requests())
	respID := fmt.Sprintf("resp_fake_%d", n)
	var items []map[string]any
	if st.Text != "" {
		items = append(items, map[string]any{"type": "message", "id": fmt.Sprintf("msg_fake_%d", n), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": st.Text, "annotations": []any{}}}})
	}
	if st.Tool != "" && st.Raw != "" {
		items = append(items, map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_fake_%d", n), "call_id": fmt.Sprintf("call_fake_%d", step),
			"name": st.Tool, "input": st.Raw, "status": "completed"})
	} else if st.Tool != "" {
		args, _ := json.Marshal(st.Input)
		items = append(items, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_fake_%d", n), "call_id": fmt.Sprintf("call_fake_%d", step),
			"name": st.Tool, "arguments": string(args), "status": "completed"})
	}
	usage := map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": 10,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 20}
	resp := map[string]any{"id": respID, "object": "response", "status": "completed", "model": req.Model, "output": items, "usage": usage}
	if !req.Stream {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	writeEvent(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": respID, "object": "response", "status": "in_progress", "model": req.Model, "output": []any{}}})
	for i, it := range items {
		writeEvent(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i, "item": it})
		writeEvent(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	writeEvent(w, "response.completed", map[string]any{"type": "response.completed", "response": resp})
}

func openaiError(msg string) map[string]any {
	return map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": msg}}
}
