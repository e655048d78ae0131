package report

// pageHTML is the report's template: one page, its style inline, its plots
// inline SVG, no script. A table on top says what passed and failed, with
// a link to each run; below it each run's details, folded (details and
// summary elements) but for those that failed, so that a suite of many
// cases reads at a glance and its page stays short.
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}{{if .Judged}}: {{if .Failed}}{{.Failed}} of {{.Judged}} failed{{else}}all {{.Judged}} passed{{end}}{{end}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 62em; padding: 0 1em; color: #222; }
h1 { margin-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.pass { color: #17752b; }
.fail { color: #b3141b; }
.verdict { font-weight: bold; }
.note { color: #666; font-size: 0.9em; }
details.run { border-top: 1px solid #ccc; padding: 0.5em 0; }
details.run > summary { cursor: pointer; padding: 0.3em 0; }
details.run > summary h2 { display: inline; font-size: 1.25em; margin: 0; }
details.run > summary .note { margin-left: 0.6em; }
.run-body { scroll-margin-top: 3em; }
figure { margin: 1.2em 0; }
figure svg { width: 100%; height: auto; }
figcaption { color: #555; font-size: 0.88em; }
code { font-size: 0.95em; }
{{.PlotStyle}}</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{with .Description}}<p>{{.}}</p>{{end}}
{{with .Source}}<p class="note">from {{.}}</p>{{end}}
{{with .Note}}<p class="verdict">{{.}}</p>{{end}}
{{with .Joined}}<h2>One loop, two sites</h2>
<p>{{.About}}</p>
<table>
<tr>{{range .LinkHead}}<th>{{.}}</th>{{end}}</tr>
{{range .Links}}<tr>{{range $i, $c := .}}<td{{if $i}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table>
{{range .Notes}}<p class="note">{{.}}</p>
{{end}}
{{with .Output}}<p class="verdict">{{.}}</p>{{end}}
{{if .Distortion}}<table>
<tr><th>ω (rad/s)</th><th>distortion measured</th><th>couple predicts</th><th>band</th><th></th></tr>
{{range .Distortion}}<tr>{{range $i, $c := .}}<td class="num">{{$c}}</td>{{end}}</tr>
{{end}}</table>{{end}}
{{with .Verdict}}<p class="verdict">{{.}}</p>{{end}}
{{end}}
{{if .Judged}}<p class="verdict {{if .Failed}}fail{{else}}pass{{end}}">{{if .Failed}}FAIL: {{.Failed}} of {{.Judged}} failed{{else}}PASS: all {{.Judged}} passed{{end}}</p>{{end}}
{{if or .Judged (gt (len .Views) 1)}}<table>
<tr><th></th><th>run</th><th>ran</th><th>wall time</th>{{if .Failed}}<th>what failed</th>{{end}}</tr>
{{range .Views}}<tr class="{{if .Passed}}{{if deref .Passed}}pass{{else}}fail{{end}}{{end}}"><td>{{if .Passed}}{{if deref .Passed}}✔{{else}}✘{{end}}{{end}}</td><td><a href="#{{.ID}}">{{.Name}}</a></td><td class="num">{{.Ran}}</td><td class="num">{{.Took}}</td>{{if $.Failed}}<td>{{with .Failing}}<code>{{.}}</code>{{end}}{{with .MoreFailing}} and {{.}} more{{end}}</td>{{end}}</tr>
{{end}}</table>
<p class="note">ran: the run's own time, virtual or real (a virtual-time run is as fast as the CPU allows); wall time: how long it took. The runs below are folded but for those that failed: click one to unfold it.</p>{{end}}
{{range .Views}}
<details class="run"{{if .Open}} open{{end}}>
<summary><h2>{{if .Passed}}{{if deref .Passed}}<span class="pass">✔</span>{{else}}<span class="fail">✘</span>{{end}} {{end}}{{.Name}}</h2><span class="note">{{.Ran}} time{{with .Took}}, {{.}} of wall time{{end}}</span></summary>
<div class="run-body" id="{{.ID}}">
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
{{.Inline}}
<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}
{{range .PlotProblem}}<p class="note">{{.}}</p>
{{end}}
</div>
</details>
{{end}}
</body>
</html>
`
