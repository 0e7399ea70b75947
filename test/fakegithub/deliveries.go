package fakegithub

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Delivery is one entry of the app's webhook delivery log.
type Delivery struct {
	ID             int64 // 0: the fake picks one
	GUID           string
	DeliveredAt    time.Time // zero: the fake's now
	Redelivery     bool
	Duration       float64 // seconds
	Status         string  // e.g. "OK", "Invalid HTTP Response: 503"
	StatusCode     int
	Event          string
	Action         string
	InstallationID int64
	RepositoryID   int64

	// RequestHeaders, RequestPayload, ResponseHeaders and ResponsePayload
	// appear only when one delivery is fetched.
	RequestHeaders  map[string]string
	RequestPayload  json.RawMessage
	ResponseHeaders map[string]string
	ResponsePayload string
}

// AddDelivery appends a delivery to the app's webhook delivery log and
// returns its id.
func (s *Server) AddDelivery(d Delivery) int64 {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.ID == 0 {
		d.ID = s.newID()
	}
	for _, have := range s.deliveries {
		if have.ID == d.ID {
			s.fatalf("AddDelivery: delivery %d already exists", d.ID)
		}
	}
	if d.DeliveredAt.IsZero() {
		d.DeliveredAt = s.now()
	}
	d.RequestHeaders = cloneMap(d.RequestHeaders)
	d.ResponseHeaders = cloneMap(d.ResponseHeaders)
	d.RequestPayload = slices.Clone(d.RequestPayload)
	s.deliveries = append(s.deliveries, &d)
	return d.ID
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Redeliveries returns the ids of deliveries the app asked GitHub to
// redeliver, in order.
func (s *Server) Redeliveries() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.redeliveries)
}

// deliveryJSON is a delivery as the log lists it; full adds request and
// response.
func deliveryJSON(d *Delivery, full bool) obj {
	out := obj{
		"id":              d.ID,
		"guid":            d.GUID,
		"delivered_at":    ts(d.DeliveredAt),
		"redelivery":      d.Redelivery,
		"duration":        d.Duration,
		"status":          d.Status,
		"status_code":     d.StatusCode,
		"event":           d.Event,
		"action":          strOrNil(d.Action),
		"installation_id": idOrNil(d.InstallationID),
		"repository_id":   idOrNil(d.RepositoryID),
		"throttled_at":    nil,
	}
	if full {
		var payload any
		if len(d.RequestPayload) > 0 {
			payload = d.RequestPayload
		}
		out["url"] = ""
		out["request"] = obj{"headers": nonNilMap(d.RequestHeaders), "payload": payload}
		out["response"] = obj{"headers": nonNilMap(d.ResponseHeaders), "payload": strOrNil(d.ResponsePayload)}
	}
	return out
}

func idOrNil(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// listDeliveries serves GET /app/hook/deliveries: newest first, per_page
// (default 30, at most 100) and an opaque cursor given in the Link header's
// rel="next", like GitHub's cursor pagination.
func (c *call) listDeliveries() *response {
	list := slices.Clone(c.s.deliveries)
	sort.SliceStable(list, func(i, j int) bool { return list[i].ID > list[j].ID })
	q := c.r.URL.Query()
	if status := q.Get("status"); status != "" {
		list = slices.DeleteFunc(list, func(d *Delivery) bool {
			ok := d.StatusCode >= 200 && d.StatusCode < 300
			return (status == "success") != ok
		})
	}
	if cursor := q.Get("cursor"); cursor != "" {
		after, err := strconv.ParseInt(strings.TrimPrefix(cursor, "v1_"), 10, 64)
		if !strings.HasPrefix(cursor, "v1_") || err != nil {
			return invalidRequest(c.doc, "For 'cursor', \""+cursor+"\" is not a valid cursor.")
		}
		i := slices.IndexFunc(list, func(d *Delivery) bool { return d.ID < after })
		if i < 0 {
			i = len(list)
		}
		list = list[i:]
	}
	per := perPage(q)
	page := list[:min(per, len(list))]
	out := make([]obj, 0, len(page))
	for _, d := range page {
		out = append(out, deliveryJSON(d, false))
	}
	resp := jsonResponse(http.StatusOK, out)
	if len(list) > per {
		next := url.Values{}
		next.Set("per_page", strconv.Itoa(per))
		next.Set("cursor", "v1_"+strconv.FormatInt(page[len(page)-1].ID, 10))
		if s := q.Get("status"); s != "" {
			next.Set("status", s)
		}
		resp.header.Set("Link", "<"+c.s.apiURL("app/hook/deliveries")+"?"+next.Encode()+`>; rel="next"`)
	}
	return resp
}

// findDelivery finds the delivery named by the {id} parameter.
func (c *call) findDelivery() *Delivery {
	id, err := strconv.ParseInt(c.params["id"], 10, 64)
	if err != nil {
		return nil
	}
	for _, d := range c.s.deliveries {
		if d.ID == id {
			return d
		}
	}
	return nil
}

// getDelivery serves GET /app/hook/deliveries/{id}.
func (c *call) getDelivery() *response {
	d := c.findDelivery()
	if d == nil {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	return jsonResponse(http.StatusOK, deliveryJSON(d, true))
}

// redeliver serves POST /app/hook/deliveries/{id}/attempts: GitHub accepts
// the request (202) and redelivers later; the fake records the id.
func (c *call) redeliver() *response {
	d := c.findDelivery()
	if d == nil {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	c.s.redeliveries = append(c.s.redeliveries, d.ID)
	return jsonResponse(http.StatusAccepted, obj{})
}
