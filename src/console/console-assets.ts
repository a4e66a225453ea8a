/**
 * The console's style and script, served by the binary at /console/assets/ (nothing is fetched
 * from elsewhere: it works offline, and the content security policy allows only these). The
 * script is progressive enhancement: every page works without it. It asks before a destructive
 * form is sent (`data-confirm`), and refreshes the parts of a page that follow the proxy live
 * (`data-refresh`: a URL on this origin answering an HTML fragment, every few seconds).
 */
export const CONSOLE_CSS = `
:root{--fg:#1b1f24;--muted:#5b6470;--line:#dde1e6;--bg:#fbfbfc;--panel:#fff;--accent:#1f5fbf;--ok:#17803d;--warn:#9a6700;--bad:#b42318}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:var(--fg);background:var(--bg)}
header{display:flex;flex-wrap:wrap;gap:.5rem 1.25rem;align-items:center;padding:.6rem 1.25rem;background:#16202e;color:#fff}
header .brand{font-weight:700;margin-right:.5rem}header small{color:#b8c2cf;font-weight:400}
header nav{display:flex;flex-wrap:wrap;gap:.25rem;flex:1}
header nav a{color:#dfe6ee;text-decoration:none;padding:.35rem .7rem;border-radius:6px}
header nav a[aria-current=page]{background:#2c3b52;color:#fff}
header nav a:hover{background:#243247}
header button.quiet{background:transparent;color:#dfe6ee;border:1px solid #4a5a70}
main{max-width:78rem;margin:0 auto;padding:1rem 1.25rem 3rem}main.narrow{max-width:36rem;padding-top:3rem}
h1{font-size:1.4rem;margin:.5rem 0 1rem}h2{font-size:1.1rem;margin:1.75rem 0 .5rem}
a{color:var(--accent)}
:focus-visible{outline:3px solid #f0b429;outline-offset:2px}
.badge{display:inline-block;min-width:1.4em;padding:0 .4em;border-radius:1em;background:#e5484d;color:#fff;font-size:.8em;text-align:center}
.flash{padding:.6rem .9rem;border-radius:6px;background:#e6f4ea;border:1px solid #b7dfc2}
.flash-error{background:#fdecea;border-color:#f5c2bd}
.table-wrap{overflow-x:auto;background:var(--panel);border:1px solid var(--line);border-radius:8px}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.45rem .65rem;border-bottom:1px solid var(--line);vertical-align:top}
thead th{background:#eef1f4}th{font-weight:600;white-space:nowrap}tr:last-child td,tr:last-child th{border-bottom:0}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.state{font-weight:600;white-space:nowrap}.state-connected{color:var(--ok)}.state-disabled,.state-awaiting-approval,.state-lazy{color:var(--muted)}
.state-failed,.state-needs-login{color:var(--bad)}.state-connecting,.state-restarting{color:var(--warn)}
.error{color:var(--bad);font-size:.9em}.hint{color:var(--muted);font-size:.9em}
form.inline{display:inline}form.row{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
button,select,input,textarea{font:inherit}
button{padding:.3rem .8rem;border-radius:6px;border:1px solid #b9c2cc;background:#fff;cursor:pointer}
button:hover{background:#f1f4f7}button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
a.button{display:inline-block;padding:.45rem 1rem;border-radius:6px;text-decoration:none}a.button.primary{background:var(--accent);color:#fff}
button.danger{color:var(--bad);border-color:#e8b4ae}
.actions{display:flex;flex-wrap:wrap;gap:.35rem}td .actions{flex-wrap:nowrap}
input[type=search],input[type=text],textarea,select{padding:.4rem .5rem;border:1px solid #b9c2cc;border-radius:6px;background:#fff}
input[type=search]{flex:1;min-width:12rem}
.card{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:.8rem 1rem;margin:.75rem 0}
.card h3{font-size:1rem;margin:0 0 .35rem}.meta{color:var(--muted);font-size:.9em}
pre{background:#f3f5f7;border:1px solid var(--line);border-radius:6px;padding:.6rem .75rem;overflow-x:auto;font-size:.88em;white-space:pre-wrap;word-break:break-word}
pre.log{max-height:24rem;overflow-y:auto;white-space:pre}
.diff-add{color:var(--ok)}.diff-del{color:var(--bad)}
.finding{color:var(--bad);font-weight:600}
.matched mark{background:#fff1b8;padding:0 .15em;border-radius:3px}
.figures{display:flex;flex-wrap:wrap;gap:.75rem}.figure{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:.6rem .9rem;min-width:9rem}
.figure b{display:block;font-size:1.3rem}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(16rem,1fr));gap:.6rem 1rem}
label.field{display:flex;flex-direction:column;gap:.2rem;font-size:.92em}label.field input,label.field textarea{width:100%}
details{margin:.6rem 0}summary{cursor:pointer;color:var(--accent)}
svg.chart{width:100%;height:auto;max-height:12rem;background:var(--panel);border:1px solid var(--line);border-radius:8px}
svg.chart .bar{fill:#4c84d9}svg.chart .bar-bad{fill:#e5484d}svg.chart text{font-size:11px;fill:var(--muted)}
@media (max-width:40rem){main{padding:.75rem}th,td{padding:.35rem .45rem}header{padding:.5rem .75rem}header nav{order:3;flex-basis:100%}header nav a{white-space:nowrap}}
header form{margin-left:auto}
`;

export const CONSOLE_JS = `
document.addEventListener("submit", function (event) {
  var form = event.target;
  var question = form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});
function refresh() {
  document.querySelectorAll("[data-refresh]").forEach(function (part) {
    fetch(part.getAttribute("data-refresh"), { credentials: "same-origin" })
      .then(function (answer) { return answer.ok ? answer.text() : null; })
      .then(function (text) { if (text !== null) part.innerHTML = text; })
      .catch(function () {});
  });
}
if (document.querySelector("[data-refresh]")) setInterval(refresh, 5000);
`;

/** The tab's icon: three lines joined into one (many servers, one proxy). */
export const CONSOLE_ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#16202e"/>' +
  '<path d="M7 9h7l4 7-4 7H7M18 16h7" stroke="#4c84d9" stroke-width="3" fill="none" stroke-linecap="round" stroke-linejoin="round"/></svg>';
