package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// anthropicRequest is what the fake reads of a Messages API request.
type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role string `json:"role"`
		// Content is a string or a list of blocks.
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// toolResults counts the tool_result blocks of the conversation's user
// messages.
func (r anthropicRequest) toolResults() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role != "user" {
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				n++
			}
		}
	}
	return n
}

// anthropicMessages answers POST /v1/messages.
func (s *Server) anthropicMessages(w http.ResponseWriter, r *http.Request) {
	var req anthropicRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		s.fail("messages: decode request: %v", err)
		writeJSON(w, http.StatusBadRequest, anthropicError("invalid_request_error", err.Error()))
		return
	}
	var tools []string
	for _, t := range req.Tools {
		tools = append(tools, t.Name)
	}
	// A request without tools is a side query (a title, a summary): a
	// short text, outside the script.
	step, st := -1, Step{Text: "ok"}
	if len(tools) > 0 {
		i, next, err := s.step(req.toolResults(), tools)
		if err != nil {
			s.fail("messages: %v", err)
			writeJSON(w, http.StatusBadRequest, anthropicError("invalid_request_error", "fakemodel: "+err.Error()))
			return
		}
		step, st = i, next
	}
	answered(w, step)
	msgID := fmt.Sprintf("msg_fake_%d", len(s.Requests()))
	var content []map[string]any
	if st.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": st.Text})
	}
	stop := "end_turn"
	if st.Tool != "" {
		content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_fake_%d", step), "name": st.Tool, "input": st.Input})
		stop = "tool_use"
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !req.Stream {
		writeJSON(w, http.StatusOK, map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": req.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	writeEvent(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": msgID, "type": "message", "role": "assistant",
		"model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})
	for i, c := range content {
		switch c["type"] {
		case "text":
			writeEvent(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			writeEvent(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": c["text"]}})
		case "tool_use":
			input, _ := json.Marshal(c["input"])
			writeEvent(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": c["id"], "name": c["name"], "input": map[string]any{}}})
			writeEvent(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		}
		writeEvent(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	writeEvent(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}})
	writeEvent(w, "message_stop", map[string]any{"type": "message_stop"})
}

// anthropicCountTokens answers POST /v1/messages/count_tokens with a small
// count.
func (s *Server) anthropicCountTokens(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"input_tokens": 10})
}

func anthropicError(typ, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}
