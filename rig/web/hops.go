package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/hilrig/hilrig/emulator/suggest"
	"github.com/hilrig/hilrig/rig/record"
)

// hopIndex finds a hop by name, or answers 404 naming the hops there are.
func (s *Server) hopIndex(w http.ResponseWriter, name string) (int, bool) {
	hops := s.session.Profile().Hops.Names
	for i, h := range hops {
		if h == name {
			return i, true
		}
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("no hop named %q%s; the hops are %s", name, suggest.DidYouMean(name, hops), strings.Join(hops, ", ")), "hop")
	return 0, false
}

// getHops answers the hops as they are now: their settings and what they
// hold, as of the latest snapshot.
func (s *Server) getHops(w http.ResponseWriter, r *http.Request) {
	var snap record.Snapshot
	s.mon.Read(&snap)
	writeJSON(w, http.StatusOK, message(&snap, "").Hops)
}

func (s *Server) getHop(w http.ResponseWriter, r *http.Request) {
	i, ok := s.hopIndex(w, r.PathValue("hop"))
	if !ok {
		return
	}
	var snap record.Snapshot
	if !s.mon.Read(&snap) || i >= len(snap.Hops) {
		writeError(w, http.StatusServiceUnavailable, "the run has published nothing yet", "")
		return
	}
	writeJSON(w, http.StatusOK, message(&snap, "").Hops[i])
}

// The hop changes wait for the hop-change API of profiles and emulator.
func (s *Server) patchHop(w http.ResponseWriter, r *http.Request)   { notYet(w) }
func (s *Server) postOutage(w http.ResponseWriter, r *http.Request) { notYet(w) }

func notYet(w http.ResponseWriter) {
	writeError(w, http.StatusNotImplemented, "changing hops live waits for the hop-change API of profiles and emulator", "")
}
