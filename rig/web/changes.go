package web

import "net/http"

// The changes wait for the hop-change API of profiles and emulator.
func (s *Server) getProfile(w http.ResponseWriter, r *http.Request) { notYet(w) }
func (s *Server) getHops(w http.ResponseWriter, r *http.Request)    { notYet(w) }
func (s *Server) getHop(w http.ResponseWriter, r *http.Request)     { notYet(w) }
func (s *Server) patchHop(w http.ResponseWriter, r *http.Request)   { notYet(w) }
func (s *Server) postOutage(w http.ResponseWriter, r *http.Request) { notYet(w) }
func (s *Server) postPhase(w http.ResponseWriter, r *http.Request)  { notYet(w) }

type change struct{}

func notYet(w http.ResponseWriter) {
	writeError(w, http.StatusNotImplemented, "not yet", "")
}
