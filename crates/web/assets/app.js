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

  var start = document.getElementById("start");
  var refusal = document.getElementById("refusal");

  function fmt(v) { return v >= 100 ? v.toFixed(0) : v.toFixed(2); }
  function setRunning(on) {
    live.setAttribute("data-running", on ? "1" : "0");
    if (stop) { stop.hidden = !on; stop.disabled = false; }
    // One mark at a time: Start waits until this one ends.
    if (start) {
      start.disabled = on;
      start.title = on ? "a mark is running: stop it or wait" : "";
    }
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
  // How a mark ended, in the words of the page (web::Ending): a sentence, the run kept as a
  // link, a full stop.
  function ending(kind, runId, message) {
    var kept = runId !== null && runId !== undefined;
    if (kind === "failed") {
      return kept ? ["Failed: " + message + ". The part that ran is kept as ", runId] : ["Failed: " + message + ".", null];
    }
    if (kind === "stopped") {
      return kept ? ["Stopped: the part that ran is kept as ", runId]
                  : ["Stopped before anything was measured: nothing kept.", null];
    }
    return kept ? ["Done: stored as ", runId] : ["Done (not recorded).", null];
  }
  function showEnd(kind, runId, message, prefix) {
    setRunning(false);
    var e = ending(kind, runId, message);
    status.textContent = (prefix || "") + e[0];
    status.setAttribute("data-ended", kind);
    if (e[1] !== null) {
      var a = document.createElement("a");
      a.href = "/runs/" + e[1];
      a.textContent = "run " + e[1];
      status.appendChild(a);
      status.appendChild(document.createTextNode("."));
    }
    phase.textContent = kind === "done" ? "finished" : kind;
    tick.textContent = "";
  }
  function snapshot(s) {
    body.textContent = "";
    notices.textContent = "";
    status.removeAttribute("data-ended");
    tick.textContent = "";
    setRunning(!!s.running);
    var ended = !s.running && s.done !== null && s.done !== undefined;
    if (ended) {
      // A mark that ended is not the current one: a fresh card, and one line about it.
      var kind = s.error ? "failed" : (s.stopped ? "stopped" : "done");
      showEnd(kind, s.done, s.error, s.target ? "Last mark, on " + s.target + ": " : "");
      phase.textContent = "idle";
      return;
    }
    (s.tests || []).forEach(row);
    (s.cells || []).forEach(fill);
    (s.notices || []).forEach(notice);
    phase.textContent = s.phase || (s.running ? "starting\u2026" : "idle");
    status.textContent = s.running ? "Running on " + (s.target || "?") + "." : "";
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
  on(es, "plan", function (p) {
    p.tests.forEach(row); setRunning(true);
    status.removeAttribute("data-ended");
    status.textContent = "Running on " + p.target + ".";
  });
  on(es, "phase", function (p) { phase.textContent = p.label; setRunning(true); });
  on(es, "tick", function (t) { tick.textContent = "\u2014 " + fmt(t.mb_s) + " MB/s, " + t.iops.toFixed(0) + " IOPS"; });
  on(es, "cell", fill);
  on(es, "notice", function (n) { notice(n.text); });
  on(es, "done", function (d) { showEnd("done", d.run_id); });
  on(es, "stopped", function (d) { showEnd("stopped", d.run_id); });
  on(es, "error", function (e) { showEnd("failed", e.run_id, e.message); });

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

  function refuse(text) {
    if (!refusal) { status.textContent = text; return; }
    refusal.textContent = text;
    refusal.hidden = !text;
  }

  if (form) {
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      if (start && start.disabled) return;
      var v = function (id) { var el = document.getElementById(id); return el ? el.value : ""; };
      var req = {
        target: v("target"), profile: v("profile"), size: v("size"),
        quick: document.getElementById("quick").checked, destroy_data: v("destroy_data")
      };
      refuse("");
      if (start) start.disabled = true;
      post("/api/marks", req).then(function (r) {
        if (!r.ok) {
          // A refusal is about this request: the state of a mark that runs stays as it is.
          if (start && live.getAttribute("data-running") !== "1") start.disabled = false;
          refuse("Not started: " + r.message);
          return;
        }
        setRunning(true);
      }, function (err) {
        if (start) start.disabled = false;
        refuse("Not started: " + err);
      });
    });
  }
  if (stop) {
    stop.addEventListener("click", function (e) {
      e.preventDefault();
      stop.disabled = true;
      post("/api/marks/current/stop").then(function (r) {
        if (!r.ok) { stop.disabled = false; refuse(r.message); }
        else { phase.textContent = "stopping\u2026"; tick.textContent = ""; }
      });
    });
  }
})();
