package fakegithub

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// docsRoot is the documentation_url GitHub gives for errors not tied to one
// endpoint (authentication, unknown routes).
const docsRoot = "https://docs.github.com/rest"

// obj is a JSON object as GitHub returns it; nil values encode as null.
type obj = map[string]any

// fieldError is one entry of a 422 "Validation Failed" errors array.
type fieldError struct {
	Resource string `json:"resource"`
	Code     string `json:"code"`
	Field    string `json:"field"`
	Message  string `json:"message,omitempty"`
}

// errorResponse is GitHub's error JSON: message, documentation_url and the
// status as a string.
func errorResponse(status int, message, doc string) *response {
	return jsonResponse(status, obj{
		"message":           message,
		"documentation_url": doc,
		"status":            strconv.Itoa(status),
	})
}

// validationFailed is GitHub's 422 for a model validation error.
func validationFailed(doc string, errs ...fieldError) *response {
	return jsonResponse(http.StatusUnprocessableEntity, obj{
		"message":           "Validation Failed",
		"errors":            errs,
		"documentation_url": doc,
		"status":            "422",
	})
}

// invalidRequest is GitHub's 422 for a request that fails the endpoint's
// JSON schema; the detail follows two newlines, as GitHub writes it.
func invalidRequest(doc, detail string) *response {
	return errorResponse(http.StatusUnprocessableEntity, "Invalid request.\n\n"+detail, doc)
}

// tooLong is the schema error for a string over its maximum length.
func tooLong(doc string, max, got int) *response {
	return invalidRequest(doc, fmt.Sprintf("Only %d characters are allowed; %d were supplied.", max, got))
}

// notSupplied is the schema error for a missing required property.
func notSupplied(doc, field string) *response {
	return invalidRequest(doc, fmt.Sprintf("%q wasn't supplied.", field))
}

// jsonResponse encodes v as the body of a response.
func jsonResponse(status int, v any) *response {
	body, err := json.Marshal(v)
	if err != nil {
		body = []byte(`{"message":"Server Error"}`)
		status = http.StatusInternalServerError
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	return &response{status: status, header: h, body: body}
}

// noContent is an empty 204 reply.
func noContent() *response {
	return &response{status: http.StatusNoContent, header: http.Header{}}
}

// decodeBody parses a JSON request body the way GitHub reports problems:
// 400 "Problems parsing JSON" for malformed JSON, 422 for a wrong type. An
// empty body decodes as an empty object.
func decodeBody(body []byte, doc string, v any) *response {
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	err := json.Unmarshal(body, v)
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return invalidRequest(doc, fmt.Sprintf("For 'properties/%s', %s is not %s.", typeErr.Field, typeErr.Value, jsonKind(typeErr.Type.Kind().String())))
	}
	return errorResponse(http.StatusBadRequest, "Problems parsing JSON", doc)
}

// jsonKind names a Go kind as a JSON schema type with its article.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	case "bool":
		return "a boolean"
	default:
		return "a number"
	}
}
