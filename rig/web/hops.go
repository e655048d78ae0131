package web

import "net/http"

// The hop changes wait for the hop-change API of profiles and emulator.
func (s *Server) getHops(w http.ResponseWriter, r *http.Request)    { notYet(w) }
func (s *Server) getHop(w http.ResponseWriter, r *http.Request)     { notYet(w) }
func (s *Server) patchHop(w http.ResponseWriter, r *http.Request)   { notYet(w) }
func (s *Server) postOutage(w http.ResponseWriter, r *http.Request) { notYet(w) }

func notYet(w http.ResponseWriter) {
	writeError(w, http.StatusNotImplemented, "changing hops live waits for the hop-change API of profiles and emulator", "")
}
