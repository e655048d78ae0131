package web

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/hilrig/hilrig/rig/record"
)

// What a server takes, so that however many clients ask and however fast,
// every request is answered or refused at once, nothing queues without
// bound, and the rig is asked no more than it can answer beside its run.
// The server is another process than the rig's (see Host): a flood costs
// that process its CPU and memory, which these bound, and never moves a
// release.
const (
	// MaxInFlight bounds the requests served at once (the stream's
	// clients apart, which MaxClients bounds); another is answered 503.
	MaxInFlight = 32
	// ChangesPerSecond bounds the changes made by hand (PATCH, outages,
	// phases), with bursts of as many; another is answered 429.
	ChangesPerSecond = 20
	// FreshFor is how long an answer only the rig has (the summary so
	// far, the profile as it runs) serves the requests that come after
	// it: the rig is asked again no sooner.
	FreshFor = 200 * time.Millisecond
)

// limits are a server's bounds on what it takes.
type limits struct {
	inFlight chan struct{}
	changes  *rate.Limiter
	summary  fresh[*record.Summary]
	profile  fresh[string]
}

func newLimits() limits {
	return limits{inFlight: make(chan struct{}, MaxInFlight), changes: rate.NewLimiter(ChangesPerSecond, ChangesPerSecond)}
}

// admit serves a request if fewer than MaxInFlight are being served, and
// answers 503 at once otherwise; the stream's clients, which stay, are
// bounded by MaxClients instead.
func (l *limits) admit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/stream" {
			next.ServeHTTP(w, r)
			return
		}
		select {
		case l.inFlight <- struct{}{}:
			defer func() { <-l.inFlight }()
			next.ServeHTTP(w, r)
		default:
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusServiceUnavailable, "the server is answering "+strconv.Itoa(MaxInFlight)+" requests already: ask again shortly", "")
		}
	})
}

// change admits a change, or refuses it with 429 beyond ChangesPerSecond.
func (l *limits) change() *errChange {
	if r := l.changes.Reserve(); r.Delay() > 0 {
		r.Cancel()
		return &errChange{code: http.StatusTooManyRequests, msg: "more than " + strconv.Itoa(ChangesPerSecond) + " changes a second: ask again shortly"}
	}
	return nil
}

// fresh is an answer the rig gives, kept for FreshFor: one question at a
// time goes to the rig, and the requests meanwhile wait for its answer.
type fresh[T any] struct {
	mu    sync.Mutex
	at    time.Time
	value T
	err   *errChange
	wait  chan struct{} // closed when the question asked is answered
}

// get returns the answer, asking the rig with ask when the one kept is
// older than FreshFor.
func (f *fresh[T]) get(ctx context.Context, ask func(context.Context) (T, *errChange)) (T, *errChange) {
	for {
		f.mu.Lock()
		if !f.at.IsZero() && time.Since(f.at) < FreshFor {
			v, err := f.value, f.err
			f.mu.Unlock()
			return v, err
		}
		if wait := f.wait; wait != nil {
			f.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				var zero T
				return zero, refuse(http.StatusServiceUnavailable, "", "the rig did not answer in time: %v", ctx.Err())
			}
		}
		f.wait = make(chan struct{})
		f.mu.Unlock()
		v, err := ask(ctx)
		f.mu.Lock()
		f.value, f.err, f.at = v, err, time.Now()
		close(f.wait)
		f.wait = nil
		f.mu.Unlock()
		return v, err
	}
}

// summaryNow is the run's summary so far, or its final one.
func (s *Server) summaryNow(ctx context.Context) (*record.Summary, *errChange) {
	if e := s.run.ending(); e != nil {
		return &e.Summary, nil
	}
	return s.limits.summary.get(ctx, func(ctx context.Context) (*record.Summary, *errChange) {
		a, err := s.run.ask(ctx, linkRequest{Op: "summary"})
		switch {
		case err != nil:
			return nil, refuse(http.StatusServiceUnavailable, "", "the run's summary is not available: %v", err)
		case a.Error != nil:
			return nil, a.Error.change()
		case a.Summary == nil:
			<-s.run.ended
			if e := s.run.ending(); e != nil {
				return &e.Summary, nil
			}
			return nil, refuse(http.StatusServiceUnavailable, "", "the run's summary is not available: the link to the rig is closed")
		}
		return a.Summary, nil
	})
}

// profileNow is the profile as it runs now, or as the run left it.
func (s *Server) profileNow(ctx context.Context) (string, *errChange) {
	if e := s.run.ending(); e != nil {
		return e.Profile, nil
	}
	return s.limits.profile.get(ctx, func(ctx context.Context) (string, *errChange) {
		a, err := s.run.ask(ctx, linkRequest{Op: "profile"})
		switch {
		case err != nil:
			return "", refuse(http.StatusServiceUnavailable, "", "the profile as it runs is not available: %v", err)
		case a.Error != nil:
			return "", a.Error.change()
		}
		return a.Profile, nil
	})
}
