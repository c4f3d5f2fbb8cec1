// diskmeter serve: the live mark card and the Stop button. Every other page works without it.
"use strict";
(function () {
  var live = document.getElementById("live");
  if (!live) return;
  var meta = document.querySelector('meta[name="csrf"]');
  var csrf = meta ? meta.getAttribute("content") : "";
  var body = document.getElementById("card-body");
  var phase = document.getElementById("phase");
  var tick = document.getElementById("tick");
  var status = document.getElementById("status");
  var notices = document.getElementById("notices");
  var stop = document.getElementById("stop");
  var form = document.getElementById("mark-form");
  var DIRS = ["read", "write"];

  function fmt(v) { return v >= 100 ? v.toFixed(0) : v.toFixed(2); }
  function setRunning(on) {
    live.setAttribute("data-running", on ? "1" : "0");
    if (stop) stop.hidden = !on;
  }
  function row(test) {
    var rows = body.querySelectorAll("tr");
    for (var i = 0; i < rows.length; i++) {
      if (rows[i].getAttribute("data-test") === test) return rows[i];
    }
    var tr = document.createElement("tr");
    tr.setAttribute("data-test", test);
    var th = document.createElement("th");
    th.textContent = test;
    tr.appendChild(th);
    DIRS.forEach(function (d) {
      var td = document.createElement("td");
      td.className = "cell";
      td.setAttribute("data-test", test);
      td.setAttribute("data-dir", d);
      td.textContent = "\u2013";
      tr.appendChild(td);
    });
    body.appendChild(tr);
    return tr;
  }
  function fill(c) {
    var tr = row(c.test);
    var td = tr.querySelector('td[data-dir="' + c.direction + '"]');
    if (!td) return;
    td.textContent = fmt(c.mb_s);
    td.title = c.iops.toFixed(0) + " IOPS, " + c.lat_us.toFixed(1) + " \u00b5s mean latency";
    td.setAttribute("data-filled", "1");
  }
  function showDone(runId) {
    setRunning(false);
    status.textContent = "";
    if (runId !== null && runId !== undefined) {
      status.appendChild(document.createTextNode("Done: stored as "));
      var a = document.createElement("a");
      a.href = "/runs/" + runId;
      a.textContent = "run " + runId;
      status.appendChild(a);
      status.appendChild(document.createTextNode("."));
    } else {
      status.textContent = "Done (not recorded).";
    }
    tick.textContent = "";
  }
  function snapshot(s) {
    body.textContent = "";
    notices.textContent = "";
    (s.tests || []).forEach(row);
    (s.cells || []).forEach(fill);
    (s.notices || []).forEach(notice);
    phase.textContent = s.phase || (s.running ? "starting\u2026" : "idle");
    tick.textContent = "";
    setRunning(!!s.running);
    if (s.error) { status.textContent = "Failed: " + s.error; }
    else if (s.done !== null && s.done !== undefined) { showDone(s.done); }
    else if (s.running) { status.textContent = "Running on " + (s.target || "?") + "."; }
    else { status.textContent = ""; }
  }
  function notice(text) {
    var li = document.createElement("li");
    li.textContent = text;
    notices.appendChild(li);
  }
  function on(es, name, fn) {
    es.addEventListener(name, function (e) {
      if (!e.data) return; // a connection error, not the mark's
      fn(JSON.parse(e.data));
    });
  }

  var es = new EventSource("/api/marks/current/events");
  on(es, "snapshot", snapshot);
  on(es, "plan", function (p) { p.tests.forEach(row); setRunning(true); status.textContent = "Running on " + p.target + "."; });
  on(es, "phase", function (p) { phase.textContent = p.label; setRunning(true); });
  on(es, "tick", function (t) { tick.textContent = "\u2014 " + fmt(t.mb_s) + " MB/s, " + t.iops.toFixed(0) + " IOPS"; });
  on(es, "cell", fill);
  on(es, "notice", function (n) { notice(n.text); });
  on(es, "done", function (d) { phase.textContent = "finished"; showDone(d.run_id); });
  on(es, "error", function (e) { setRunning(false); phase.textContent = "failed"; status.textContent = "Failed: " + e.message; });

  function post(url, payload) {
    return fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Csrf-Token": csrf },
      body: JSON.stringify(payload || {}),
      credentials: "same-origin"
    }).then(function (r) {
      return r.text().then(function (t) {
        var msg = t;
        try { msg = JSON.parse(t).error || ""; } catch (e) { /* plain text */ }
        return { ok: r.ok, status: r.status, message: msg };
      });
    });
  }

  if (form) {
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var v = function (id) { var el = document.getElementById(id); return el ? el.value : ""; };
      var req = {
        target: v("target"), profile: v("profile"), size: v("size"),
        quick: document.getElementById("quick").checked, destroy_data: v("destroy_data")
      };
      status.textContent = "Starting\u2026";
      post("/api/marks", req).then(function (r) {
        if (!r.ok) { status.textContent = "Not started (" + r.status + "): " + r.message; return; }
        setRunning(true);
      }, function (err) { status.textContent = "Not started: " + err; });
    });
  }
  if (stop) {
    stop.addEventListener("click", function (e) {
      e.preventDefault();
      stop.disabled = true;
      post("/api/marks/current/stop").then(function (r) {
        stop.disabled = false;
        if (!r.ok) status.textContent = r.message;
        else status.textContent = "Stopping\u2026";
      });
    });
  }
})();
