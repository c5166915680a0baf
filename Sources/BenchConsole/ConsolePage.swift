/// The console's one page: plain HTML, CSS and a small script (no CDN, no framework), fed by
/// server-sent events from `/events`. Landmarks and labels for screen readers; every colour has
/// its word (GRANTED, DENIED); readable at 1280×800.
enum ConsolePage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>LockBench console</title>
<style>
  :root { font-family: system-ui, sans-serif; color: #1b1b1b; background: #f6f6f4; }
  body { margin: 0; }
  header { background: #20303c; color: #fff; padding: 0.6rem 1.2rem; display: flex; gap: 1.5rem; align-items: baseline; }
  header h1 { font-size: 1.2rem; margin: 0; }
  #link { font-size: 0.9rem; }
  main { display: grid; grid-template-columns: 22rem 1fr; gap: 1rem; padding: 1rem 1.2rem; }
  section { background: #fff; border: 1px solid #d6d6d2; border-radius: 6px; padding: 0.8rem 1rem; }
  h2 { font-size: 1rem; margin: 0 0 0.6rem 0; }
  dl { margin: 0; display: grid; grid-template-columns: 7rem 1fr; gap: 0.3rem 0.6rem; font-size: 0.92rem; }
  dt { color: #555; }
  table { width: 100%; border-collapse: collapse; font-size: 0.9rem; }
  th, td { text-align: left; padding: 0.3rem 0.4rem; border-bottom: 1px solid #ecece8; vertical-align: top; }
  .decision { font-weight: 700; }
  .granted .decision { color: #0b6b2f; }
  .denied .decision { color: #a3161b; }
  .pass .verdict { color: #0b6b2f; font-weight: 700; }
  .fail .verdict { color: #a3161b; font-weight: 700; }
  .warn .verdict { color: #8a5a00; font-weight: 700; }
  .mono { font-family: ui-monospace, monospace; font-size: 0.85rem; }
  th:last-child { width: 17rem; }
  td.apdus ol { margin: 0.3rem 0 0 0; padding-left: 1.2rem; font-size: 0.8rem; }
  pre.opened { margin: 0.15rem 0 0.3rem 0; padding: 0.3rem; background: #f3f3ee; font-size: 0.75rem; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 9rem; overflow-y: auto; }
  #radio { max-height: 14rem; overflow-y: auto; font-size: 0.85rem; margin: 0; padding-left: 1.1rem; }
</style>
</head>
<body>
<header>
  <h1>LockBench console</h1>
  <span id="link" role="status" aria-live="polite">connecting…</span>
</header>
<main>
  <div>
    <section aria-labelledby="lock-heading">
      <h2 id="lock-heading">Lock</h2>
      <dl>
        <dt>State</dt><dd id="lock-state">no started event yet</dd>
        <dt>Certification</dt><dd id="lock-certification">unknown</dd>
        <dt>Bolt</dt><dd id="lock-bolt">unknown</dd>
        <dt>Audit chain</dt><dd id="lock-audit">unknown</dd>
        <dt>Clock</dt><dd id="lock-clock">unknown</dd>
        <dt>Decisions</dt><dd id="counts">0 granted, 0 denied</dd>
        <dt>Last decision</dt><dd id="last">none</dd>
      </dl>
    </section>
    <section aria-labelledby="latency-heading" style="margin-top:1rem">
      <h2 id="latency-heading">Latency</h2>
      <svg id="latency" width="100%" viewBox="0 0 320 170" role="img" aria-labelledby="latency-title">
        <title id="latency-title">Arrival to decision of every tap, as a cumulative distribution: FAST solid, standard dashed</title>
      </svg>
      <p id="latency-text" class="mono" style="margin:0.3rem 0 0 0">no decisions yet</p>
    </section>
    <section aria-labelledby="radio-heading" style="margin-top:1rem">
      <h2 id="radio-heading">Radios</h2>
      <dl id="radio-state" aria-label="each radio's state"></dl>
      <ul id="radio" aria-live="off"></ul>
    </section>
  </div>
  <section aria-labelledby="tx-heading">
    <h2 id="tx-heading">Transactions</h2>
    <table>
      <caption class="visually-hidden" style="text-align:left;color:#555;font-size:0.85rem">newest first; times on the lock's clock</caption>
      <thead><tr><th scope="col">Time</th><th scope="col">Radio</th><th scope="col">Decision</th><th scope="col">Reason</th><th scope="col">Credential</th><th scope="col">Path</th><th scope="col">ms</th><th scope="col">APDUs</th></tr></thead>
      <tbody id="transactions" aria-live="polite"></tbody>
    </table>
  </section>
  <section id="conformance" aria-labelledby="conformance-heading" hidden style="grid-column: 1 / -1">
    <h2 id="conformance-heading">Conformance</h2>
    <p id="conformance-progress" role="status" aria-live="polite">no run yet</p>
    <p id="conformance-summary"></p>
    <table>
      <caption class="visually-hidden">each check as it ends, in order, with the official case it mirrors</caption>
      <thead><tr><th scope="col">#</th><th scope="col">Check</th><th scope="col">Official case</th><th scope="col">Result</th><th scope="col">Reason</th><th scope="col">s</th></tr></thead>
      <tbody id="conformance-results"></tbody>
    </table>
  </section>
</main>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
let granted = 0, denied = 0;
function text(value) { return value === undefined || value === null ? "" : String(value); }
function cell(row, value, cls) { const td = document.createElement("td"); td.textContent = text(value); if (cls) td.className = cls; row.appendChild(td); }
function reset() { granted = 0; denied = 0; latencies.FAST = []; latencies.standard = []; plot(); $("latency-text").textContent = "no decisions yet"; $("transactions").replaceChildren(); $("radio").replaceChildren(); $("radio-state").replaceChildren(); $("counts").textContent = "0 granted, 0 denied"; }
// Each radio's state, from its last event that changes it.
const radioWords = { "loop-started": "listening", "reader-opened": "reader open, polling", "advertising": "advertising",
                     "card-arrived": "card in the field", "card-removed": "polling", "card-ignored": "card ignored",
                     "reader-lost": "READER LOST, reopening", "transaction-failed": "transaction failed; polling" };
function radioState(radio, what) {
  if (!(what in radioWords)) return;
  let value = document.getElementById("radio-" + radio);
  if (!value) {
    const term = document.createElement("dt");
    term.textContent = radio;
    value = document.createElement("dd");
    value.id = "radio-" + radio;
    $("radio-state").append(term, value);
  }
  value.textContent = radioWords[what];
}
// Every decision's milliseconds, drawn as a cumulative distribution per path (SVG, no library):
// the whole spread and the tail, as `lockbench-bench nfc --plot` draws it.
const latencies = { FAST: [], standard: [] };
function plot() {
  const svg = $("latency"), ns = "http://www.w3.org/2000/svg";
  [...svg.querySelectorAll("polyline, text, line")].forEach((e) => e.remove());
  const all = latencies.FAST.concat(latencies.standard);
  if (all.length === 0) return;
  let top = 1;
  while (top < Math.max(...all)) top = top * (String(top)[0] === "2" ? 2.5 : 2);
  const x = (ms) => 40 + (ms / top) * 270, y = (share) => 10 + (1 - share) * 130;
  const add = (name, attrs, content) => { const e = document.createElementNS(ns, name); for (const k in attrs) e.setAttribute(k, attrs[k]); if (content !== undefined) e.textContent = content; svg.appendChild(e); return e; };
  add("line", { x1: 40, y1: 140, x2: 310, y2: 140, stroke: "#888" });
  add("line", { x1: 40, y1: 10, x2: 40, y2: 140, stroke: "#888" });
  add("text", { x: 40, y: 156, "font-size": 10, "text-anchor": "middle" }, "0");
  add("text", { x: 310, y: 156, "font-size": 10, "text-anchor": "end" }, top + " ms");
  add("text", { x: 36, y: 14, "font-size": 10, "text-anchor": "end" }, "100%");
  const summary = [];
  for (const [path, dash, colour] of [["FAST", "", "#0b6b2f"], ["standard", "5 3", "#1f5fa8"]]) {
    const xs = latencies[path].slice().sort((a, b) => a - b);
    if (xs.length === 0) continue;
    const points = [x(xs[0]) + "," + y(0)].concat(xs.map((ms, i) => x(ms) + "," + y((i + 1) / xs.length)));
    add("polyline", { points: points.join(" "), fill: "none", stroke: colour, "stroke-width": 2, "stroke-dasharray": dash, "data-name": path });
    summary.push(path + ": n=" + xs.length + ", median " + xs[Math.floor((xs.length - 1) / 2)] + " ms, max " + xs[xs.length - 1] + " ms");
  }
  $("latency-text").textContent = summary.join("; ");
}
function audit(chain) {
  if (!chain) return;
  $("lock-audit").textContent = (chain.damage ? "DAMAGED at start (" + chain.damage + "); " : "intact; ") + chain.entries + " entries, head " + chain.head + "…";
}
function show(event) {
  audit(event.audit);
  if (event.bolt) $("lock-bolt").textContent = event.bolt + " (after the last decision)";
  if (event.kind === "started") {
    $("lock-state").textContent = event.message;
    if (event.lock) {
      $("lock-certification").textContent = event.lock.model + " " + event.lock.firmware + ": " + event.lock.certification;
      $("lock-bolt").textContent = event.lock.bolt;
      $("lock-clock").textContent = (event.lock.clockTrusted ? "trusted" : "NOT trusted") + ", " + event.lock.clock;
    }
    return;
  }
  if (event.kind === "granted" || event.kind === "denied") {
    const row = document.createElement("tr");
    row.className = event.kind;
    row.dataset.transaction = text(event.transaction);
    cell(row, text(event.time).replace("T", " ").replace("Z", ""), "mono");
    cell(row, event.radio);
    cell(row, event.kind === "granted" ? "GRANTED" : "DENIED", "decision");
    cell(row, event.kind === "granted" ? "" : [event.reason, event.detail].filter(Boolean).join(": "));
    cell(row, event.credential, "mono");
    cell(row, [event.fast ? "FAST" : "standard", event.stepUp ? "step-up" : ""].filter(Boolean).join(", "));
    cell(row, event.milliseconds);
    cell(row, "", "apdus");
    $("transactions").prepend(row);
    if (event.kind === "granted") granted++; else denied++;
    if (typeof event.milliseconds === "number") { latencies[event.fast ? "FAST" : "standard"].push(event.milliseconds); plot(); }
    $("counts").textContent = granted + " granted, " + denied + " denied";
    $("last").textContent = event.message;
    return;
  }
  if (event.kind === "apdus") {
    const row = [...$("transactions").children].find((r) => r.dataset.transaction === text(event.transaction));
    if (!row) return;
    const details = document.createElement("details");
    const summary = document.createElement("summary");
    summary.textContent = event.apdus.length + " APDUs";
    const list = document.createElement("ol");
    for (const a of event.apdus) {
      const item = document.createElement("li");
      item.textContent = (a.direction === "reader → phone" ? "→ " : "← ") + a.meaning;
      item.title = a.hex;
      if (Array.isArray(a.opened) && a.opened.length > 0) {
        const clear = document.createElement("pre");
        clear.className = "opened";
        clear.setAttribute("aria-label", "decrypted " + text(a.label) + " payload");
        clear.textContent = "decrypted by the lock:\n" + a.opened.map(text).join("\n");
        item.appendChild(clear);
      }
      list.appendChild(item);
    }
    details.append(summary, list);
    row.querySelector("td.apdus").replaceChildren(details);
    return;
  }
  if (event.kind === "radio" && event.radio) radioState(event.radio, event.radioEvent);
  const li = document.createElement("li");
  li.textContent = text(event.time).slice(11, 19) + " " + (event.radio ? event.radio + ": " : "") + event.message;
  $("radio").prepend(li);
  while ($("radio").children.length > 50) $("radio").lastChild.remove();
}
const source = new EventSource("/events");
source.onopen = () => { reset(); $("link").textContent = "connected to the console"; };
source.onerror = () => { $("link").textContent = "console unreachable; retrying"; };
source.onmessage = (m) => { try { show(JSON.parse(m.data)); } catch (e) { /* not an event: skip it */ } };
// Conformance runs, when the console follows their socket (`console --conformance`).
const verdicts = { pass: "PASS", fail: "FAIL", not_applicable: "N/A", not_run: "NOT RUN" };
function conformance(event) {
  const section = $("conformance");
  if (event.kind === "conformance-started") {
    section.hidden = false;
    section.dataset.total = text(event.total);
    delete section.dataset.finished;
    $("conformance-results").replaceChildren();
    $("conformance-summary").textContent = "";
    $("conformance-progress").textContent = event.direction + " conformance over " + event.transport + ": 0/" + event.total + " checks";
    return;
  }
  if (event.kind === "check" && event.result) {
    const r = event.result, advisory = r.advisory && r.status === "fail";
    const row = document.createElement("tr");
    row.className = advisory ? "warn" : r.status === "fail" ? "fail" : r.status === "pass" ? "pass" : "other";
    row.dataset.status = text(r.status);
    cell(row, event.index + 1);
    cell(row, r.id, "mono");
    cell(row, r.officialCase || (r.advisory ? "advisory (LockBench's own rule)" : ""), "mono");
    cell(row, advisory ? "WARN" : verdicts[r.status] || text(r.status), "verdict");
    cell(row, r.reason);
    cell(row, typeof r.seconds === "number" ? r.seconds.toFixed(2) : "");
    $("conformance-results").appendChild(row);
    $("conformance-progress").textContent = "checks " + (event.index + 1) + "/" + event.total + " · " + r.id;
    return;
  }
  if (event.kind === "conformance-finished") {
    section.dataset.finished = event.interrupted ? "interrupted" : "yes";
    for (const k of ["passed", "failed", "advisoriesFailed", "notApplicable", "notRun"]) section.dataset[k] = text(event[k]);
    $("conformance-summary").textContent = event.summary + (event.interrupted ? " (interrupted)" : "");
    $("conformance-progress").textContent = event.interrupted ? "run interrupted" : "run finished";
    return;
  }
  if (event.kind === "console" && section.dataset.total && !section.dataset.finished) $("conformance-progress").textContent = event.message;
}
fetch("/healthz").then((r) => r.json()).then((health) => {
  if (!("conformance" in health)) return;
  $("conformance").hidden = false;
  const runs = new EventSource("/conformance/events");
  runs.onmessage = (m) => { try { conformance(JSON.parse(m.data)); } catch (e) { /* not an event: skip it */ } };
}).catch(() => {});
</script>
</body>
</html>
"""#
}
