package card

import "github.com/prometheus/client_golang/prometheus"

// metrics count decisions and how long reviews took.
type metrics struct {
	approvals  *prometheus.CounterVec
	review     prometheus.Histogram
	rejections prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		approvals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "testfirst_card_approvals_total",
			Help: "Signatures on hidden-test versions, by whether they came faster than the repository's fast-approval threshold.",
		}, []string{"fast"}),
		review: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "testfirst_card_review_seconds",
			Help:    "Time from a card being ready to its approval.",
			Buckets: []float64{30, 60, 120, 180, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600},
		}),
		rejections: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "testfirst_card_rejections_total",
			Help: "Hidden-test versions rejected on the card.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.approvals, m.review, m.rejections)
	}
	return m
}
