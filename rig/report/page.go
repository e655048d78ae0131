package report

// pageHTML is the report's template: one page, its style inline, its plots
// inline SVG, no script.
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}{{if .Judged}}: {{if .Failed}}{{.Failed}} of {{.Judged}} failed{{else}}all {{.Judged}} passed{{end}}{{end}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 62em; padding: 0 1em; color: #222; }
h1 { margin-bottom: 0.2em; }
h2 { border-top: 1px solid #ccc; padding-top: 1em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.pass { color: #17752b; }
.fail { color: #b3141b; }
.verdict { font-weight: bold; }
.note { color: #666; font-size: 0.9em; }
figure { margin: 1.2em 0; }
figure svg { width: 100%; height: auto; }
figcaption { color: #555; font-size: 0.88em; }
code { font-size: 0.95em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{with .Description}}<p>{{.}}</p>{{end}}
{{with .Source}}<p class="note">from {{.}}</p>{{end}}
{{with .Note}}<p class="verdict">{{.}}</p>{{end}}
{{if .Judged}}<p class="verdict {{if .Failed}}fail{{else}}pass{{end}}">{{if .Failed}}FAIL: {{.Failed}} of {{.Judged}} failed{{else}}PASS: all {{.Judged}} passed{{end}}</p>
<table>
<tr><th>run</th><th>verdict</th><th>time</th></tr>
{{range .Views}}<tr><td><a href="#{{.ID}}">{{.Name}}</a></td>{{if .Passed}}{{if deref .Passed}}<td class="pass">pass</td>{{else}}<td class="fail">fail</td>{{end}}{{else}}<td></td>{{end}}<td class="num">{{with .Verdict}}{{printf "%.2f s" .ElapsedS}}{{end}}</td></tr>
{{end}}</table>{{end}}
{{range .Views}}
<section id="{{.ID}}">
<h2>{{if .Passed}}{{if deref .Passed}}<span class="pass">✔</span>{{else}}<span class="fail">✘</span>{{end}} {{end}}{{.Name}}</h2>
{{with .Verdict}}{{with .Description}}<p>{{.}}</p>{{end}}{{end}}
<p class="note">{{.Facts}}</p>
{{with .Verdict}}
{{with .Error}}<p class="fail">The run failed: {{.}}</p>{{end}}
{{range .Unwritten}}<p class="fail">Not written: {{.}}</p>{{end}}
{{if .Expect}}<table>
<tr><th></th><th>expectation</th><th>measured</th><th>limit</th></tr>
{{range .Expect}}<tr class="{{if .OK}}pass{{else}}fail{{end}}"><td>{{if .OK}}✔{{else}}✘{{end}}</td><td><code>{{.Text}}</code></td><td class="num">{{if .Measured}}{{.Measured}}{{else}}{{.Detail}}{{end}}</td><td class="num">{{.Limit}}</td></tr>
{{end}}</table>{{end}}
{{if .Script}}<table>
<tr><th></th><th>script step</th><th>what happened</th></tr>
{{range .Script}}<tr class="{{if .OK}}pass{{else}}fail{{end}}"><td>{{if .OK}}✔{{else}}✘{{end}}</td><td>{{.Text}}</td><td>{{.Detail}}</td></tr>
{{end}}</table>{{end}}
{{end}}
{{if .Flows}}<table>
<tr><th>flow</th><th>sent</th><th>delivered</th><th>lost</th><th>in flight</th><th>delay min</th><th>p50</th><th>p95</th><th>p99</th><th>max</th></tr>
{{range .Flows}}<tr>{{range $i, $c := .}}<td{{if $i}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table>{{end}}
{{if .Models}}<table>
<tr><th>model endpoint</th><th>model</th><th>cut</th><th>exchanges</th><th>output</th><th>max error vs uncut</th><th>of its peak</th></tr>
{{range .Models}}<tr>{{range $i, $c := .}}<td{{if gt $i 2}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table>{{end}}
{{if .Timing}}<table>
{{range .Timing}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{end}}</table>{{end}}
{{range .Figures}}<figure>
{{svg .SVG}}
<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}
{{range .PlotProblem}}<p class="note">{{.}}</p>
{{end}}
</section>
{{end}}
</body>
</html>
`
