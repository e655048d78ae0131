package web

import (
	"embed"
	"io/fs"
	"net/http"
)

// The dashboard is plain HTML, CSS and JavaScript with its plots drawn on
// canvases by hand (dashboard/plot.js): no chart library, no build step,
// nothing fetched from elsewhere, so it works offline.
//
//go:embed dashboard
var dashboardFiles embed.FS

func dashboard() http.Handler {
	files, err := fs.Sub(dashboardFiles, "dashboard")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	static := http.FileServerFS(files)
	return methods{http.MethodGet: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		static.ServeHTTP(w, r)
	}}
}
